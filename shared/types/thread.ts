/**
 * Conversations as the server keeps them: threads owned by a session user, and their messages.
 * An assistant message is produced by a background job; it carries the job's id while it runs and
 * the final text, tool calls and outcome once it has ended.
 */
import type { ActiveToolCall, JobError } from './job'

/** A conversation. */
export interface ChatThread {
  id: string
  userId: string
  title: string
  createdAt: number
  updatedAt: number
}

/** Where an assistant message stands: its job's status. */
export type ChatMessageStatus = 'streaming' | 'complete' | 'error' | 'aborted'

/** One message of a thread. */
export interface ThreadMessage {
  id: string
  threadId: string
  role: 'user' | 'assistant'
  content: string
  createdAt: number
  /** Assistant messages: the model that answered and the job that produced the answer. */
  model?: string
  jobId?: string
  status?: ChatMessageStatus
  reasoning?: string
  toolCalls?: ActiveToolCall[]
  error?: JobError
  finishReason?: string
}

/** A conversation with its messages (`GET /api/threads/:id`). */
export interface ThreadWithMessages {
  thread: ChatThread
  messages: ThreadMessage[]
}

/** The stored turns of a sent message and the job answering it (`POST /api/threads/:id/messages`). */
export interface SentThreadMessage {
  userMessage: ThreadMessage
  assistantMessage: ThreadMessage
  jobId: string
}

/** One conversation found by `GET /api/threads/search`: where the words are, with some text around them. */
export interface ThreadSearchHit {
  thread: ChatThread
  /** The message the words are in (absent: they are in the title). */
  messageId?: string
  role?: ThreadMessage['role']
  /** Up to ~160 characters around the first match (plain text). */
  snippet: string
}
