/** The message queue in process memory (tests); records are copied in and out. */
import { patchedQueuedMessage, type MessageQueueStore, type StoredQueuedMessage } from './message-queue-store'

/** An empty in-memory queue; `deleteThread` of its thread store calls `dropThread`. */
export function createMemoryMessageQueue(): MessageQueueStore & { dropThread: (threadId: string) => void } {
  const items = new Map<string, StoredQueuedMessage>()
  const byPosition = (a: StoredQueuedMessage, b: StoredQueuedMessage) => a.position - b.position || a.createdAt - b.createdAt
  return {
    async list(threadId) {
      return [...items.values()].filter(item => item.threadId === threadId).sort(byPosition).map(item => structuredClone(item))
    },
    async get(id) {
      const item = items.get(id)
      return item ? structuredClone(item) : null
    },
    async add(item) {
      if (items.has(item.id)) throw new Error(`Queued message ${item.id} already exists.`)
      items.set(item.id, structuredClone(item))
    },
    async update(id, patch, now = Date.now()) {
      const item = items.get(id)
      if (!item || item.sending) return false
      items.set(id, patchedQueuedMessage(item, patch, now))
      return true
    },
    async claim(id, sending, now = Date.now()) {
      const item = items.get(id)
      if (!item || item.sending) return false
      const { blocked: _blocked, ...rest } = item
      items.set(id, { ...rest, sending: { ...sending }, updatedAt: now })
      return true
    },
    async release(id, blocked, now = Date.now()) {
      const item = items.get(id)
      if (!item) return false
      const { sending: _sending, ...rest } = item
      items.set(id, { ...rest, blocked, updatedAt: now })
      return true
    },
    async remove(id) {
      return items.delete(id)
    },
    async threadsWithItems(limit) {
      return [...new Set([...items.values()].map(item => item.threadId))].slice(0, limit)
    },
    dropThread(threadId) {
      for (const item of items.values()) if (item.threadId === threadId) items.delete(item.id)
    },
  }
}
