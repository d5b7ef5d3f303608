import { z } from 'zod'
import { MAX_WORKFLOW_BODY_BYTES } from '../../../shared/limits'

const bodySchema = z.object({ definition: z.unknown() }).strict()

/** Checks a definition without saving it: `{ ok, problems }` (for the editor's live validation). */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  const body = await readJsonBody(event, bodySchema, { maxBytes: MAX_WORKFLOW_BODY_BYTES })
  const result = validateWorkflowDefinition(body.definition)
  return result.ok ? { ok: true, problems: [] } : { ok: false, problems: result.problems }
})
