/** Every MCP server (the config file's and the admin's) with its settings, secrets masked, and its state. Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  return useToolSources().mcpCatalog.list()
})
