import { createParser } from 'eventsource-parser'
import { errorForPayload, formatDuration, OpenRouterError } from './errors'
import { ToolCallAccumulator } from './tool-call-accumulator'
import type { ChatCompletionChunk, ChatStreamEvent, FinishReason, ReasoningDetail, Usage } from './types'

const FINISH_REASONS = new Set<FinishReason>(['stop', 'length', 'tool_calls', 'content_filter', 'error'])

export interface ParseStreamOptions {
  /** Names the endpoint in error messages ("OpenRouter", "localhost:11434"). */
  label: string
  /** Longest silence (no bytes at all, keep-alive comments included) before the stream is given up. */
  idleTimeoutMs: number
  signal?: AbortSignal
}

class IdleTimeout extends Error {}

/** Normalises an upstream finish reason; unknown values (e.g. "end_turn") count as `stop`. */
export function normalizeFinishReason(reason: string): FinishReason {
  if (FINISH_REASONS.has(reason as FinishReason)) return reason as FinishReason
  if (reason === 'tool_use' || reason === 'function_call') return 'tool_calls'
  if (reason === 'max_tokens') return 'length'
  return 'stop'
}

/** Converts the wire's snake_case usage into ours. */
export function toUsage(raw: NonNullable<ChatCompletionChunk['usage']>): Usage {
  const promptTokens = raw.prompt_tokens ?? 0
  const completionTokens = raw.completion_tokens ?? 0
  return {
    promptTokens,
    completionTokens,
    totalTokens: raw.total_tokens ?? promptTokens + completionTokens,
    cachedTokens: raw.prompt_tokens_details?.cached_tokens ?? 0,
    reasoningTokens: raw.completion_tokens_details?.reasoning_tokens ?? 0,
    cost: raw.cost ?? 0,
  }
}

/** Merges streamed reasoning_details fragments: same index and type extend one block. */
function mergeReasoningDetails(into: ReasoningDetail[], fragments: ReasoningDetail[]): void {
  for (const fragment of fragments) {
    const existing = into.find(detail => detail.index !== undefined && detail.index === fragment.index && detail.type === fragment.type)
    if (!existing) {
      into.push({ ...fragment })
      continue
    }
    for (const field of ['text', 'summary', 'data'] as const) {
      if (typeof fragment[field] === 'string') existing[field] = `${existing[field] ?? ''}${fragment[field]}`
    }
  }
}

function readWithDeadline(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  idleTimeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new IdleTimeout()), idleTimeoutMs)
    const onAbort = () => reject(new OpenRouterError({ kind: 'aborted', message: 'The request was cancelled.' }))
    if (signal?.aborted) onAbort()
    signal?.addEventListener('abort', onAbort, { once: true })
    reader.read().then(resolve, reject).finally(() => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
    })
  })
}

/**
 * Parses an OpenRouter chat-completions SSE body into typed events. Text and reasoning stream as
 * they arrive; tool calls are emitted complete at the end of the round; the last event is always
 * `finish`. Never throws: network failures, silence, abort, in-stream errors and a missing `[DONE]`
 * all become an `error` event followed by `finish` with reason `error`, after whatever was received.
 */
export async function* parseChatCompletionStream(
  body: ReadableStream<Uint8Array>,
  options: ParseStreamOptions,
): AsyncGenerator<ChatStreamEvent> {
  const { label, idleTimeoutMs, signal } = options
  const toolCalls = new ToolCallAccumulator()
  const reasoningDetails: ReasoningDetail[] = []
  const pending: ChatStreamEvent[] = []
  let finishReason: FinishReason | null = null
  let nativeFinishReason: string | null = null
  let sawDone = false
  let streamError: OpenRouterError | null = null

  const fail = (error: OpenRouterError) => {
    streamError ??= error
    pending.push({ type: 'error', error })
  }

  const handleChunk = (chunk: ChatCompletionChunk) => {
    if (chunk.error) fail(errorForPayload(label, chunk.error))
    // choices may be [] (usage chunk, some error chunks): never index it blindly.
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta
      if (typeof delta?.content === 'string' && delta.content !== '') pending.push({ type: 'text-delta', text: delta.content })
      const detailFragments = Array.isArray(delta?.reasoning_details) ? delta.reasoning_details : []
      if (typeof delta?.reasoning === 'string' && delta.reasoning !== '') {
        pending.push({ type: 'reasoning-delta', text: delta.reasoning })
      } else {
        // Some providers stream reasoning only as details; show their readable text.
        for (const fragment of detailFragments) {
          const text = fragment.text ?? fragment.summary
          if (typeof text === 'string' && text !== '') pending.push({ type: 'reasoning-delta', text })
        }
      }
      mergeReasoningDetails(reasoningDetails, detailFragments)
      for (const fragment of delta?.tool_calls ?? []) toolCalls.add(fragment)
      if (typeof choice.finish_reason === 'string' && choice.finish_reason !== '') {
        finishReason = normalizeFinishReason(choice.finish_reason)
        nativeFinishReason = choice.native_finish_reason ?? choice.finish_reason
      }
    }
    if (chunk.usage) pending.push({ type: 'usage', usage: toUsage(chunk.usage) })
  }

  // Comment lines (": OPENROUTER PROCESSING") never reach onEvent; eventsource-parser drops them.
  const parser = createParser({
    onEvent: (message) => {
      if (sawDone) return
      if (message.data.trim() === '[DONE]') {
        sawDone = true
        return
      }
      let chunk: ChatCompletionChunk
      try {
        chunk = JSON.parse(message.data) as ChatCompletionChunk
      } catch {
        return // a garbled line is not worth ending the answer for
      }
      if (typeof chunk === 'object' && chunk !== null) handleChunk(chunk)
    },
  })

  const reader = body.getReader()
  const decoder = new TextDecoder()
  try {
    while (!sawDone) {
      const { done, value } = await readWithDeadline(reader, idleTimeoutMs, signal)
      if (done) break
      parser.feed(decoder.decode(value, { stream: true }))
      while (pending.length > 0) yield pending.shift()!
    }
  } catch (error) {
    if (error instanceof IdleTimeout) {
      fail(new OpenRouterError({ kind: 'timeout', message: `${label}: no data for ${formatDuration(idleTimeoutMs)}, the answer was stopped`, retryable: true }))
    } else if (OpenRouterError.isInstance(error)) {
      fail(error)
    } else {
      fail(new OpenRouterError({ kind: 'stream_interrupted', message: `${label}: the connection was lost mid-answer`, cause: error }))
    }
  } finally {
    // Cancelling the body closes the upstream connection (and, for OpenRouter, the generation).
    reader.cancel().catch(() => {})
  }

  if (!streamError && !sawDone && finishReason === null) {
    fail(new OpenRouterError({ kind: 'stream_interrupted', message: `${label}: the stream ended before the answer was complete` }))
  }
  while (pending.length > 0) yield pending.shift()!
  if (reasoningDetails.length > 0) yield { type: 'reasoning-details', details: reasoningDetails }
  const calls = toolCalls.finish()
  for (const toolCall of calls) yield { type: 'tool-call', toolCall }

  // Tool calls may come with finish_reason "stop", null, or no finishing chunk at all.
  const reason: FinishReason = streamError ? 'error' : calls.length > 0 ? 'tool_calls' : (finishReason ?? 'stop')
  yield { type: 'finish', finishReason: reason, nativeFinishReason }
}
