/** Deletes one of the session user's memories (404 for one that is not theirs or not there). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const removed = await usePersonal().memory.remove(user.id, [getRouterParam(event, 'id') ?? ''])
  if (removed.length === 0) throw createError({ statusCode: 404, statusMessage: 'Not found', message: 'There is no memory by that id (it may have been deleted).' })
  return { deleted: true }
})
