import { z } from 'zod'

/** `?wait=<seconds>`: answer with the run's result if it ends within that long (at most 60). */
const querySchema = z.object({ wait: z.coerce.number().int().min(0).max(60).default(0) })

/** A webhook's body: the workflow's named inputs by name, or `{prompt}` for a workflow without inputs. */
const bodySchema = z.record(z.string().max(40), z.unknown()).refine(body => Object.keys(body).length <= 21, 'at most 20 inputs (and a prompt)')

/**
 * A workflow's inbound webhook: the URL's token is its secret (and, when the owner asked for it,
 * a signature: Standard Webhooks' headers, or the body's HMAC-SHA256 in their header); the JSON body is the run's inputs (or
 * `{prompt}`), checked like the run form's (400 naming the input). Starts a run as the workflow's
 * owner, counted against their limits, and answers 202 `{ jobId, status, runPath }` at once.
 * A repeat of a delivery (a signed call's `webhook-id` or signed body, an unsigned call's
 * `Idempotency-Key`) answers 200 with the run the first started (`Idempotent-Replayed: true`)
 * instead of starting another, even when the two arrive at once or the server restarted between them. With `?wait=<seconds>` (up to 60) it
 * waits for the run: 200 with its `status` and `output` (or `error`) if it ended in time, else 202 as before.
 * 401 for an unknown token or a bad signature, 403 while the owner's account is disabled, 429 past the hook's rate. No cookie is read, so the
 * browser origin check does not apply; the size limits do.
 */
export default defineEventHandler(async (event) => {
  const query = await getValidatedQuery(event, raw => querySchema.safeParse(raw))
  if (!query.success) throw createError({ statusCode: 400, statusMessage: 'Invalid query', message: 'wait is a number of seconds from 0 to 60.' })
  let text = ''
  const body = await readJsonBody(event, bodySchema, { onText: received => (text = received) })
  const { webhooks, saved } = useWorkflows()
  // Its refusals (401, 429 with Retry-After) are answered by the error handler.
  const hook = await webhooks.admit(getRouterParam(event, 'token') ?? '', text, name => getRequestHeader(event, name))
  const workflow = await saved.getWorkflow(hook.workflowId)
  if (!workflow || workflow.userId !== hook.userId) throw createError({ statusCode: 401, statusMessage: 'Webhook refused', message: 'No webhook answers to this URL: its workflow was deleted.' })
  const owner = await useAccounts().policyPrincipal(hook.userId)
  if (owner.disabled) throw createError({ statusCode: 403, statusMessage: 'Webhook refused', message: 'The account that owns this workflow is disabled; its webhook starts nothing until an admin enables it again.' })
  const replay = async () => {
    // The run is the job while it is kept, then its entry in the run history.
    const earlier = hook.runId ? await useBackgroundJobs().workflowRuns.get(hook.runId) : null
    if (!earlier || earlier.workflowId !== workflow.id) return null
    setResponseHeader(event, 'Idempotent-Replayed', 'true')
    return { jobId: earlier.jobId, status: earlier.status, runPath: `/workflows/runs/${earlier.jobId}` }
  }
  const earlier = await replay()
  if (earlier) return earlier
  const { prompt, ...inputs } = body
  const declared = (workflow.definition.inputs ?? []).length > 0
  try {
    const job = await startWorkflowRun(event, workflow, {
      ...(typeof prompt === 'string' ? { prompt } : {}),
      ...(declared ? { inputs } : {}),
      byWebhook: { id: owner.userId, name: owner.name ?? 'Guest', role: owner.role },
      ...(hook.runId ? { jobId: hook.runId } : {}),
    })
    if (query.data.wait > 0) {
      const ended = await resultWithin(job.id, query.data.wait * 1000)
      if (ended) return ended
    }
    setResponseStatus(event, 202)
    return { jobId: job.id, status: job.status, runPath: `/workflows/runs/${job.id}` }
  } catch (error) {
    // A retry that arrived while the first was starting lost the race for the id: answer with the first's run.
    const first = await replay()
    if (first) return first
    throw error
  }
})

/** The run's result if it ends within `ms` (it runs here: it was just started), else null. */
async function resultWithin(jobId: string, ms: number): Promise<{ jobId: string, status: string, runPath: string, output?: string, error?: string } | null> {
  const jobs = useBackgroundJobs()
  let timer: ReturnType<typeof setTimeout> | undefined
  await Promise.race([jobs.runs.settled(jobId), new Promise(resolve => (timer = setTimeout(resolve, ms)))])
  clearTimeout(timer)
  const run = await jobs.workflowRuns.get(jobId)
  if (!run || run.status === 'streaming') return null
  return { jobId, status: run.status, runPath: `/workflows/runs/${jobId}`, ...(run.status === 'complete' ? { output: run.job.content } : { error: run.error?.message ?? 'The run did not complete.' }) }
}
