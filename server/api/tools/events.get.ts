/** Server-sent events telling an open page that the tools changed (it then reads GET /api/tools again). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return useLiveEvents().serveToolChanges(event, user.id, event.context.clientAddress)
})
