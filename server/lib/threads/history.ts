/**
 * The conversation a new answer is asked with: the thread's earlier turns (user messages with
 * their files, and the text of finished answers, with what was sent to them while they ran) plus the new question. Answers that failed
 * without text, or are still running, are left out, so a retry does not carry a half answer.
 * Files go in as references (see attachments.ts), made into content parts at each model request.
 */
import type { ChatMessage } from '../openrouter/types'
import type { ThreadMessage } from '../../../shared/types/thread'
import { userTurn } from '../attachments/attachments'

/**
 * A finished answer as the model had it: its text, with what the person sent it while it ran
 * (steers) as their turns where the model read them.
 */
function answerTurns(message: ThreadMessage): ChatMessage[] {
  const turns: ChatMessage[] = []
  let from = 0
  for (const steer of message.steers ?? []) {
    const text = message.content.slice(from, steer.contentOffset).trim()
    if (text) turns.push({ role: 'assistant', content: text })
    turns.push({ role: 'user', content: steer.content })
    from = Math.max(from, steer.contentOffset)
  }
  const rest = message.content.slice(from).trim()
  if (rest) turns.push({ role: 'assistant', content: from === 0 ? message.content : rest })
  return turns
}

/** Turns a thread's messages and a new question into chat-completions messages. */
export function threadHistory(messages: readonly ThreadMessage[], question: Pick<ThreadMessage, 'content' | 'attachments'>, systemPrompt?: string): ChatMessage[] {
  const history: ChatMessage[] = systemPrompt ? [{ role: 'system', content: systemPrompt }] : []
  for (const message of messages) {
    if (message.role === 'user') history.push(userTurn(message.content, message.attachments))
    else if (message.status !== 'streaming') history.push(...answerTurns(message))
  }
  history.push(userTurn(question.content, question.attachments))
  return history
}
