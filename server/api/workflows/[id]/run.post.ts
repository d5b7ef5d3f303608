import { z } from 'zod'
import type { WorkflowDefinition } from '../../../lib/workflows/workflow-schema'

const bodySchema = z.object({ prompt: z.string().trim().min(1, 'give the workflow a prompt').max(100_000) }).strict()

/** Starts a run as a background job: `{ jobId, status }`; watch it at `/api/jobs/:jobId/stream`. */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwnedWorkflow(event, getRouterParam(event, 'id'))
  const body = await readValidatedBody(event, raw => bodySchema.safeParse(raw))
  if (!body.success) throw createError({ statusCode: 400, statusMessage: `Invalid request: ${z.prettifyError(body.error).replaceAll('\n', ' ')}` })
  if (!useServerConfig(event).workflows.enabled) throw createError({ statusCode: 400, statusMessage: 'Workflows are switched off on this server (NUXT_WORKFLOWS_ENABLED=false).' })
  // Tools may have been removed since it was saved: check again before running.
  const definition = requireValidWorkflow(workflow.definition) as WorkflowDefinition
  try {
    const job = await executeWorkflowInBackground({
      userId: workflow.userId,
      workflowId: workflow.id,
      definition,
      prompt: body.data.prompt,
      userApiKey: getHeader(event, 'x-openrouter-key')?.trim() || undefined,
    })
    setResponseStatus(event, 202)
    return { jobId: job.id, status: job.status }
  } catch (error) {
    throwJobStartError(event, error)
  }
})
