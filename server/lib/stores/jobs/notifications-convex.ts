/** The notifications of the Convex job store (see job-store.ts and convex/notifications.ts). */
import { api } from '../../../../convex/_generated/api'
import type { JobNotification } from '../../../../shared/types/job'
import { listLimit, type JobNotificationStore } from './job-store'
import type { ConvexFunctionClient } from './convex'

/** The notifications kept in the deployment `client` talks to. */
export function createConvexNotifications(client: ConvexFunctionClient, secret: string): JobNotificationStore {
  return {
    async add({ now, ...fields }) {
      return await client.mutation(api.notifications.add, { secret, ...fields, now: now ?? Date.now() }) as JobNotification
    },
    async list(userId, options = {}) {
      return await client.query(api.notifications.list, { secret, userId, unreadOnly: options.unreadOnly, limit: listLimit(options.limit) }) as JobNotification[]
    },
    async markRead(userId, ids, now = Date.now()) {
      return client.mutation(api.notifications.markRead, { secret, userId, ids: ids ? [...ids] : undefined, now })
    },
  }
}
