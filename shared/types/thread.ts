/**
 * Conversations as the server keeps them: threads owned by a session user, and their messages.
 * An assistant message is produced by a background job; it carries the job's id while it runs and
 * the final text, tool calls and outcome once it has ended.
 */
import type { ActiveToolCall, JobError, JobSteer } from './job'
import type { QueuedMessage } from './message-queue'
import type { Usage } from './chat'
import type { MessageAttachment } from './attachment'
import type { ChatSettings, MessageFeedback } from './personal'

/** A conversation. */
export interface ChatThread {
  id: string
  userId: string
  title: string
  createdAt: number
  updatedAt: number
  /**
   * The last message of the branch on view, when the user picked one of several versions
   * (absent: the newest message's branch).
   */
  activeMessageId?: string
  /** Pinned conversations are listed first. */
  pinned?: boolean
  /** The folder it is filed in (one of its owner's; absent: none). */
  folderId?: string
  /** How it asks the model (absent: the model's defaults and the person's custom instructions). */
  settings?: ChatSettings
}

/** Where an assistant message stands: its job's status. */
export type ChatMessageStatus = 'streaming' | 'complete' | 'error' | 'aborted' | 'rejected'

/** One message of a thread. */
export interface ThreadMessage {
  id: string
  threadId: string
  role: 'user' | 'assistant'
  content: string
  createdAt: number
  /**
   * The message this one follows: the previous turn of its branch, or the thread's id for a first
   * message. Several messages with one parent are versions of each other (a regenerated answer,
   * an edited question). Absent on messages stored before versions: they follow the message
   * stored before them.
   */
  parentId?: string
  /** User messages: the files sent with it; assistant messages: the images its answer made (`generate_image`). */
  attachments?: MessageAttachment[]
  /** Assistant messages: the model that answered and the job that produced the answer. */
  model?: string
  jobId?: string
  status?: ChatMessageStatus
  reasoning?: string
  toolCalls?: ActiveToolCall[]
  error?: JobError
  finishReason?: string
  /** Assistant messages: the tokens and cost of every model request its job made (absent: not reported, or answered before usage was kept). */
  usage?: Usage
  /** Assistant messages: what the person sent the answer while it ran (shown in it, and given to later questions in order). */
  steers?: JobSteer[]
  /** Assistant messages: the owner's 👍 / 👎. */
  feedback?: MessageFeedback
}

/** Where a message stands among its versions (messages with the same parent and role), oldest first. */
export interface MessageVersions {
  /** Every version's id, oldest first. */
  ids: string[]
  /** This message's place in `ids`. */
  index: number
}

/** A message of the branch on view, with its versions when there are several. */
export interface ThreadPathMessage extends ThreadMessage {
  versions?: MessageVersions
  /**
   * The last answer of the branch, when several models answered its question side by side: every
   * one of those answers (this one included), in the order they were asked for.
   */
  sideBySide?: ThreadMessage[]
}

/** A conversation with the messages of the branch on view, oldest first (`GET /api/threads/:id`). */
export interface ThreadWithMessages {
  thread: ChatThread
  messages: ThreadPathMessage[]
  /** Messages lined up to follow the running answer (absent: none). */
  queue?: QueuedMessage[]
}

/** The stored turns of a sent message and the job answering it (`POST /api/threads/:id/messages`). */
export interface SentThreadMessage {
  userMessage: ThreadMessage
  /** The answer of the model asked first (the branch on view until the person picks another). */
  assistantMessage: ThreadMessage
  jobId: string
  /**
   * Side by side (`compareWith`): the other models' answers to the same question, each a job of
   * its own and a version of the first answer; without a `jobId` when it could not start (its
   * message says why).
   */
  alternatives?: Array<{ assistantMessage: ThreadMessage, jobId?: string }>
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
