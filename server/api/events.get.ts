/** The browser's one live connection: every job its tabs watch and the tools' changes (shared/types/live-events.ts). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  return useLiveEvents().open(event, user.id, event.context.clientAddress)
})
