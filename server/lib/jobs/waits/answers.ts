/**
 * What an answer to each kind of input request must look like (`POST /api/jobs/:id/input/:requestId`),
 * checked against what was asked: a browser tool's result against its result schema and size
 * bound, an approval's yes or no, a question's action and its form content (defaults applied).
 */
import { z } from 'zod'
import type { InputAnswer, JobInputRequest } from '../../../../shared/types/input-request'
import { answerMismatch } from '../../tools/outside-schemas'

/** Largest browser tool result accepted, as JSON text. */
export const MAX_CLIENT_RESULT_CHARS = 64 * 1024

/** An answer that does not fit what was asked; the message says what to send instead. */
export class InputAnswerError extends Error {
  override readonly name = 'InputAnswerError'
}

const clientToolBody = z.object({ result: z.unknown().optional(), error: z.string().trim().min(1).max(2_000).optional(), claimant: z.string().trim().min(8, 'send the tab\'s id as "claimant" (8-100 characters)').max(100).optional() })
  .refine(body => (body.result === undefined) !== (body.error === undefined), 'send either "result" (what the tool produced) or "error" (why it could not run), not both')
const approvalBody = z.object({ approved: z.boolean({ error: '"approved" must be true or false' }), reason: z.string().trim().max(1_000).optional() })
const questionBody = z.object({
  action: z.enum(['accept', 'decline', 'cancel'], { error: '"action" must be "accept", "decline" or "cancel"' }),
  content: z.record(z.string().max(200), z.unknown()).optional(),
})

function parsed<T>(schema: z.ZodType<T>, body: unknown): T {
  const result = schema.safeParse(body)
  if (result.success) return result.data
  const [issue] = result.error.issues
  throw new InputAnswerError(`${issue?.path.length ? `"${issue.path.join('.')}": ` : ''}${issue?.message ?? 'invalid answer'}`)
}

/** The answer `body` gives to `request`, or an InputAnswerError saying what to fix. */
export function parseInputAnswer(request: JobInputRequest, body: unknown): InputAnswer {
  switch (request.kind) {
    case 'client-tool': {
      const { result, error } = parsed(clientToolBody, body)
      if (error !== undefined) return { kind: 'client-tool', error }
      const text = JSON.stringify(result)
      if (text.length > MAX_CLIENT_RESULT_CHARS) throw new InputAnswerError(`The result is ${text.length.toLocaleString('en')} characters of JSON; at most ${MAX_CLIENT_RESULT_CHARS.toLocaleString('en')} are accepted. Send a smaller result.`)
      const mismatch = request.schema ? answerMismatch(request.schema, result) : undefined
      if (mismatch) throw new InputAnswerError(`The result does not match the tool's result schema: ${mismatch}.`)
      return { kind: 'client-tool', result }
    }
    case 'approval': {
      const { approved, reason } = parsed(approvalBody, body)
      return reason ? { kind: 'approval', approved, reason } : { kind: 'approval', approved }
    }
    case 'question': {
      const { action, content } = parsed(questionBody, body)
      if (action !== 'accept') return { kind: 'question', action }
      const filled = structuredClone(content ?? {})
      if (JSON.stringify(filled).length > MAX_CLIENT_RESULT_CHARS) throw new InputAnswerError(`The answer is too large; at most ${MAX_CLIENT_RESULT_CHARS.toLocaleString('en')} characters of JSON are accepted.`)
      const mismatch = request.schema ? answerMismatch(request.schema, filled) : undefined
      if (mismatch) throw new InputAnswerError(`The answer does not fit the form: ${mismatch}.`)
      return { kind: 'question', action, content: filled }
    }
  }
}
