import { z } from 'zod'

const querySchema = z.object({
  day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a UTC day such as 2026-11-22').optional(),
})

/** Tokens, credits and jobs per person on a UTC day (`?day=`, default today), most tokens first (admins only). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event, { role: 'admin' })
  const query = await getValidatedQuery(event, raw => querySchema.safeParse(raw))
  if (!query.success) throw createError({ statusCode: 400, statusMessage: `Invalid query: ${z.prettifyError(query.error).replaceAll('\n', ' ')}` })
  const day = query.data.day ?? new Date().toISOString().slice(0, 10)
  return { day, rows: await useAccounts().usage.on(day) }
})
