import { z } from 'zod'

const bodySchema = z.object({
  /** Notifications to mark read; omit to mark all of them. */
  ids: z.array(z.string().min(1).max(100)).max(500).optional(),
}).strict()

/** Marks the session user's notifications read. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, bodySchema, { allowEmpty: true })
  const marked = await useBackgroundJobs().store.notifications.markRead(user.id, body.ids)
  return { marked }
})
