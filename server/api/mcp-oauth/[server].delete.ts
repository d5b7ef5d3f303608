/** Forgets the person's authorisation with an MCP server (their tokens are deleted). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const sources = useToolSources()
  await sources.authorizations.disconnect(user.id, getRouterParam(event, 'server') ?? '')
  return { servers: await sources.authorizations.list(user.id) }
})
