/** Removes an MCP server an admin added (its session closes and its tools go). Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  await useToolSources().mcpCatalog.remove(getRouterParam(event, 'name') ?? '')
  return { deleted: true }
})
