import { z } from 'zod'

const querySchema = z.object({
  unread: z.enum(['true', 'false', '1', '0']).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
})

/** The session user's job notifications, newest first (`?unread=true` for unread only). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const query = await getValidatedQuery(event, raw => querySchema.safeParse(raw))
  if (!query.success) throw createError({ statusCode: 400, statusMessage: `Invalid query: ${z.prettifyError(query.error).replaceAll('\n', ' ')}` })
  const unreadOnly = query.data.unread === 'true' || query.data.unread === '1'
  const notifications = await useBackgroundJobs().store.notifications.list(user.id, { unreadOnly, limit: query.data.limit })
  return { notifications }
})
