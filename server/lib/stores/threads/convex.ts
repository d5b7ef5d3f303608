/** Threads and messages on Convex (see convex/threads.ts), on the same client shape as the job store. */
import { api } from '../../../../convex/_generated/api'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { ChatThread, ThreadMessage } from '../../../../shared/types/thread'
import type { ThreadStore } from './thread-store'
import { searchTerms, snippetAround } from '../../../../shared/search-terms'
import { createConvexMessageQueue } from './message-queue-convex'

/** Bytes per stored chunk of a file (a Convex document holds at most 1 MiB). */
const ATTACHMENT_CHUNK_BYTES = 512 * 1024

/** A Convex thread store. */
export function createConvexThreadStore(options: { client: ConvexFunctionClient, secret: string }): ThreadStore {
  const { client, secret } = options
  return {
    queue: createConvexMessageQueue(options),
    async createThread({ userId, title, id, now = Date.now() }) {
      return await client.mutation(api.threads.create, { secret, threadId: id ?? crypto.randomUUID(), userId, title: title?.trim() || 'New chat', now }) as ChatThread
    },
    async getThread(threadId) {
      return await client.query(api.threads.get, { secret, threadId }) as ChatThread | null
    },
    async listThreads(userId, { limit = 100, folderId } = {}) {
      return await client.query(api.threads.list, { secret, userId, limit, folderId }) as ChatThread[]
    },
    async updateThread(threadId, patch) {
      return client.mutation(api.threads.update, { secret, threadId, ...patch })
    },
    async setFeedback(messageId, feedback) {
      return client.mutation(api.threads.setFeedback, { secret, messageId, feedback })
    },
    async listFeedback(since, limit) {
      return client.query(api.threads.listFeedback, { secret, since, limit })
    },
    async renameThread(threadId, title, now = Date.now()) {
      return client.mutation(api.threads.rename, { secret, threadId, title, now })
    },
    async addAttachment({ attachment, bytes, threadId, userId, now = Date.now() }) {
      let chunks = 0
      for (let offset = 0; offset < bytes.length; offset += ATTACHMENT_CHUNK_BYTES) {
        const piece = bytes.slice(offset, offset + ATTACHMENT_CHUNK_BYTES)
        await client.mutation(api.threads.addAttachmentChunk, { secret, attachmentId: attachment.id, index: chunks++, bytes: piece.buffer })
      }
      await client.mutation(api.threads.addAttachment, { secret, attachment, threadId, userId, now, chunks })
    },
    async readAttachment(attachmentId) {
      const found = await client.query(api.threads.getAttachment, { secret, attachmentId })
      if (!found) return null
      const bytes = new Uint8Array(found.attachment.size)
      let offset = 0
      for (let index = 0; index < found.chunks; index++) {
        const piece = await client.query(api.threads.attachmentChunk, { secret, attachmentId, index })
        if (!piece) return null
        bytes.set(new Uint8Array(piece), offset)
        offset += piece.byteLength
      }
      const { chunks: _chunks, ...stored } = found
      return { ...stored, bytes }
    },
    async attachmentBytes(userId) {
      return client.query(api.threads.attachmentBytes, { secret, userId })
    },
    async setActiveMessage(threadId, messageId) {
      return client.mutation(api.threads.setActiveMessage, { secret, threadId, messageId })
    },
    async searchThreads(userId, query, { limit = 20, folderId } = {}) {
      const terms = searchTerms(query)
      if (terms.length === 0) return []
      const found = await client.query(api.threads.search, { secret, userId, terms, limit, folderId })
      return found.map(hit => hit.message
          ? { thread: hit.thread as ChatThread, messageId: hit.message.id, role: hit.message.role, snippet: snippetAround(hit.message.content, terms) }
          : { thread: hit.thread as ChatThread, snippet: snippetAround(hit.thread.title, terms) })
    },
    async deleteThread(threadId) {
      return client.mutation(api.threads.remove, { secret, threadId })
    },
    async appendMessage({ id, now = Date.now(), threadId, role, content, parentId, attachments, model, jobId, status }) {
      return await client.mutation(api.threads.appendMessage, { secret, messageId: id ?? crypto.randomUUID(), threadId, role, content, now, parentId, attachments, model, jobId, status }) as ThreadMessage
    },
    async updateMessage(messageId, update) {
      return client.mutation(api.threads.updateMessage, {
        secret,
        messageId,
        content: update.content,
        status: update.status,
        reasoning: update.reasoning,
        toolCalls: update.toolCalls ? JSON.stringify(update.toolCalls) : undefined,
        error: update.error,
        finishReason: update.finishReason,
        usage: update.usage,
        jobId: update.jobId,
        steers: update.steers?.length ? JSON.stringify(update.steers) : undefined,
        attachments: update.attachments?.length ? update.attachments : undefined,
      })
    },
    async getMessage(messageId) {
      return await client.query(api.threads.getMessage, { secret, messageId }) as ThreadMessage | null
    },
    async listMessages(threadId) {
      return await client.query(api.threads.listMessages, { secret, threadId }) as ThreadMessage[]
    },
    async close() {},
  }
}
