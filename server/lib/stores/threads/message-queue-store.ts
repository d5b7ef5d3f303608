/**
 * The message queue port (a sub-store of the thread store: `threads.queue`): messages lined up in a
 * conversation while an answer runs (shared/types/message-queue.ts). Memory, sqlite and Convex
 * implement it the same way; one contract suite pins it. A queue goes with its thread.
 */
import type { QueuedMessage } from '../../../../shared/types/message-queue'

/** A queued message as the store keeps it: with the person's own API key, sealed, when they sent one. */
export type StoredQueuedMessage = QueuedMessage & { apiKeyCiphertext?: string }

/** What `update` changes; `null` clears. */
export interface QueuedMessagePatch {
  content?: string
  position?: number
  steerJobId?: string | null
  blocked?: string | null
}

/** A conversation's queue (see the module comment). */
export interface MessageQueueStore {
  /** The thread's queued messages, first to go first. */
  list(threadId: string): Promise<StoredQueuedMessage[]>
  get(id: string): Promise<StoredQueuedMessage | null>
  add(item: StoredQueuedMessage): Promise<void>
  /** Changes a message whose send has not begun; false when it is gone or being sent. */
  update(id: string, patch: QueuedMessagePatch, now?: number): Promise<boolean>
  /** Marks the send of `id` begun with its answer's ids, unless one had begun (compare-and-set: one caller wins). */
  claim(id: string, sending: NonNullable<QueuedMessage['sending']>, now?: number): Promise<boolean>
  /** A send that could not start before anything was stored: it waits again, saying why (`blocked`). */
  release(id: string, blocked: string, now?: number): Promise<boolean>
  /** Takes a message out; true for the call that took it. */
  remove(id: string): Promise<boolean>
  /** Threads with queued messages (at most `limit`), for picking up sends after a restart. */
  threadsWithItems(limit: number): Promise<string[]>
}

/** `item` with `patch` applied (memory and Convex; sqlite does the same in SQL). */
export function patchedQueuedMessage<T extends QueuedMessage>(item: T, patch: QueuedMessagePatch, now: number): T {
  const next = { ...item, updatedAt: now }
  if (patch.content !== undefined) next.content = patch.content
  if (patch.position !== undefined) next.position = patch.position
  if (patch.steerJobId === null) delete next.steerJobId
  else if (patch.steerJobId !== undefined) next.steerJobId = patch.steerJobId
  if (patch.blocked === null) delete next.blocked
  else if (patch.blocked !== undefined) next.blocked = patch.blocked
  return next
}
