import { liveEventsChangeSchema } from '../../../shared/schemas/live-events'

/** Changes which jobs a live connection carries: `{ watch: [{ jobId, lastEventId? }], unwatch: [jobId] }` (at most 50 of each). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const change = await readJsonBody(event, liveEventsChangeSchema)
  return useLiveEvents().change(getRouterParam(event, 'streamId') ?? '', user.id, change)
})
