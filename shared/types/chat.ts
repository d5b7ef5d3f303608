/**
 * The conversation as models see it (OpenRouter's chat-completions message shapes) and token
 * accounting. Stored in jobs (request, checkpoint), so shared by the server and the app.
 */

/** A tool call as it travels in an assistant message. */
export interface ChatToolCall {
  id: string
  type: 'function'
  function: { name: string, arguments: string }
}

/** Reasoning blocks a model produced; sent back unchanged on the assistant turn. */
export interface ReasoningDetail {
  type: 'reasoning.text' | 'reasoning.summary' | 'reasoning.encrypted' | (string & {})
  text?: string
  summary?: string
  data?: string
  [key: string]: unknown
}

export type ChatMessage =
  | { role: 'system', content: string }
  | { role: 'user', content: string | Array<Record<string, unknown>> }
  | { role: 'assistant', content: string | null, tool_calls?: ChatToolCall[], reasoning_details?: ReasoningDetail[] }
  | { role: 'tool', tool_call_id: string, content: string }

/** Token and cost accounting, summed over rounds by the tool loop. */
export interface Usage {
  promptTokens: number
  completionTokens: number
  totalTokens: number
  cachedTokens: number
  reasoningTokens: number
  /** Credits charged, when the upstream reports it. */
  cost: number
}
