import { z } from 'zod'
import { MAX_WORKFLOW_BODY_BYTES } from '../../../shared/limits'

const bodySchema = z.object({ definition: z.unknown() }).strict()

/**
 * Checks a definition without saving it, for the editor's live validation: `{ ok, problems }`.
 * It checks what saving checks (the graph, and for this person the tools, models and model calls
 * it may use), so the editor shows every refusal a save would meet.
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  const body = await readJsonBody(event, bodySchema, { maxBytes: MAX_WORKFLOW_BODY_BYTES })
  try {
    await requireValidWorkflow(event, body.definition)
    return { ok: true, problems: [] }
  } catch (error) {
    if (!isError(error) || (error.statusCode !== 400 && error.statusCode !== 403)) throw error
    return { ok: false, problems: (error.data as { problems?: unknown } | undefined)?.problems ?? [{ message: error.message }] }
  }
})
