/**
 * How a conversation's settings and its owner's custom instructions shape each answer's request:
 * the system message (the chat's own prompt, else the person's instructions; then what the
 * assistant remembers about the person, when they have memory on) and the
 * chat-completions fields. The role's output cap is applied after, when the job starts
 * (admission/gate.ts `clampOutputTokens`), so a chat asking for more gets the cap.
 */
import type { ChatSettings } from '../../../shared/types/personal'

/** What a chat's answers are asked with besides their messages. */
export interface ChatRequestShape {
  systemPrompt?: string
  fields: Record<string, unknown>
}

/** The system prompt and fields for `settings`, with `instructions` as the system prompt when the chat has none, and `memories` after it. */
export function chatRequestShape(settings: ChatSettings | undefined, instructions: string | undefined, memories?: string): ChatRequestShape {
  const fields: Record<string, unknown> = {}
  if (settings?.temperature !== undefined) fields.temperature = settings.temperature
  if (settings?.topP !== undefined) fields.top_p = settings.topP
  if (settings?.maxTokens !== undefined) fields.max_tokens = settings.maxTokens
  // Models without reasoning ignore it (OpenRouter drops parameters a provider does not take).
  if (settings?.reasoningEffort !== undefined) fields.reasoning = { effort: settings.reasoningEffort }
  const systemPrompt = [settings?.systemPrompt?.trim() || instructions?.trim(), memories?.trim()].filter(Boolean).join('\n\n') || undefined
  return systemPrompt ? { systemPrompt, fields } : { fields }
}
