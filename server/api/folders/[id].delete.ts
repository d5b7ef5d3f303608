/** Deletes a folder; its conversations stay, in no folder. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  if (!await usePersonal().settings.deleteFolder(user.id, getRouterParam(event, 'id') ?? '')) throw createError({ statusCode: 404, statusMessage: 'Not found', message: 'You have no such folder.' })
  return { deleted: true }
})
