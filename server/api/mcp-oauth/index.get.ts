/** The MCP servers that sign in with OAuth, and where the person stands with each (tokens never leave the server). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return { servers: await useToolSources().authorizations.list(user.id) }
})
