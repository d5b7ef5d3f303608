/**
 * OpenRouter chat-completions wire types (requests, streamed chunks) and the typed events the
 * stream parser turns them into. See docs: openrouter-wire-format.
 */
import type { OpenRouterError } from './errors'
import type { ChatMessage, ReasoningDetail, ChatToolCall, Usage } from '../../../shared/types/chat'

/** A JSON Schema object as OpenRouter's `tools[].function.parameters` takes it. */
export type JsonSchemaObject = {
  type: 'object'
  properties?: Record<string, unknown>
  required?: string[]
  [keyword: string]: unknown
}

/** Exactly the shape OpenRouter's chat-completions `tools: [...]` takes. */
export interface OpenRouterToolDefinition {
  type: 'function'
  function: {
    name: string
    description: string
    parameters: JsonSchemaObject
  }
}

export type { ChatMessage, ChatToolCall, ReasoningDetail, Usage } from '../../../shared/types/chat'

export type ToolChoice = 'none' | 'auto' | 'required' | { type: 'function', function: { name: string } }

/** The chat-completions request body. Unknown sampling fields pass through. */
export interface ChatCompletionRequest {
  model: string
  messages: ChatMessage[]
  stream: true
  tools?: OpenRouterToolDefinition[]
  tool_choice?: ToolChoice
  parallel_tool_calls?: boolean
  max_tokens?: number
  reasoning?: { effort?: 'low' | 'medium' | 'high' | (string & {}), max_tokens?: number, exclude?: boolean }
  usage?: { include: boolean }
  [samplingField: string]: unknown
}

/** Finish reasons as OpenRouter normalises them. */
export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter' | 'error'

/** One fully accumulated tool call of a round. */
export interface StreamedToolCall {
  id: string
  name: string
  arguments: string
  /** Position in the round, in the order the model opened the calls. */
  index: number
}

/** What the stream parser yields; noun-verb names as in the AI SDK's stream parts. */
export type ChatStreamEvent =
  | { type: 'response-start', generationId: string | null }
  | { type: 'text-delta', text: string }
  | { type: 'reasoning-delta', text: string }
  | { type: 'reasoning-details', details: ReasoningDetail[] }
  | { type: 'tool-call', toolCall: StreamedToolCall }
  | { type: 'usage', usage: Usage }
  | { type: 'error', error: OpenRouterError }
  | { type: 'finish', finishReason: FinishReason, nativeFinishReason: string | null }

/** A streamed chunk as it arrives (every field optional: real traffic omits many). */
export interface ChatCompletionChunk {
  id?: string
  object?: string
  created?: number
  model?: string
  provider?: string
  choices?: Array<{
    index?: number
    delta?: {
      role?: string
      content?: string | null
      reasoning?: string | null
      reasoning_details?: ReasoningDetail[]
      tool_calls?: Array<{
        index?: number
        id?: string | null
        type?: string
        function?: { name?: string | null, arguments?: string | null }
      }>
    }
    finish_reason?: string | null
    native_finish_reason?: string | null
    message?: { content?: string | null, tool_calls?: ChatToolCall[], reasoning?: string | null }
  }>
  usage?: {
    prompt_tokens?: number
    completion_tokens?: number
    total_tokens?: number
    cost?: number
    prompt_tokens_details?: { cached_tokens?: number }
    completion_tokens_details?: { reasoning_tokens?: number }
  }
  error?: { code?: number | string, message?: string, metadata?: Record<string, unknown> }
}
