/** The message queue in the sqlite file, on the thread store's connection (table `thread_queue`, see sqlite-queue-schema.ts). */
import type { Database } from 'better-sqlite3'
import type { MessageQueueStore, StoredQueuedMessage } from './message-queue-store'

interface QueueRow {
  id: string
  thread_id: string
  user_id: string
  position: number
  body: string
  created_at: number
  updated_at: number
  steer_job_id: string | null
  blocked: string | null
  sending: string | null
}

/** What the `body` column holds: the parts of a queued message that are only read whole. */
type QueueBody = Pick<StoredQueuedMessage, 'content' | 'model' | 'tools' | 'apiKeyCiphertext' | 'steerNodeId'>

function toItem(row: QueueRow): StoredQueuedMessage {
  const body = JSON.parse(row.body) as QueueBody
  const item: StoredQueuedMessage = { id: row.id, threadId: row.thread_id, userId: row.user_id, position: row.position, createdAt: row.created_at, updatedAt: row.updated_at, content: body.content, model: body.model }
  if (body.tools) item.tools = body.tools
  if (body.apiKeyCiphertext) item.apiKeyCiphertext = body.apiKeyCiphertext
  if (body.steerNodeId) item.steerNodeId = body.steerNodeId
  if (row.steer_job_id !== null) item.steerJobId = row.steer_job_id
  if (row.blocked !== null) item.blocked = row.blocked
  if (row.sending !== null) item.sending = JSON.parse(row.sending)
  return item
}

function bodyOf(item: QueueBody): string {
  return JSON.stringify({ content: item.content, model: item.model, ...(item.tools ? { tools: item.tools } : {}), ...(item.apiKeyCiphertext ? { apiKeyCiphertext: item.apiKeyCiphertext } : {}), ...(item.steerNodeId ? { steerNodeId: item.steerNodeId } : {}) })
}

/** The queue on `db` (the thread store's connection, migrated). */
export function createSqliteMessageQueue(db: Database): MessageQueueStore {
  const statements = {
    list: db.prepare<[string], QueueRow>('SELECT * FROM thread_queue WHERE thread_id = ? ORDER BY position, created_at'),
    get: db.prepare<[string], QueueRow>('SELECT * FROM thread_queue WHERE id = ?'),
    insert: db.prepare(`INSERT INTO thread_queue (id, thread_id, user_id, position, body, created_at, updated_at, steer_job_id, blocked, sending)
      VALUES (@id, @threadId, @userId, @position, @body, @createdAt, @updatedAt, @steerJobId, @blocked, @sending)`),
    update: db.prepare(`UPDATE thread_queue SET
        body = coalesce(@body, body),
        position = coalesce(@position, position),
        steer_job_id = CASE WHEN @clearSteer THEN NULL ELSE coalesce(@steerJobId, steer_job_id) END,
        blocked = CASE WHEN @clearBlocked THEN NULL ELSE coalesce(@blocked, blocked) END,
        updated_at = @now
      WHERE id = @id AND sending IS NULL`),
    claim: db.prepare<[string, number, string]>('UPDATE thread_queue SET sending = ?, blocked = NULL, updated_at = ? WHERE id = ? AND sending IS NULL'),
    release: db.prepare<[string, number, string]>('UPDATE thread_queue SET sending = NULL, blocked = ?, updated_at = ? WHERE id = ?'),
    remove: db.prepare<[string]>('DELETE FROM thread_queue WHERE id = ?'),
    threads: db.prepare<[number], { thread_id: string }>('SELECT DISTINCT thread_id FROM thread_queue LIMIT ?'),
  }
  return {
    async list(threadId) {
      return statements.list.all(threadId).map(toItem)
    },
    async get(id) {
      const row = statements.get.get(id)
      return row ? toItem(row) : null
    },
    async add(item) {
      statements.insert.run({ id: item.id, threadId: item.threadId, userId: item.userId, position: item.position, body: bodyOf(item), createdAt: item.createdAt, updatedAt: item.updatedAt, steerJobId: item.steerJobId ?? null, blocked: item.blocked ?? null, sending: item.sending ? JSON.stringify(item.sending) : null })
    },
    async update(id, patch, now = Date.now()) {
      let body: string | null = null
      if (patch.content !== undefined) {
        const row = statements.get.get(id)
        if (!row) return false
        body = bodyOf({ ...JSON.parse(row.body) as QueueBody, content: patch.content })
      }
      return statements.update.run({
        id, now, body,
        position: patch.position ?? null,
        steerJobId: patch.steerJobId ?? null,
        clearSteer: patch.steerJobId === null ? 1 : 0,
        blocked: patch.blocked ?? null,
        clearBlocked: patch.blocked === null ? 1 : 0,
      }).changes > 0
    },
    async claim(id, sending, now = Date.now()) {
      return statements.claim.run(JSON.stringify(sending), now, id).changes > 0
    },
    async release(id, blocked, now = Date.now()) {
      return statements.release.run(blocked, now, id).changes > 0
    },
    async remove(id) {
      return statements.remove.run(id).changes > 0
    },
    async threadsWithItems(limit) {
      return statements.threads.all(limit).map(row => row.thread_id)
    },
  }
}
