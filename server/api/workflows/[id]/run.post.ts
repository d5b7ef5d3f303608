import { z } from 'zod'

const bodySchema = z.object({ prompt: z.string().trim().min(1, 'give the workflow a prompt').max(100_000) }).strict()

/** Starts a run as a background job: `{ jobId, status }`; watch it at `/api/jobs/:jobId/stream`. */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwnedWorkflow(event, getRouterParam(event, 'id'))
  const body = await readValidatedBody(event, raw => bodySchema.safeParse(raw))
  if (!body.success) throw createError({ statusCode: 400, statusMessage: `Invalid request: ${z.prettifyError(body.error).replaceAll('\n', ' ')}` })
  const job = await startWorkflowRun(event, workflow, body.data.prompt)
  setResponseStatus(event, 202)
  return { jobId: job.id, status: job.status }
})
