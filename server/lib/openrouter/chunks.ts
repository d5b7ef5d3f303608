import type { ChatCompletionChunk, FinishReason } from './types'

/**
 * Builders for OpenRouter's streamed chunks, exactly as the wire carries them. Used by the offline
 * demo model and by the fake upstream in the tests, so both speak the format the client parses.
 */

export interface ChunkMeta {
  id: string
  model: string
  created: number
  provider?: string
}

function chunk(meta: ChunkMeta, choices: NonNullable<ChatCompletionChunk['choices']>, extra: Partial<ChatCompletionChunk> = {}): ChatCompletionChunk {
  return { id: meta.id, object: 'chat.completion.chunk', created: meta.created, model: meta.model, provider: meta.provider ?? 'OR3', choices, ...extra } as ChatCompletionChunk
}

/** The first chunk of every answer: role, empty content. */
export function roleChunk(meta: ChunkMeta): ChatCompletionChunk {
  return chunk(meta, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, native_finish_reason: null }])
}

export function textChunk(meta: ChunkMeta, text: string): ChatCompletionChunk {
  return chunk(meta, [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: null, native_finish_reason: null }])
}

export function reasoningChunk(meta: ChunkMeta, text: string): ChatCompletionChunk {
  return chunk(meta, [{ index: 0, delta: { role: 'assistant', content: '', reasoning: text, reasoning_details: [{ type: 'reasoning.text', text, index: 0, format: 'unknown' }] }, finish_reason: null, native_finish_reason: null }])
}

/** Opens a tool call: id, type and name, with empty arguments (as real traffic does). */
export function toolCallOpenChunk(meta: ChunkMeta, index: number, id: string, name: string): ChatCompletionChunk {
  return chunk(meta, [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index, id, type: 'function', function: { name, arguments: '' } }] }, finish_reason: null, native_finish_reason: null }])
}

/** A fragment of a tool call's arguments; only index and the piece. */
export function toolCallArgumentsChunk(meta: ChunkMeta, index: number, piece: string): ChatCompletionChunk {
  return chunk(meta, [{ index: 0, delta: { role: 'assistant', content: null, tool_calls: [{ index, function: { arguments: piece } }] }, finish_reason: null, native_finish_reason: null }])
}

export function finishChunk(meta: ChunkMeta, reason: FinishReason, nativeReason: string = reason): ChatCompletionChunk {
  return chunk(meta, [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: reason, native_finish_reason: nativeReason }])
}

/** The usage chunk: `choices: []`, just before [DONE]. */
export function usageChunk(meta: ChunkMeta, usage: { prompt: number, completion: number, cost?: number, reasoning?: number, cached?: number }): ChatCompletionChunk {
  return chunk(meta, [], {
    usage: {
      prompt_tokens: usage.prompt,
      completion_tokens: usage.completion,
      total_tokens: usage.prompt + usage.completion,
      cost: usage.cost ?? 0,
      prompt_tokens_details: { cached_tokens: usage.cached ?? 0 },
      completion_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
    },
  })
}

/** A mid-stream error: HTTP stays 200, the error rides in a last chunk. */
export function errorChunk(meta: ChunkMeta, code: number | string, message: string): ChatCompletionChunk {
  return chunk(meta, [{ index: 0, delta: { content: '' }, finish_reason: 'error', native_finish_reason: 'error' }], { error: { code, message } })
}

/** One SSE event carrying a JSON chunk. */
export function sseData(value: unknown): string {
  return `data: ${JSON.stringify(value)}\n\n`
}

export const SSE_DONE = 'data: [DONE]\n\n'

/** OpenRouter's keep-alive comment. */
export const SSE_KEEP_ALIVE = ': OPENROUTER PROCESSING\n\n'

/** Rough token count for usage figures (~4 characters a token). */
export function estimateTokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4))
}
