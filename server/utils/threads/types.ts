/**
 * Conversations as the server keeps them: threads owned by a session user, and their messages.
 * An assistant message is produced by a background job; it carries the job's id while it runs and
 * the final text, tool calls and outcome once it has ended.
 */
import type { ActiveToolCall, JobError } from '../background-jobs/types'

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

/** A message before it is stored. */
export type NewThreadMessage = Omit<ThreadMessage, 'id' | 'createdAt'> & { id?: string, now?: number }

/** What an ended job writes back into its assistant message. */
export type ThreadMessageUpdate = Partial<Pick<ThreadMessage, 'content' | 'status' | 'reasoning' | 'toolCalls' | 'error' | 'finishReason' | 'jobId'>>

/** Storage of threads and messages (memory, sqlite, Convex), the same contract for each. */
export interface ThreadStore {
  createThread(input: { userId: string, title?: string, id?: string, now?: number }): Promise<ChatThread>
  getThread(threadId: string): Promise<ChatThread | null>
  /** A user's threads, most recently active first. */
  listThreads(userId: string, options?: { limit?: number }): Promise<ChatThread[]>
  renameThread(threadId: string, title: string, now?: number): Promise<boolean>
  /** Deletes the thread and its messages. */
  deleteThread(threadId: string): Promise<boolean>
  /** Adds a message and marks the thread active. */
  appendMessage(message: NewThreadMessage): Promise<ThreadMessage>
  updateMessage(messageId: string, update: ThreadMessageUpdate): Promise<boolean>
  getMessage(messageId: string): Promise<ThreadMessage | null>
  /** A thread's messages, oldest first. */
  listMessages(threadId: string): Promise<ThreadMessage[]>
  close(): Promise<void>
}

/** Longest thread title kept. */
export const MAX_THREAD_TITLE = 120

/** A title from the first words of a message. */
export function titleFromMessage(content: string): string {
  const flat = content.replace(/\s+/g, ' ').trim()
  if (!flat) return 'New chat'
  return flat.length > 60 ? `${flat.slice(0, 59).replace(/\s+\S*$/, '')}…` : flat
}
