/** The notifications of the in-memory job store (see job-store.ts). */
import { randomUUID } from 'node:crypto'
import type { JobNotification } from '../../../../shared/types/job'
import { listLimit, type JobNotificationStore } from './job-store'

/** The store's methods, and how its job store drops the notifications of deleted jobs and people. */
export function createMemoryNotifications(): JobNotificationStore & { deleteFor(jobIds: ReadonlySet<string>, userId?: string): void, clear(): void } {
  const notifications = new Map<string, JobNotification>()
  return {
    async add({ now, ...fields }) {
      const notification: JobNotification = { ...fields, id: randomUUID(), createdAt: now ?? Date.now() }
      notifications.set(notification.id, notification)
      return { ...notification }
    },
    async list(userId, options = {}) {
      // Newest first; of two made in the same millisecond, the later added (as SQLite's rowid and Convex's creation time order them).
      return [...notifications.values()]
        .reverse()
        .filter(item => item.userId === userId && (!options.unreadOnly || item.readAt === undefined))
        .sort((a, b) => b.createdAt - a.createdAt)
        .slice(0, listLimit(options.limit))
        .map(item => ({ ...item }))
    },
    async markRead(userId, ids, now = Date.now()) {
      const wanted = ids ? new Set(ids) : undefined
      let changed = 0
      for (const item of notifications.values()) {
        if (item.userId === userId && item.readAt === undefined && (!wanted || wanted.has(item.id))) {
          item.readAt = now
          changed++
        }
      }
      return changed
    },
    deleteFor(jobIds, userId) {
      for (const [id, item] of notifications) if (jobIds.has(item.jobId) || item.userId === userId) notifications.delete(id)
    },
    clear() {
      notifications.clear()
    },
  }
}
