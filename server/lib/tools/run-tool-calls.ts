import { executeServerTool } from './execute-tool'
import type { StreamedToolCall } from '../openrouter/types'
import type { ToolCredentials, ToolExecutionResult, ToolQuestion, ToolQuestionAnswer } from './tool-types'

/** How one tool call ended, as the job stores it and the UI shows it. */
export type ToolCallStatus = 'completed' | 'error' | 'timeout' | 'aborted' | 'refused'

/** One executed (or refused) tool call with the text the model received for it. */
export interface ToolCallRecord {
  id: string
  name: string
  arguments: string
  status: ToolCallStatus
  /** What the model got back: the result, or `Error executing tool "NAME": …`. */
  result: string
  error?: string
  timedOut: boolean
  startedAt: number
  finishedAt: number
  executionTimeMs: number
}

/**
 * How a call waits for a person; the job layer answers (jobs/waits). Both resolve when the person
 * answered, the wait timed out, or the signal aborted, and never throw.
 */
export interface ToolCallPeople {
  /** Runs a browser tool call in a tab of the job's user: the result text, or an error for the model. */
  runInBrowser(call: StreamedToolCall, round: number, signal: AbortSignal | undefined): Promise<{ result: string } | { error: string, aborted?: boolean }>
  /** Asks the job's user to approve the call: approved, or why not (denied, no answer in time). */
  approve(call: StreamedToolCall, round: number, signal: AbortSignal | undefined): Promise<{ approved: true } | { approved: false, error: string, aborted?: boolean }>
  /** Asks the job's user a question the running call has (an MCP elicitation). */
  ask(call: StreamedToolCall, round: number, question: ToolQuestion, signal: AbortSignal | undefined): Promise<ToolQuestionAnswer>
}

export interface RunToolCallsOptions {
  /** Names of the tools the model was offered; calls to others are refused, not run. */
  offered: ReadonlySet<string>
  maxToolsPerRound: number
  /** Calls running at once. */
  concurrency: number
  context: { userId: string, threadId: string, jobId: string, workspaceId?: string, knowledgeBaseIds?: readonly string[], credentials?: ToolCredentials, availableTools?: readonly string[] }
  /** Why the job's principal may not use a tool (the tool policy), or undefined: a denied call is refused with that reason. */
  denial?: (name: string) => string | undefined
  /** Tools the caller answers itself (not in the registry), by name: arguments JSON in, result text out (throw for an error). */
  localTools?: ReadonlyMap<string, (argumentsJson: string) => string>
  /** The model request (round) that asked for these calls. */
  round?: number
  /** Tools the job's user's browser runs (by name); a call waits for a tab to run it through `people`. */
  browserTools?: ReadonlySet<string>
  /** Whether a call to `name` waits for its user's approval first (through `people`). */
  needsApproval?: (name: string) => boolean
  /** How calls wait for the job's user; without it browser tools and approvals are refused. */
  people?: ToolCallPeople
  /** Stops the round's deadline while a call waits for a person; call the returned function when it is over. */
  holdDeadline?: () => () => void
  signal?: AbortSignal
  /**
   * Called (and awaited) right before a registry tool runs, after any approval: where the caller
   * durably notes that the call has begun, so a restart never runs a call with side effects twice.
   */
  beforeExecute?: (call: StreamedToolCall) => Promise<void>
  onStart?: (call: StreamedToolCall, startedAt: number) => void
  onFinish?: (record: ToolCallRecord) => void
  /** How a registry tool runs (default: this process's registry). */
  execute?: typeof executeServerTool
}

/** The tool message content for a failed call; the model sees this and can recover. */
export function toolErrorMessage(name: string, error: string): string {
  return `Error executing tool "${name}": ${error}`
}

function refusal(call: StreamedToolCall, startedAt: number, error: string): ToolCallRecord {
  return { id: call.id, name: call.name, arguments: call.arguments, status: 'refused', result: toolErrorMessage(call.name, error), error, timedOut: false, startedAt, finishedAt: startedAt, executionTimeMs: 0 }
}

/** The record of a call the caller settled itself (a local tool, a person's answer): its result, or its error as the model gets it. */
function settledRecord(call: StreamedToolCall, startedAt: number, outcome: { result: string } | { error: string, aborted?: boolean }): ToolCallRecord {
  const finishedAt = Date.now()
  const base = { id: call.id, name: call.name, arguments: call.arguments, timedOut: false, startedAt, finishedAt, executionTimeMs: finishedAt - startedAt }
  if ('result' in outcome) return { ...base, status: 'completed', result: outcome.result }
  return { ...base, status: outcome.aborted ? 'aborted' : 'error', result: toolErrorMessage(call.name, outcome.error), error: outcome.error }
}

