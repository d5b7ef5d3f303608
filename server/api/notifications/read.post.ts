import { z } from 'zod'

const bodySchema = z.object({
  /** Notifications to mark read; omit to mark all of them. */
  ids: z.array(z.string().min(1).max(100)).max(500).optional(),
}).strict()

/** Marks the session user's notifications read. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readValidatedBody(event, raw => bodySchema.safeParse(raw ?? {}))
  if (!body.success) throw createError({ statusCode: 400, statusMessage: `Invalid request: ${z.prettifyError(body.error).replaceAll('\n', ' ')} Send { "ids": ["…"] } or {} for all.` })
  const marked = await useBackgroundJobs().store.markNotificationsRead(user.id, body.data.ids)
  return { marked }
})
