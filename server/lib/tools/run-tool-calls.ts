import { executeServerTool } from './execute-tool'
import type { StreamedToolCall } from '../openrouter/types'
import type { ToolCredentials } from './tool-types'

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

export interface RunToolCallsOptions {
  /** Names of the tools the model was offered; calls to others are refused, not run. */
  offered: ReadonlySet<string>
  maxToolsPerRound: number
  /** Calls running at once. */
  concurrency: number
  context: { userId: string, threadId: string, jobId: string, credentials?: ToolCredentials }
  /** Why the job's principal may not use a tool (the tool policy), or undefined: a denied call is refused with that reason. */
  denial?: (name: string) => string | undefined
  /** Tools the caller answers itself (not in the registry), by name: arguments JSON in, result text out (throw for an error). */
  localTools?: ReadonlyMap<string, (argumentsJson: string) => string>
  signal?: AbortSignal
  onStart?: (call: StreamedToolCall, startedAt: number) => void
  onFinish?: (record: ToolCallRecord) => void
}

/** The tool message content for a failed call; the model sees this and can recover. */
export function toolErrorMessage(name: string, error: string): string {
  return `Error executing tool "${name}": ${error}`
}

function refusal(call: StreamedToolCall, startedAt: number, error: string): ToolCallRecord {
  return { id: call.id, name: call.name, arguments: call.arguments, status: 'refused', result: toolErrorMessage(call.name, error), error, timedOut: false, startedAt, finishedAt: startedAt, executionTimeMs: 0 }
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
    let result: string
    let error: string | undefined
    try {
      result = options.localTools.get(call.name)!(call.arguments)
    } catch (caught) {
      error = (caught as Error).message
      result = toolErrorMessage(call.name, error)
    }
    record = { id: call.id, name: call.name, arguments: call.arguments, status: error === undefined ? 'completed' : 'error', result, error, timedOut: false, startedAt, finishedAt: Date.now(), executionTimeMs: Date.now() - startedAt }
  } else {
    const outcome = await executeServerTool(call.name, call.arguments, { ...options.context, signal: options.signal })
    const status: ToolCallStatus = outcome.error === undefined ? 'completed' : outcome.timedOut ? 'timeout' : outcome.errorCode === 'aborted' ? 'aborted' : 'error'
    record = {
      id: call.id,
      name: call.name,
      arguments: call.arguments,
      status,
      result: outcome.error === undefined ? outcome.result ?? '' : toolErrorMessage(call.name, outcome.error),
      error: outcome.error,
      timedOut: outcome.timedOut,
      startedAt,
      finishedAt: Date.now(),
      executionTimeMs: outcome.executionTimeMs,
    }
  }
  options.onFinish?.(record)
  return record
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
