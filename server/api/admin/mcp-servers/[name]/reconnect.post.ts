/** Connects to an MCP server again now (waiting out no backoff) and answers its state after the attempt. Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  return useToolSources().mcpCatalog.reconnect(getRouterParam(event, 'name') ?? '')
})
