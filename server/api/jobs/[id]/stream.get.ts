/**
 * A job's live events as server-sent events. Reconnects with `Last-Event-ID` (or
 * `?lastEventId=`) continue exactly where they left off.
 */
export default defineEventHandler(async (event) => {
  const job = await requireOwned(event, 'job', getRouterParam(event, 'id'))
  return serveJobStream(event, job)
})
