/** The message queue on Convex (convex/threads.ts `queue*`), on the thread store's client. */
import { api } from '../../../../convex/_generated/api'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { MessageQueueStore, StoredQueuedMessage } from './message-queue-store'

/** The queue on `client`. */
export function createConvexMessageQueue({ client, secret }: { client: ConvexFunctionClient, secret: string }): MessageQueueStore {
  return {
    async list(threadId) {
      return await client.query(api.threads.queueList, { secret, threadId }) as StoredQueuedMessage[]
    },
    async get(id) {
      return await client.query(api.threads.queueGet, { secret, itemId: id }) as StoredQueuedMessage | null
    },
    async add(item) {
      await client.mutation(api.threads.queueAdd, { secret, itemId: item.id, threadId: item.threadId, userId: item.userId, position: item.position, content: item.content, model: item.model, tools: item.tools, apiKeyCiphertext: item.apiKeyCiphertext, now: item.createdAt, steerJobId: item.steerJobId, steerNodeId: item.steerNodeId })
    },
    async update(id, patch, now = Date.now()) {
      return client.mutation(api.threads.queueUpdate, { secret, itemId: id, now, ...patch })
    },
    async claim(id, sending, now = Date.now()) {
      return client.mutation(api.threads.queueClaim, { secret, itemId: id, now, sending })
    },
    async release(id, blocked, now = Date.now()) {
      return client.mutation(api.threads.queueClaim, { secret, itemId: id, now, blocked })
    },
    async remove(id) {
      return client.mutation(api.threads.queueRemove, { secret, itemId: id })
    },
    async threadsWithItems(limit) {
      return client.query(api.threads.queueThreads, { secret, limit })
    },
  }
}
