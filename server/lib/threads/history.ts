/**
 * The conversation a new answer is asked with: the thread's earlier turns (user messages and the
 * text of finished answers) plus the new question. Answers that failed without text, or are still
 * running, are left out, so a retry does not carry a half answer.
 */
import type { ChatMessage } from '../openrouter/types'
import type { ThreadMessage } from '../../../shared/types/thread'

/** Turns a thread's messages and a new question into chat-completions messages. */
export function threadHistory(messages: readonly ThreadMessage[], question: string, systemPrompt?: string): ChatMessage[] {
  const history: ChatMessage[] = systemPrompt ? [{ role: 'system', content: systemPrompt }] : []
  for (const message of messages) {
    if (message.role === 'user') history.push({ role: 'user', content: message.content })
    else if (message.status !== 'streaming' && message.content.trim()) history.push({ role: 'assistant', content: message.content })
  }
  history.push({ role: 'user', content: question })
  return history
}