/** Runs `wait` with the round's deadline held, so a person's minutes do not count against it. */
async function waitingForPerson<T>(options: RunToolCallsOptions, wait: () => Promise<T>): Promise<T> {
  const release = options.holdDeadline?.()
  try {
    return await wait()
  } finally {
    release?.()
  }
}

async function runOne(call: StreamedToolCall, position: number, total: number, options: RunToolCallsOptions): Promise<ToolCallRecord> {
  const startedAt = Date.now()
  options.onStart?.(call, startedAt)
  let record: ToolCallRecord
  const denied = options.denial?.(call.name)
  if (position >= options.maxToolsPerRound) {
    record = refusal(call, startedAt, `not run: the model asked for ${total} tool calls in one round and at most ${options.maxToolsPerRound} run per round. Ask for fewer at a time.`)
  } else if (denied !== undefined) {
    record = refusal(call, startedAt, `tool "${call.name}" is not available here: ${denied}.`)
  } else if (!options.offered.has(call.name)) {
    record = refusal(call, startedAt, `tool "${call.name}" was not offered in this conversation, so it was not run.`)
  } else if (options.localTools?.has(call.name)) {
    let outcome: { result: string } | { error: string }
    try {
      outcome = { result: options.localTools.get(call.name)!(call.arguments) }
    } catch (caught) {
      outcome = { error: (caught as Error).message }
    }
    record = settledRecord(call, startedAt, outcome)
  } else if (options.browserTools?.has(call.name)) {
    record = options.people
      ? settledRecord(call, startedAt, await waitingForPerson(options, () => options.people!.runInBrowser(call, options.round ?? 0, options.signal)))
      : refusal(call, startedAt, `tool "${call.name}" runs in the browser, and nobody can answer for this job.`)
  } else {
    record = await runApproved(call, startedAt, options)
  }
  options.onFinish?.(record)
  return record
}

/** Runs a registry tool, after its user's approval when it needs one. */
/** How an executed call ended, from what `executeServerTool` returned. */
export function toolCallStatusOf(outcome: ToolExecutionResult): ToolCallStatus {
  return outcome.error === undefined ? 'completed' : outcome.timedOut ? 'timeout' : outcome.errorCode === 'aborted' ? 'aborted' : 'error'
}

async function runApproved(call: StreamedToolCall, startedAt: number, options: RunToolCallsOptions): Promise<ToolCallRecord> {
  if (options.needsApproval?.(call.name)) {
    if (!options.people) return refusal(call, startedAt, `tool "${call.name}" needs its user's approval, and nobody can answer for this job.`)
    const decision = await waitingForPerson(options, () => options.people!.approve(call, options.round ?? 0, options.signal))
    if (!decision.approved) return settledRecord(call, startedAt, decision)
  }
  const people = options.people
  const askUser = people ? (question: ToolQuestion) => waitingForPerson(options, () => people.ask(call, options.round ?? 0, question, options.signal)) : undefined
  try {
    await options.beforeExecute?.(call)
  } catch (caught) {
    return refusal(call, startedAt, `not run: ${(caught as Error).message}`)
  }
  const outcome = await (options.execute ?? executeServerTool)(call.name, call.arguments, { ...options.context, toolCallId: call.id, signal: options.signal, ...(askUser ? { askUser } : {}), ...(options.holdDeadline ? { holdRoundDeadline: options.holdDeadline } : {}) })
  return {
    id: call.id,
    name: call.name,
    arguments: call.arguments,
    status: toolCallStatusOf(outcome),
    result: outcome.error === undefined ? outcome.result ?? '' : toolErrorMessage(call.name, outcome.error),
    error: outcome.error,
    timedOut: outcome.timedOut,
    startedAt,
    finishedAt: Date.now(),
    executionTimeMs: outcome.executionTimeMs,
  }
}

/**
 * Runs one round's tool calls in parallel, at most `concurrency` at once, and returns their
 * records in call order. Never throws: refusals, failures and timeouts become error results.
 */
export async function runToolCalls(calls: readonly StreamedToolCall[], options: RunToolCallsOptions): Promise<ToolCallRecord[]> {
  const records: ToolCallRecord[] = new Array(calls.length)
  let next = 0
  const worker = async () => {
    while (next < calls.length) {
      const position = next++
      records[position] = await runOne(calls[position]!, position, calls.length, options)
    }
  }
  await Promise.all(Array.from({ length: Math.min(Math.max(1, options.concurrency), calls.length) }, worker))
  return records
}
