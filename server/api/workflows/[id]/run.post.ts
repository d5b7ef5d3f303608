import { z } from 'zod'

const bodySchema = z.object({
  prompt: z.string().max(100_000, 'a prompt is at most 100,000 characters').optional(),
  /** The workflow's named inputs, by name (checked against what it declares). */
  inputs: z.record(z.string().max(40), z.unknown()).refine(inputs => Object.keys(inputs).length <= 20, 'at most 20 inputs').optional(),
  /** "Run again": the run whose inputs these are (recorded with the new run). */
  rerunOf: z.string().regex(/^[\w-]{1,100}$/, 'must be a run id').optional(),
}).strict()

/** Starts a run as a background job (`{prompt}`, or `{inputs}` for a workflow that declares them; `rerunOf`: the run it repeats): `{ jobId, status }`; watch it at `/api/jobs/:jobId/stream`. */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, bodySchema)
  // The run it repeats is one of this person's too (404 like any other id of another's).
  if (body.rerunOf) await requireOwned(event, 'workflowRun', body.rerunOf)
  const job = await startWorkflowRun(event, workflow, body)
  setResponseStatus(event, 202)
  return { jobId: job.id, status: job.status }
})
