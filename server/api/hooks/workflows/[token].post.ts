import { z } from 'zod'

/** A webhook's body: the workflow's named inputs by name, or `{prompt}` for a workflow without inputs. */
const bodySchema = z.record(z.string().max(40), z.unknown()).refine(body => Object.keys(body).length <= 21, 'at most 20 inputs (and a prompt)')

/**
 * A workflow's inbound webhook: the URL's token is its secret (and, when the owner asked for it,
 * the body's HMAC-SHA256 signature in their header); the JSON body is the run's inputs (or
 * `{prompt}`), checked like the run form's (400 naming the input). Starts a run as the workflow's
 * owner, counted against their limits, and answers 202 `{ jobId, status, runPath }` at once.
 * With an `Idempotency-Key` header, a retry of a call (same hook, same key) answers 200 with the
 * run the first started (`Idempotent-Replayed: true`) instead of starting another, even when the
 * two arrive at once or the server restarted between them.
 * 401 for an unknown token or a bad signature, 403 while the owner's account is disabled, 429 past the hook's rate. No cookie is read, so the
 * browser origin check does not apply; the size limits do.
 */
export default defineEventHandler(async (event) => {
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
    setResponseStatus(event, 202)
    return { jobId: job.id, status: job.status, runPath: `/workflows/runs/${job.id}` }
  } catch (error) {
    // A retry that arrived while the first was starting lost the race for the id: answer with the first's run.
    const first = await replay()
    if (first) return first
    throw error
  }
})
