/**
 * Threads and messages in the same sqlite file as the jobs (its own connection; the schema's
 * migrations are shared, see lib/background-jobs/sqlite-schema.ts).
 */
import { openSqliteDatabase } from '../sqlite/database'
import type { ChatThread, ThreadMessage, ThreadSearchHit } from '../../../../shared/types/thread'
import type { StoredAttachment, ThreadPatch, ThreadStore } from './thread-store'
import type { MessageFeedback } from '../../../../shared/types/personal'
import type { AttachmentKind } from '../../../../shared/types/attachment'
import { ftsQuery, searchTerms } from '../../../../shared/search-terms'
import { createSqliteMessageQueue } from './message-queue-sqlite'

interface ThreadRow { id: string, user_id: string, title: string, created_at: number, updated_at: number, active_message_id: string | null, pinned: number, folder_id: string | null, settings: string | null }
interface MessageRow {
  id: string
  thread_id: string
  role: ThreadMessage['role']
  content: string
  created_at: number
  parent_id: string | null
  attachments: string | null
  model: string | null
  job_id: string | null
  status: ThreadMessage['status'] | null
  reasoning: string | null
  tool_calls: string | null
  error: string | null
  finish_reason: string | null
  usage: string | null
  feedback: string | null
  steers: string | null
}

interface AttachmentRow { id: string, thread_id: string, user_id: string, name: string, media_type: string, kind: AttachmentKind, size: number, created_at: number, bytes: Buffer }

function toThread(row: ThreadRow): ChatThread {
  const thread: ChatThread = { id: row.id, userId: row.user_id, title: row.title, createdAt: row.created_at, updatedAt: row.updated_at }
  if (row.active_message_id !== null) thread.activeMessageId = row.active_message_id
  if (row.pinned) thread.pinned = true
  if (row.folder_id !== null) thread.folderId = row.folder_id
  if (row.settings !== null) thread.settings = JSON.parse(row.settings)
  return thread
}

function toMessage(row: MessageRow): ThreadMessage {
  const message: ThreadMessage = { id: row.id, threadId: row.thread_id, role: row.role, content: row.content, createdAt: row.created_at }
  if (row.parent_id !== null) message.parentId = row.parent_id
  if (row.attachments !== null) message.attachments = JSON.parse(row.attachments)
  if (row.model !== null) message.model = row.model
  if (row.job_id !== null) message.jobId = row.job_id
  if (row.status !== null) message.status = row.status
  if (row.reasoning !== null) message.reasoning = row.reasoning
  if (row.tool_calls !== null) message.toolCalls = JSON.parse(row.tool_calls)
  if (row.error !== null) message.error = JSON.parse(row.error)
  if (row.finish_reason !== null) message.finishReason = row.finish_reason
  if (row.usage !== null) message.usage = JSON.parse(row.usage)
  if (row.steers !== null) message.steers = JSON.parse(row.steers)
  if (row.feedback !== null) message.feedback = JSON.parse(row.feedback)
  return message
}

