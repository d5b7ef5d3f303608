/**
 * The conversation a new answer is asked with: the thread's earlier turns (user messages with
 * their files, and the text of finished answers) plus the new question. Answers that failed
 * without text, or are still running, are left out, so a retry does not carry a half answer.
 * Files go in as references (see attachments.ts), made into content parts at each model request.
 */
import type { ChatMessage } from '../openrouter/types'
import type { ThreadMessage } from '../../../shared/types/thread'
import { userTurn } from '../attachments/attachments'

/** Turns a thread's messages and a new question into chat-completions messages. */
export function threadHistory(messages: readonly ThreadMessage[], question: Pick<ThreadMessage, 'content' | 'attachments'>, systemPrompt?: string): ChatMessage[] {
  const history: ChatMessage[] = systemPrompt ? [{ role: 'system', content: systemPrompt }] : []
  for (const message of messages) {
    if (message.role === 'user') history.push(userTurn(message.content, message.attachments))
    else if (message.status !== 'streaming' && message.content.trim()) history.push({ role: 'assistant', content: message.content })
  }
  history.push(userTurn(question.content, question.attachments))
  return history
}
