import { z } from 'zod'

const querySchema = z.object({ days: z.coerce.number().int().min(1, 'days: at least 1').max(90, 'days: at most 90').default(30) })

/** Ratings of answers over the last `?days=` (default 30): counts per model and day, and the latest 👎 with their reasons (never the answers). Admins only. */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const query = await getValidatedQuery(event, raw => querySchema.safeParse(raw))
  if (!query.success) throw createError({ statusCode: 400, statusMessage: 'Invalid query', message: z.prettifyError(query.error).replaceAll('\n', ' ') })
  return usePersonal().feedback.report(query.data.days)
})
