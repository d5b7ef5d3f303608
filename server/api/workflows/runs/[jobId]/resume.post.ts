import { z } from 'zod'

const bodySchema = z.object({ fromNode: z.string().min(1).max(64) }).strict()

/**
 * "Resume from here" (`{ fromNode }`) on a workflow run that failed, was rejected or was stopped,
 * while it is in the run history: a new run of the definition it ran, with its inputs, keeping its
 * finished steps before `fromNode`; `fromNode` and what follows run again. `{ jobId, status }` of
 * the new run (202).
 */
export default defineEventHandler(async (event) => {
  const run = await requireOwned(event, 'workflowRun', getRouterParam(event, 'jobId'))
  const spec = run.job.workflow
  if (!spec) throw createError({ statusCode: 404, statusMessage: 'No such workflow run. It may be past the run history\'s retention, or it belongs to another account.' })
  const body = await readJsonBody(event, bodySchema)
  const workflow = { id: spec.workflowId, userId: run.userId, name: spec.definition.name, definition: spec.definition, createdAt: run.startedAt, updatedAt: run.startedAt, version: spec.version ?? 1 }
  const job = await startWorkflowRun(event, workflow, { prompt: spec.prompt, inputs: spec.inputs, resumeFrom: { run: run.job, nodeId: body.fromNode } })
  setResponseStatus(event, 202)
  return { jobId: job.id, status: job.status }
})
