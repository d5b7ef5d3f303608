/**
 * An MCP server's questions (elicitation, form and URL mode) while one of its tools runs. The
 * question goes to the person the call runs for (`askUser`: a job's user, answered from any tab).
 * A question is only sent on when it is clear whom it is for: exactly one call that can ask is under
 * way on the connection (a shared connection busy with several people's calls declines, so nobody
 * sees another's question). Its form schema is bounded like any schema from outside; a person has
 * until the call's own timeout to answer. Nobody to ask, a bad schema, no answer in time: `decline`
 * or `cancel`, never a hang.
 */
import { answerSchemaProblem } from '../outside-schemas'
import type { ToolQuestion, ToolQuestionAnswer } from '../tool-types'
import type { McpLogger } from './connection'

/** A call under way on a connection. */
export interface ElicitingCall {
  startedAt: number
  askUser?: (question: ToolQuestion) => Promise<ToolQuestionAnswer>
}

/** The parameters of `elicitation/create` as the SDK hands them over (form or URL mode). */
type ElicitParams = { message: string, mode?: 'form', requestedSchema?: unknown } | { message: string, mode: 'url', url: string, elicitationId?: string }

/** Leave the person this much of the call's time less, so the answer reaches the server before it gives up. */
const ANSWER_MARGIN_MS = 2_000

/** What goes back to the server: the form's values are flat primitives or string lists (checked against its schema). */
export type ElicitAnswer = { action: 'accept', content?: Record<string, string | number | boolean | string[]> } | { action: 'decline' | 'cancel' }

/** Answers one `elicitation/create` request. */
export async function answerElicitation(params: ElicitParams, context: { server: string, calls: readonly ElicitingCall[], callTimeoutMs: number, logger: McpLogger }): Promise<ElicitAnswer> {
  return await ask(params, context) as ElicitAnswer
}

async function ask(params: ElicitParams, context: { server: string, calls: readonly ElicitingCall[], callTimeoutMs: number, logger: McpLogger }): Promise<ToolQuestionAnswer> {
  const askers = context.calls.filter(call => call.askUser)
  if (askers.length !== 1) {
    context.logger.warn(`MCP server "${context.server}" asked a question ${askers.length === 0 ? 'with no call under way that can ask its person' : 'while several calls were under way, so it is not clear whose'}; declined.`)
    return { action: 'decline' }
  }
  const [call] = askers
  const timeoutMs = context.callTimeoutMs - (Date.now() - call!.startedAt) - ANSWER_MARGIN_MS
  if (timeoutMs <= 0) return { action: 'cancel' }
  const message = typeof params.message === 'string' ? params.message.slice(0, 4_000) : ''
  const origin = `mcp:${context.server}`
  if (params.mode === 'url') {
    if (!/^https?:\/\//i.test(params.url)) return { action: 'decline' }
    return call!.askUser!({ message, url: params.url.slice(0, 2_000), origin, timeoutMs })
  }
  const schema = (params.requestedSchema ?? { type: 'object', properties: {} }) as Record<string, unknown>
  const problem = answerSchemaProblem(schema, 'its form')
  if (problem) {
    context.logger.warn(`MCP server "${context.server}" asked a question that cannot be shown: ${problem}; declined.`)
    return { action: 'decline' }
  }
  return call!.askUser!({ message, schema, origin, timeoutMs })
}
