/** Lists the enabled tools (what a model may be offered, with their sources), each MCP server's state, and (admins) the dynamic tools directory's files. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const catalog = await listToolSummaries()
  // The dynamic directory's path and its files' load errors are for admins.
  return user.role === 'admin' ? catalog : { ...catalog, dynamicTools: null }
})
