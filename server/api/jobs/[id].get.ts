import { z } from 'zod'

const querySchema = z.object({
  offset: z.coerce.number().int().min(0).max(1_000_000_000).optional(),
  limit: z.coerce.number().int().min(1).max(1_000_000).optional(),
})

/** One job in full (text paged by `?offset=` and `?limit=` characters); live progress comes from `/api/jobs/:id/stream`. */
export default defineEventHandler(async (event) => {
  const job = await requireOwned(event, 'job', getRouterParam(event, 'id'))
  const query = await getValidatedQuery(event, raw => querySchema.safeParse(raw))
  if (!query.success) throw createError({ statusCode: 400, statusMessage: 'Invalid query', message: `Invalid query: ${z.prettifyError(query.error).replaceAll('\n', ' ')}` })
  return await viewJob(job, query.data)
})
