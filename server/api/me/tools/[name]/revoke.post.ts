/** Takes back the approval of one of the session user's tools (it stays, and does not run). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  await useToolSources().userTools.revoke(user.id, getRouterParam(event, 'name') ?? '')
  return { approved: false }
})
