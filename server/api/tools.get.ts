/** Lists the enabled tools (what a model may be offered, with their sources), each MCP server's state, and (admins) the dynamic tools directory's files. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return useToolSources().catalog({ admin: user.role === 'admin' })
})
