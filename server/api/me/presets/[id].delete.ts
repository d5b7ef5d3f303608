/** Deletes one of the session user's presets (chats set from it keep their settings). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  if (!await usePersonal().settings.deletePreset(user.id, getRouterParam(event, 'id') ?? '')) throw createError({ statusCode: 404, statusMessage: 'Not found', message: 'You have no such preset.' })
  return { deleted: true }
})
