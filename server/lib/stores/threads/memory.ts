/** In-memory thread store for tests. Records are copied in and out. */
import type { ChatThread, ThreadMessage, ThreadSearchHit } from '../../../../shared/types/thread'
import type { StoredAttachment, ThreadStore } from './thread-store'
import { matchesAll, searchTerms, snippetAround } from '../../../../shared/search-terms'
import { createMemoryMessageQueue } from './message-queue-memory'

/** Creates an empty in-memory thread store. */
export function createMemoryThreadStore(): ThreadStore {
  const threads = new Map<string, ChatThread>()
  const messages = new Map<string, ThreadMessage>()
  let sequence = 0
  const order = new Map<string, number>()
  const attachments = new Map<string, StoredAttachment>()
  const queue = createMemoryMessageQueue()

  return {
    queue,
    async createThread({ userId, title, id, now = Date.now() }) {
      const thread: ChatThread = { id: id ?? crypto.randomUUID(), userId, title: title?.trim() || 'New chat', createdAt: now, updatedAt: now }
      if (threads.has(thread.id)) throw new Error(`Thread ${thread.id} already exists.`)
      threads.set(thread.id, thread)
      return structuredClone(thread)
    },
    async getThread(threadId) {
      const thread = threads.get(threadId)
      return thread ? structuredClone(thread) : null
    },
    async listThreads(userId, { limit = 100, folderId } = {}) {
      return [...threads.values()]
        .filter(thread => thread.userId === userId && (folderId === undefined || thread.folderId === folderId))
        .sort((a, b) => Number(b.pinned ?? false) - Number(a.pinned ?? false) || b.updatedAt - a.updatedAt)
        .slice(0, limit)
        .map(thread => structuredClone(thread))
    },
    async updateThread(threadId, patch) {
      const thread = threads.get(threadId)
      if (!thread) return false
      if (patch.pinned !== undefined) {
        if (patch.pinned) thread.pinned = true
        else delete thread.pinned
      }
      if (patch.folderId !== undefined) {
        if (patch.folderId === null) delete thread.folderId
        else thread.folderId = patch.folderId
      }
      if (patch.settings !== undefined) {
        if (patch.settings === null) delete thread.settings
        else thread.settings = structuredClone(patch.settings)
      }
      return true
    },
    async renameThread(threadId, title, now = Date.now()) {
      const thread = threads.get(threadId)
      if (!thread) return false
      thread.title = title
      thread.updatedAt = now
      return true
    },
    async setActiveMessage(threadId, messageId) {
      const thread = threads.get(threadId)
      if (!thread) return false
      thread.activeMessageId = messageId
      return true
    },
    async searchThreads(userId, query, { limit = 20, folderId } = {}) {
      const terms = searchTerms(query)
      if (terms.length === 0) return []
      const hits: ThreadSearchHit[] = []
      const mine = [...threads.values()].filter(thread => thread.userId === userId && (folderId === undefined || thread.folderId === folderId)).sort((a, b) => b.updatedAt - a.updatedAt)
      for (const thread of mine) {
        if (hits.length >= limit) break
        if (matchesAll(thread.title, terms)) {
          hits.push({ thread: structuredClone(thread), snippet: snippetAround(thread.title, terms) })
          continue
        }
        const found = [...messages.values()].find(message => message.threadId === thread.id && matchesAll(message.content, terms))
        if (found) hits.push({ thread: structuredClone(thread), messageId: found.id, role: found.role, snippet: snippetAround(found.content, terms) })
      }
      return hits
    },
    async deleteThread(threadId) {
      if (!threads.delete(threadId)) return false
      for (const message of messages.values()) if (message.threadId === threadId) messages.delete(message.id)
      for (const stored of attachments.values()) if (stored.threadId === threadId) attachments.delete(stored.attachment.id)
      queue.dropThread(threadId)
      return true
    },
    async addAttachment({ now = Date.now(), ...input }) {
      if (!threads.has(input.threadId)) throw new Error(`Thread ${input.threadId} does not exist.`)
      attachments.set(input.attachment.id, { ...structuredClone(input), createdAt: now })
    },
    async readAttachment(attachmentId) {
      const stored = attachments.get(attachmentId)
      return stored ? structuredClone(stored) : null
    },
    async attachmentBytes(userId) {
      let total = 0
      for (const stored of attachments.values()) if (stored.userId === userId) total += stored.attachment.size
      return total
    },
    async appendMessage({ id, now = Date.now(), ...fields }) {
      const thread = threads.get(fields.threadId)
      if (!thread) throw new Error(`Thread ${fields.threadId} does not exist.`)
      const message: ThreadMessage = { ...structuredClone(fields), id: id ?? crypto.randomUUID(), createdAt: now }
      messages.set(message.id, message)
      order.set(message.id, sequence++)
      thread.updatedAt = Math.max(thread.updatedAt, now)
      return structuredClone(message)
    },
    async updateMessage(messageId, update) {
      const message = messages.get(messageId)
      if (!message) return false
      Object.assign(message, structuredClone(update))
      return true
    },
    async setFeedback(messageId, feedback) {
      const message = messages.get(messageId)
      if (!message) return false
      if (feedback) message.feedback = { ...feedback }
      else delete message.feedback
      return true
    },
    async listFeedback(since, limit) {
      return [...messages.values()]
        .filter(message => message.feedback && message.feedback.at >= since)
        .sort((a, b) => b.feedback!.at - a.feedback!.at)
        .slice(0, limit)
        .map(message => ({ ...message.feedback!, model: message.model ?? 'unknown' }))
    },
    async getMessage(messageId) {
      const message = messages.get(messageId)
      return message ? structuredClone(message) : null
    },
    async listMessages(threadId) {
      return [...messages.values()].filter(message => message.threadId === threadId)
        .sort((a, b) => a.createdAt - b.createdAt || order.get(a.id)! - order.get(b.id)!)
        .map(message => structuredClone(message))
    },
    async close() {
      threads.clear()
      messages.clear()
      attachments.clear()
    },
  }
}
