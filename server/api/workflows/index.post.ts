import { z } from 'zod'
import { MAX_WORKFLOW_BODY_BYTES, MAX_WORKFLOW_VERSION_NOTE_CHARS } from '../../../shared/limits'

const bodySchema = z.object({ definition: z.unknown(), note: z.string().trim().max(MAX_WORKFLOW_VERSION_NOTE_CHARS).optional() }).strict()

/** Saves a new workflow (`{ definition, note? }`) as its version 1; 400 names each problem and its node. */
export default defineEventHandler(async (event) => {
  const user = await requireSessionUser(event)
  const body = await readJsonBody(event, bodySchema, { maxBytes: MAX_WORKFLOW_BODY_BYTES })
  const definition = await requireValidWorkflow(event, body.definition)
  setResponseStatus(event, 201)
  return useWorkflows().saved.createWorkflow({ userId: user.id, definition, ...(body.note ? { note: body.note } : {}) })
})
