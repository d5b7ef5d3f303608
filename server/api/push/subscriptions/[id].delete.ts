/** Turns notifications off for one of the person's devices. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const id = getRouterParam(event, 'id') ?? ''
  if (!await usePersonal().push.unsubscribe(user.id, id)) throw createError({ statusCode: 404, statusMessage: 'No such device', message: 'Notifications are not on for that device (turned off already?).' })
  setResponseStatus(event, 204)
  return null
})
