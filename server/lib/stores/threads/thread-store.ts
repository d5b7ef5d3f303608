/** The one interface every thread store implements (memory, sqlite, Convex); one contract suite pins it. */
import type { ChatThread, ThreadMessage, ThreadSearchHit } from '../../../../shared/types/thread'
import type { MessageAttachment } from '../../../../shared/types/attachment'
import type { ChatSettings, MessageFeedback } from '../../../../shared/types/personal'
import type { MessageQueueStore } from './message-queue-store'

/** A message before it is stored. */
export type NewThreadMessage = Omit<ThreadMessage, 'id' | 'createdAt'> & { id?: string, now?: number }

/** What an ended job writes back into its assistant message. */
export type ThreadMessageUpdate = Partial<Pick<ThreadMessage, 'content' | 'status' | 'reasoning' | 'toolCalls' | 'error' | 'finishReason' | 'usage' | 'jobId' | 'steers' | 'attachments'>>

/** What `updateThread` changes: `null` clears a field. Never moves the thread in the list (unlike a rename or a message). */
export interface ThreadPatch {
  pinned?: boolean
  folderId?: string | null
  settings?: ChatSettings | null
}

/** One 👍 / 👎 as the admin's report reads it. */
export interface FeedbackRow extends MessageFeedback {
  model: string
}

/** A stored file with its bytes and the thread (and owner) it belongs to. */
export interface StoredAttachment {
  attachment: MessageAttachment
  bytes: Uint8Array
  threadId: string
  userId: string
  createdAt: number
}

/** Storage of threads and messages (memory, sqlite, Convex), the same contract for each. */
export interface ThreadStore {
  /** Messages lined up in each conversation while an answer runs (gone with their thread). */
  readonly queue: MessageQueueStore
  createThread(input: { userId: string, title?: string, id?: string, now?: number }): Promise<ChatThread>
  getThread(threadId: string): Promise<ChatThread | null>
  /** A user's threads, pinned first, then most recently active first; with `folderId`, only that folder's. */
  listThreads(userId: string, options?: { limit?: number, folderId?: string }): Promise<ChatThread[]>
  renameThread(threadId: string, title: string, now?: number): Promise<boolean>
  /** Pins, files or sets how the thread asks the model; false when it does not exist. */
  updateThread(threadId: string, patch: ThreadPatch): Promise<boolean>
  /** Shows the branch ending at `messageId` (see threads/versions.ts); false when the thread does not exist. */
  setActiveMessage(threadId: string, messageId: string): Promise<boolean>
  /** Stores a file sent in `threadId` (the thread must exist); its bytes are deleted with the thread. */
  addAttachment(input: Omit<StoredAttachment, 'createdAt'> & { now?: number }): Promise<void>
  /** A stored file with its bytes, or null. */
  readAttachment(attachmentId: string): Promise<StoredAttachment | null>
  /** The bytes of every file `userId` keeps (for their storage quota). */
  attachmentBytes(userId: string): Promise<number>
  /** Deletes the thread, its messages, its files and its queue. */
  deleteThread(threadId: string): Promise<boolean>
  /** Adds a message and marks the thread active. */
  appendMessage(message: NewThreadMessage): Promise<ThreadMessage>
  updateMessage(messageId: string, update: ThreadMessageUpdate): Promise<boolean>
  getMessage(messageId: string): Promise<ThreadMessage | null>
  /** A thread's messages, oldest first. */
  listMessages(threadId: string): Promise<ThreadMessage[]>
  /**
   * `userId`'s conversations whose title or messages hold every word of `query` (as word prefixes;
   * see search-terms.ts), one hit per conversation, best first; at most `limit` (default 20).
   */
  searchThreads(userId: string, query: string, options?: { limit?: number, folderId?: string }): Promise<ThreadSearchHit[]>
  /** Sets (or with null takes back) the owner's 👍 / 👎 on an assistant message; false when it does not exist. */
  setFeedback(messageId: string, feedback: MessageFeedback | null): Promise<boolean>
  /** Feedback given at or after `since`, newest first, at most `limit` (the admin's report). */
  listFeedback(since: number, limit: number): Promise<FeedbackRow[]>
  close(): Promise<void>
}
