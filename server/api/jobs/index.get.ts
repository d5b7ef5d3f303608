import { z } from 'zod'

const querySchema = z.object({
  limit: z.coerce.number().int().min(1).max(200).optional(),
  status: z.enum(['streaming', 'waiting', 'complete', 'error', 'aborted', 'rejected']).optional(),
})

/** The session user's recent jobs, running ones first (`?limit=`, `?status=`; `waiting`: running jobs that wait for them). */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const query = await getValidatedQuery(event, raw => querySchema.safeParse(raw))
  if (!query.success) throw createError({ statusCode: 400, statusMessage: `Invalid query: ${z.prettifyError(query.error).replaceAll('\n', ' ')}` })
  return { jobs: await listJobSummaries(user.id, query.data) }
})