/** Opens (creating and migrating if needed) the thread store in the sqlite file at `path`. */
export function createSqliteThreadStore(options: { path: string }): ThreadStore {
  const db = openSqliteDatabase(options.path)

  const statements = {
    insertThread: db.prepare('INSERT INTO threads (id, user_id, title, created_at, updated_at) VALUES (@id, @userId, @title, @createdAt, @updatedAt)'),
    getThread: db.prepare<[string], ThreadRow>('SELECT * FROM threads WHERE id = ?'),
    listThreads: db.prepare<[string, number], ThreadRow>('SELECT * FROM threads WHERE user_id = ? ORDER BY pinned DESC, updated_at DESC LIMIT ?'),
    listFolder: db.prepare<[string, string, number], ThreadRow>('SELECT * FROM threads WHERE user_id = ? AND folder_id = ? ORDER BY pinned DESC, updated_at DESC LIMIT ?'),
    setPinned: db.prepare<[number, string]>('UPDATE threads SET pinned = ? WHERE id = ?'),
    setFolder: db.prepare<[string | null, string]>('UPDATE threads SET folder_id = ? WHERE id = ?'),
    setSettings: db.prepare<[string | null, string]>('UPDATE threads SET settings = ? WHERE id = ?'),
    setFeedback: db.prepare<[string | null, number | null, string]>('UPDATE thread_messages SET feedback = ?, feedback_at = ? WHERE id = ?'),
    listFeedback: db.prepare<[number, number], { feedback: string, model: string | null }>('SELECT feedback, model FROM thread_messages WHERE feedback_at >= ? ORDER BY feedback_at DESC LIMIT ?'),
    searchTitles: db.prepare<{ query: string, userId: string, folderId: string | null, limit: number }, ThreadRow>(`SELECT t.* FROM threads_fts JOIN threads t ON t.rowid = threads_fts.rowid
      WHERE threads_fts MATCH @query AND t.user_id = @userId AND (@folderId IS NULL OR t.folder_id = @folderId) ORDER BY bm25(threads_fts) LIMIT @limit`),
    searchMessages: db.prepare<{ query: string, userId: string, folderId: string | null, limit: number }, ThreadRow & { message_id: string, role: ThreadMessage['role'], snippet: string }>(`SELECT t.*, m.id AS message_id, m.role,
        snippet(thread_messages_fts, 0, '', '', '…', 24) AS snippet
      FROM thread_messages_fts JOIN thread_messages m ON m.rowid = thread_messages_fts.rowid JOIN threads t ON t.id = m.thread_id
      WHERE thread_messages_fts MATCH @query AND t.user_id = @userId AND (@folderId IS NULL OR t.folder_id = @folderId) ORDER BY bm25(thread_messages_fts) LIMIT @limit`),
    rename: db.prepare('UPDATE threads SET title = ?, updated_at = ? WHERE id = ?'),
    setActive: db.prepare('UPDATE threads SET active_message_id = ? WHERE id = ?'),
    touch: db.prepare('UPDATE threads SET updated_at = max(updated_at, ?) WHERE id = ?'),
    deleteThread: db.prepare('DELETE FROM threads WHERE id = ?'),
    nextSequence: db.prepare<[string], { next: number }>('SELECT coalesce(max(sequence), 0) + 1 AS next FROM thread_messages WHERE thread_id = ?'),
    insertMessage: db.prepare(`INSERT INTO thread_messages (id, thread_id, sequence, role, content, created_at, parent_id, attachments, model, job_id, status, reasoning, tool_calls, error, finish_reason)
      VALUES (@id, @threadId, @sequence, @role, @content, @createdAt, @parentId, @attachments, @model, @jobId, @status, @reasoning, @toolCalls, @error, @finishReason)`),
    insertAttachment: db.prepare(`INSERT INTO thread_attachments (id, thread_id, user_id, name, media_type, kind, size, created_at, bytes)
      VALUES (@id, @threadId, @userId, @name, @mediaType, @kind, @size, @createdAt, @bytes)`),
    getAttachment: db.prepare<[string], AttachmentRow>('SELECT * FROM thread_attachments WHERE id = ?'),
    attachmentBytes: db.prepare<[string], { total: number }>('SELECT coalesce(sum(size), 0) AS total FROM thread_attachments WHERE user_id = ?'),
    getMessage: db.prepare<[string], MessageRow>('SELECT * FROM thread_messages WHERE id = ?'),
    listMessages: db.prepare<[string], MessageRow>('SELECT * FROM thread_messages WHERE thread_id = ? ORDER BY created_at, sequence'),
    updateMessage: db.prepare(`UPDATE thread_messages SET
        content = coalesce(@content, content),
        status = coalesce(@status, status),
        reasoning = coalesce(@reasoning, reasoning),
        tool_calls = coalesce(@toolCalls, tool_calls),
        error = coalesce(@error, error),
        finish_reason = coalesce(@finishReason, finish_reason),
        usage = coalesce(@usage, usage),
        steers = coalesce(@steers, steers),
        attachments = coalesce(@attachments, attachments),
        job_id = coalesce(@jobId, job_id)
      WHERE id = @id`),
  }

  const appendMessage = db.transaction((message: ThreadMessage) => {
    if (!statements.getThread.get(message.threadId)) throw new Error(`Thread ${message.threadId} does not exist.`)
    statements.insertMessage.run({
      id: message.id,
      threadId: message.threadId,
      sequence: statements.nextSequence.get(message.threadId)!.next,
      role: message.role,
      content: message.content,
      createdAt: message.createdAt,
      parentId: message.parentId ?? null,
      attachments: message.attachments?.length ? JSON.stringify(message.attachments) : null,
      model: message.model ?? null,
      jobId: message.jobId ?? null,
      status: message.status ?? null,
      reasoning: message.reasoning ?? null,
      toolCalls: message.toolCalls ? JSON.stringify(message.toolCalls) : null,
      error: message.error ? JSON.stringify(message.error) : null,
      finishReason: message.finishReason ?? null,
    })
    statements.touch.run(message.createdAt, message.threadId)
  })

  const updateThread = db.transaction((threadId: string, patch: ThreadPatch): boolean => {
    if (!statements.getThread.get(threadId)) return false
    if (patch.pinned !== undefined) statements.setPinned.run(patch.pinned ? 1 : 0, threadId)
    if (patch.folderId !== undefined) statements.setFolder.run(patch.folderId, threadId)
    if (patch.settings !== undefined) statements.setSettings.run(patch.settings ? JSON.stringify(patch.settings) : null, threadId)
    return true
  })

  return {
    queue: createSqliteMessageQueue(db),
    async createThread({ userId, title, id, now = Date.now() }) {
      const thread: ChatThread = { id: id ?? crypto.randomUUID(), userId, title: title?.trim() || 'New chat', createdAt: now, updatedAt: now }
      statements.insertThread.run(thread)
      return thread
    },
    async getThread(threadId) {
      const row = statements.getThread.get(threadId)
      return row ? toThread(row) : null
    },
    async listThreads(userId, { limit = 100, folderId } = {}) {
      const rows = folderId === undefined ? statements.listThreads.all(userId, limit) : statements.listFolder.all(userId, folderId, limit)
      return rows.map(toThread)
    },
    async updateThread(threadId, patch) {
      return updateThread(threadId, patch)
    },
    async setFeedback(messageId, feedback) {
      return statements.setFeedback.run(feedback ? JSON.stringify(feedback) : null, feedback?.at ?? null, messageId).changes > 0
    },
    async listFeedback(since, limit) {
      return statements.listFeedback.all(since, limit).map(row => ({ ...JSON.parse(row.feedback) as MessageFeedback, model: row.model ?? 'unknown' }))
    },
    async renameThread(threadId, title, now = Date.now()) {
      return statements.rename.run(title, now, threadId).changes > 0
    },
    async setActiveMessage(threadId, messageId) {
      return statements.setActive.run(messageId, threadId).changes > 0
    },
    async deleteThread(threadId) {
      return statements.deleteThread.run(threadId).changes > 0
    },
    async appendMessage({ id, now = Date.now(), ...fields }) {
      const message: ThreadMessage = { ...fields, id: id ?? crypto.randomUUID(), createdAt: now }
      appendMessage(message)
      return message
    },
    async updateMessage(messageId, update) {
      return statements.updateMessage.run({
        id: messageId,
        content: update.content ?? null,
        status: update.status ?? null,
        reasoning: update.reasoning ?? null,
        toolCalls: update.toolCalls ? JSON.stringify(update.toolCalls) : null,
        error: update.error ? JSON.stringify(update.error) : null,
        finishReason: update.finishReason ?? null,
        usage: update.usage ? JSON.stringify(update.usage) : null,
        steers: update.steers?.length ? JSON.stringify(update.steers) : null,
        attachments: update.attachments?.length ? JSON.stringify(update.attachments) : null,
        jobId: update.jobId ?? null,
      }).changes > 0
    },
    async addAttachment({ attachment, bytes, threadId, userId, now = Date.now() }) {
      statements.insertAttachment.run({ ...attachment, threadId, userId, createdAt: now, bytes: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })
    },
    async readAttachment(attachmentId) {
      const row = statements.getAttachment.get(attachmentId)
      if (!row) return null
      const stored: StoredAttachment = {
        attachment: { id: row.id, name: row.name, mediaType: row.media_type, kind: row.kind, size: row.size },
        bytes: new Uint8Array(row.bytes),
        threadId: row.thread_id,
        userId: row.user_id,
        createdAt: row.created_at,
      }
      return stored
    },
    async attachmentBytes(userId) {
      return statements.attachmentBytes.get(userId)!.total
    },
    async getMessage(messageId) {
      const row = statements.getMessage.get(messageId)
      return row ? toMessage(row) : null
    },
    async listMessages(threadId) {
      return statements.listMessages.all(threadId).map(toMessage)
    },
    async searchThreads(userId, query, { limit = 20, folderId } = {}) {
      const terms = searchTerms(query)
      if (terms.length === 0) return []
      const match = ftsQuery(terms)
      const hits = new Map<string, ThreadSearchHit>()
      for (const row of statements.searchTitles.all({ query: match, userId, folderId: folderId ?? null, limit })) hits.set(row.id, { thread: toThread(row), snippet: row.title })
      // Several hits in one conversation count once (its best), so read a few more than asked for.
      for (const row of statements.searchMessages.all({ query: match, userId, folderId: folderId ?? null, limit: limit * 5 })) {
        if (hits.size >= limit) break
        if (!hits.has(row.id)) hits.set(row.id, { thread: toThread(row), messageId: row.message_id, role: row.role, snippet: row.snippet.replace(/\s+/g, ' ').trim() })
      }
      return [...hits.values()].slice(0, limit)
    },
    async close() {
      if (db.open) db.close()
    },
  }
}
