/** The body of `POST /api/events/:streamId` (shared/types/live-events.ts), bounded. */
import { z } from 'zod'

/** Jobs one change names at most (each list). */
export const MAX_LIVE_CHANGE_ITEMS = 50

const jobId = z.string().min(1).max(100)

export const liveEventsChangeSchema = z.object({
  watch: z.array(z.object({ jobId, lastEventId: z.string().max(40).optional() }).strict()).max(MAX_LIVE_CHANGE_ITEMS).optional(),
  unwatch: z.array(jobId).max(MAX_LIVE_CHANGE_ITEMS).optional(),
}).strict()
