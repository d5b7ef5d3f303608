/** The notifications of the sqlite job store (see job-store.ts); deleted with their jobs by its retention sweep. */
import { randomUUID } from 'node:crypto'
import type { Database } from 'better-sqlite3'
import type { JobNotification } from '../../../../shared/types/job'
import { listLimit, type JobNotificationStore } from './job-store'
import { toNotification, type NotificationRow } from './sqlite-rows'

/** The notifications kept in `db` (the job store's database). */
export function createSqliteNotifications(db: Database): JobNotificationStore {
  const statements = {
    insert: db.prepare(`INSERT INTO job_notifications (id, user_id, job_id, thread_id, kind, title, body, created_at)
      VALUES (@id, @userId, @jobId, @threadId, @kind, @title, @body, @createdAt)`),
    list: db.prepare<[string, number], NotificationRow>('SELECT * FROM job_notifications WHERE user_id = ? ORDER BY created_at DESC, rowid DESC LIMIT ?'),
    listUnread: db.prepare<[string, number], NotificationRow>('SELECT * FROM job_notifications WHERE user_id = ? AND read_at IS NULL ORDER BY created_at DESC, rowid DESC LIMIT ?'),
    markRead: db.prepare('UPDATE job_notifications SET read_at = ? WHERE user_id = ? AND id = ? AND read_at IS NULL'),
    markAllRead: db.prepare('UPDATE job_notifications SET read_at = ? WHERE user_id = ? AND read_at IS NULL'),
  }

  const markRead = db.transaction((userId: string, ids: readonly string[] | undefined, now: number) => {
    if (!ids) return statements.markAllRead.run(now, userId).changes
    let changed = 0
    for (const id of ids) changed += statements.markRead.run(now, userId, id).changes
    return changed
  })

  return {
    async add({ now, ...fields }) {
      const notification: JobNotification = { ...fields, id: randomUUID(), createdAt: now ?? Date.now() }
      statements.insert.run(notification)
      return notification
    },
    async list(userId, options = {}) {
      const limit = listLimit(options.limit)
      const rows = options.unreadOnly ? statements.listUnread.all(userId, limit) : statements.list.all(userId, limit)
      return rows.map(toNotification)
    },
    async markRead(userId, ids, now = Date.now()) {
      return markRead(userId, ids, now)
    },
  }
}
