/** Deletes one of the session user's tools. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  await useToolSources().userTools.delete(user.id, getRouterParam(event, 'name') ?? '')
  return { deleted: true }
})
