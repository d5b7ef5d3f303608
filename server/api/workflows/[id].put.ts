import { z } from 'zod'
import { MAX_WORKFLOW_BODY_BYTES } from '../../../shared/limits'

const bodySchema = z.object({ definition: z.unknown() }).strict()

/** Replaces a workflow's definition (`{ definition }`). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, bodySchema, { maxBytes: MAX_WORKFLOW_BODY_BYTES })
  const definition = await requireValidWorkflow(event, body.definition)
  await useWorkflowStore().updateWorkflow(workflow.id, definition)
  return useWorkflowStore().getWorkflow(workflow.id)
})
