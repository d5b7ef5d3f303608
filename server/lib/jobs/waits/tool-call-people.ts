/**
 * How a job's tool calls wait for its user (the tool loop's `ToolCallPeople`): a browser tool call
 * becomes a `client-tool` request that a tab of the user claims, runs and answers; a call that needs
 * approval becomes an `approval` request. What the model is told when nobody answers, the user
 * says no, or the job stops, is written here.
 */
import { createHash } from 'node:crypto'
import type { ToolCallPeople } from '../../tools/run-tool-calls'
import type { StreamedToolCall } from '../../openrouter/types'
import type { ClientToolDeclaration } from '../../../../shared/types/tool'
import type { InputRequestKind, JobInputRequest } from '../../../../shared/types/input-request'
import { MAX_MODEL_WORDS } from '../../../../shared/limits'
import type { JobInputs } from './job-inputs'

/**
 * The key of a tool call's request, stable across restarts: where the call stands (within `scope`,
 * a workflow step; its round; its position in the round), the kind of wait, and what is asked (a
 * digest of the tool and its arguments). The model's call id is left out: a round asked again
 * after a crash may name its calls differently, yet asks the same, and finds the same request.
 */
export function toolCallRequestKey(round: number, call: Pick<StreamedToolCall, 'index' | 'name' | 'arguments'>, kind: InputRequestKind, scope = ''): string {
  const asked = createHash('sha256').update(call.name).update('\0').update(call.arguments).digest('base64url').slice(0, 22)
  return `${scope}r${round}:c${call.index}:${kind}:${asked}`
}

function minutes(ms: number): string {
  const value = Math.round(ms / 60_000)
  return value >= 1 ? `${value} minute${value === 1 ? '' : 's'}` : `${Math.round(ms / 1000)} seconds`
}

/** Longest code shown in one block of a question (a person's own tool is at most 20,000 characters). */
const MAX_CODE_CHARS = 64 * 1024

/** Words on one line (every run of spaces, tabs and line breaks one space), cut at `max` characters. */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat
}

/**
 * The model's own words for a question (a tool's description), as plain words on one line: its
 * Markdown marks (code fences with their language, `**`, `__`, backticks, headings, link brackets)
 * taken out, so the card reads as words and nothing in it can look like the server's code view.
 * Each pattern is linear (no backtracking on the model's text).
 */
export function modelWordsLine(text: string, max: number): string {
  const plain = text
    .replace(/```[\w+-]*/g, ' ')
    .replace(/^[ \t]*#{1,6}[ \t]+/gm, '')
    .replace(/\*\*|__|`/g, '')
    .replace(/\[([^\]\n]{0,200})\]\(([^)\s]{0,500})\)/g, '$1 ($2)')
  return oneLine(plain, max)
}

/** The text the model gets for a browser tool's JSON result (a string stays as it is). */
function resultText(result: unknown): string {
  return typeof result === 'string' ? result : JSON.stringify(result) ?? 'null'
}

/** The waits of one job's tool calls (`scope` keeps the calls of different workflow steps apart). */
export function toolCallPeople(inputs: JobInputs, job: { id: string, userId: string }, clientTools: readonly ClientToolDeclaration[] = [], scope = ''): ToolCallPeople {
  const question = (call: StreamedToolCall, round: number, kind: InputRequestKind, title: string) => ({
    jobId: job.id,
    userId: job.userId,
    kind,
    key: toolCallRequestKey(round, call, kind, scope),
    title,
    toolName: call.name,
    arguments: call.arguments.slice(0, 20_000),
    toolCallId: call.id,
    round,
  })
  const waited = () => minutes(inputs.settings.timeoutMs)
  /** Questions asked so far per call (a tool may ask more than once). */
  const questions = new Map<string, number>()

  return {
    async runInBrowser(call, round, signal) {
      const tool = clientTools.find(item => item.name === call.name)
      const asked = await inputs.ask({ ...question(call, round, 'client-tool', `Run ${call.name} in your browser`), ...(tool?.resultSchema ? { schema: tool.resultSchema } : {}) }, signal)
      if ('aborted' in asked) return { error: 'the job stopped while it waited for the browser', aborted: true }
      const { request } = asked
      if (request.answer?.kind === 'client-tool') {
        return request.answer.error === undefined ? { result: resultText(request.answer.result) } : { error: `the browser could not run it: ${request.answer.error}` }
      }
      if (request.status === 'expired') return { error: `no browser answered within ${waited()} (no tab of this app was open, or the user did not allow it). Tell the user; call it again only if they ask.` }
      return { error: 'the job stopped before a browser answered' }
    },

    async ask(call, round, asked, signal) {
      const n = (questions.get(call.id) ?? 0) + 1
      questions.set(call.id, n)
      const result = await inputs.ask({
        ...question(call, round, 'question', asked.message.slice(0, 500) || `${call.name} asks you something`),
        key: `${toolCallRequestKey(round, call, 'question', scope)}:${n}`,
        message: asked.message.slice(0, 4_000),
        ...(asked.schema ? { schema: asked.schema } : {}),
        ...(asked.url ? { url: asked.url } : {}),
        ...(asked.origin ? { origin: asked.origin } : {}),
        ...(asked.code?.length ? { code: asked.code.slice(0, 4).map(block => ({ label: block.label.slice(0, 200), language: block.language.slice(0, 40), text: block.text.slice(0, MAX_CODE_CHARS) })) } : {}),
        ...(asked.modelWords ? { modelWords: modelWordsLine(asked.modelWords, MAX_MODEL_WORDS) } : {}),
      }, signal, asked.timeoutMs)
      const answer = 'request' in result ? result.request.answer : undefined
      if (answer?.kind !== 'question') return { action: 'cancel' }
      return answer.action === 'accept' ? { action: 'accept', content: answer.content ?? {} } : { action: answer.action }
    },

    async approve(call, round, signal) {
      const asked = await inputs.ask(question(call, round, 'approval', `Run ${call.name}?`), signal)
      if ('aborted' in asked) return { approved: false, error: 'the job stopped while it waited for approval', aborted: true }
      return decideApproval(inputs, asked.request, waited())
    },
  }
}

async function decideApproval(inputs: JobInputs, request: JobInputRequest, waited: string): Promise<{ approved: true } | { approved: false, error: string }> {
  const answer = request.answer
  if (answer?.kind === 'approval' && answer.approved) {
    // Acted on once: a run resumed after a restart that finds it consumed does not run the tool again.
    if (await inputs.consume(request)) return { approved: true }
    return { approved: false, error: 'it was approved, but a run before a server restart had already acted on that approval, so its outcome is unknown and it was not run again. Check its effect before calling it again.' }
  }
  if (answer?.kind === 'approval') return { approved: false, error: `the user declined to run it${answer.reason ? ` ("${answer.reason}")` : ''}. Do not call it again unless they ask.` }
  if (request.status === 'expired') return { approved: false, error: `nobody approved it within ${waited}, so it was not run. Tell the user it needs their approval.` }
  return { approved: false, error: 'the job stopped before it was approved' }
}
