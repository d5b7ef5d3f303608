import { z } from 'zod'
import { MAX_WORKFLOW_BODY_BYTES, MAX_WORKFLOW_VERSION_NOTE_CHARS } from '../../../shared/limits'

const bodySchema = z.object({ definition: z.unknown(), note: z.string().trim().max(MAX_WORKFLOW_VERSION_NOTE_CHARS).optional() }).strict()

/** Saves a workflow's definition as its next version (`{ definition, note? }`); the versions before stay (GET …/versions). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, bodySchema, { maxBytes: MAX_WORKFLOW_BODY_BYTES })
  const definition = await requireValidWorkflow(event, body.definition)
  await useWorkflows().saved.updateWorkflow(workflow.id, definition, { by: workflow.userId, ...(body.note ? { note: body.note } : {}) })
  return useWorkflows().saved.getWorkflow(workflow.id)
})
