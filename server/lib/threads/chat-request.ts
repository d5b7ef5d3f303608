/**
 * How a conversation's settings and its owner's custom instructions shape each answer's request:
 * the system message (their groups' instructions first; then the chat's own prompt, else the
 * person's instructions; then what the assistant remembers about the person, when they have memory
 * on; then the passages of the chat's knowledge bases found for the question, where the operator
 * puts some up front) and the
 * chat-completions fields. The role's output cap is applied after, when the job starts
 * (admission/gate.ts `clampOutputTokens`), so a chat asking for more gets the cap.
 */
import type { ChatSettings } from '../../../shared/types/personal'

/** What a chat's answers are asked with besides their messages. */
export interface ChatRequestShape {
  systemPrompt?: string
  fields: Record<string, unknown>
}

/** What the system message is made of besides the chat's own prompt. */
export interface PromptParts {
  /** The person's custom instructions: used when the chat has no prompt of its own. */
  instructions?: string
  /** What the assistant remembers about the person. */
  memories?: string
  /** Passages of the conversation's knowledge bases found for the question. */
  knowledge?: string
  /** Their groups' instructions: first, whatever the chat or person says. */
  team?: string
}

/** The system prompt and fields for `settings`: the team's instructions, the chat's prompt (else the person's instructions), the memories, the passages. */
export function chatRequestShape(settings: ChatSettings | undefined, parts: PromptParts = {}): ChatRequestShape {
  const fields: Record<string, unknown> = {}
  if (settings?.temperature !== undefined) fields.temperature = settings.temperature
  if (settings?.topP !== undefined) fields.top_p = settings.topP
  if (settings?.maxTokens !== undefined) fields.max_tokens = settings.maxTokens
  // Models without reasoning ignore it (OpenRouter drops parameters a provider does not take).
  if (settings?.reasoningEffort !== undefined) fields.reasoning = { effort: settings.reasoningEffort }
  const systemPrompt = [parts.team?.trim(), settings?.systemPrompt?.trim() || parts.instructions?.trim(), parts.memories?.trim(), parts.knowledge?.trim()].filter(Boolean).join('\n\n') || undefined
  return systemPrompt ? { systemPrompt, fields } : { fields }
}
