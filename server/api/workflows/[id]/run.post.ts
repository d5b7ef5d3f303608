import { z } from 'zod'

const bodySchema = z.object({ prompt: z.string().trim().min(1, 'give the workflow a prompt').max(100_000) }).strict()

/** Starts a run as a background job: `{ jobId, status }`; watch it at `/api/jobs/:jobId/stream`. */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, bodySchema)
  const job = await startWorkflowRun(event, workflow, body.prompt)
  setResponseStatus(event, 202)
  return { jobId: job.id, status: job.status }
})
