import { z } from 'zod'
import type { WorkflowRunCursor, WorkflowRunPage } from '../../../../shared/types/workflow-run'

const STATUSES = ['streaming', 'complete', 'error', 'aborted', 'rejected'] as const
const time = z.coerce.number().int().min(0).max(8.64e15)

const querySchema = z.object({
  workflowId: z.string().regex(/^[\w-]{1,100}$/, 'must be a workflow id').optional(),
  status: z.string().max(100).transform(value => value.split(',').filter(Boolean)).pipe(z.array(z.enum(STATUSES, { message: `each status must be one of ${STATUSES.join(', ')}` })).max(STATUSES.length)).optional(),
  from: time.optional(),
  to: time.optional(),
  limit: z.coerce.number().int().min(1).max(100).optional(),
  cursor: z.string().max(200).optional(),
})

/** The `cursor` of a page: where the previous page ended, as the list gave it. */
function readCursor(cursor: string): WorkflowRunCursor | undefined {
  try {
    const parsed = z.object({ startedAt: time, jobId: z.string().regex(/^[\w-]{1,100}$/) }).safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')))
    return parsed.success ? parsed.data : undefined
  } catch {
    return undefined
  }
}

/**
 * The session user's workflow runs, newest first, kept for the retention in days:
 * `?workflowId=`, `?status=error,rejected`, `?from=` and `?to=` (start times, ms), `?limit=` (25,
 * at most 100), `?cursor=` (a page's `nextCursor`).
 */
export default defineEventHandler(async (event): Promise<WorkflowRunPage> => {
  const user = await requireSessionUser(event)
  const query = await getValidatedQuery(event, raw => querySchema.safeParse(raw))
  if (!query.success) throw createError({ statusCode: 400, statusMessage: `Invalid query: ${z.prettifyError(query.error).replaceAll('\n', ' ')}` })
  const { workflowId, status, from, to, limit = 25, cursor } = query.data
  const after = cursor === undefined ? undefined : readCursor(cursor)
  if (cursor !== undefined && !after) throw createError({ statusCode: 400, statusMessage: 'Invalid query: cursor is not one this list gave; start again without it.' })
  const page = await useBackgroundJobs().workflowRuns.list({ userId: user.id, workflowId, statuses: status, startedFrom: from, startedBefore: to, after, limit })
  return { runs: page.runs, ...(page.next ? { nextCursor: Buffer.from(JSON.stringify(page.next)).toString('base64url') } : {}) }
})
