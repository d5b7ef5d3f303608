/**
 * The default job store: one sqlite file (better-sqlite3, WAL mode), created with its directory on
 * first use and migrated on open. Every statement is prepared once. Writes are synchronous inside
 * the process, so each operation is atomic; a crash loses nothing that was acknowledged.
 */
import { randomUUID } from 'node:crypto'
import type { BackgroundJob, JobNotification, JobStatus, ToolRoundRecord } from '../../../../shared/types/job'
import { listLimit, MAX_KEPT_JOB_EVENTS, type JobStore, type JobFinalState, type JobProgressUpdate } from './job-store'
import { openSqliteDatabase } from '../sqlite/database'
import { encodeJobEvent, withToolExecution } from './job-record'
import { createSqliteInputRequests } from './input-requests-sqlite'
import { LRUCache } from 'lru-cache'
import { json, toJob as rowToJob, toNotification, toStoredEvent, type JobEventRow, type JobRow, type NotificationRow } from './sqlite-rows'
import { splitWorkflowState } from '../../../../shared/workflow-state-parts'

/** Runs whose last written state parts are remembered (to write only what changed); the oldest are forgotten, and then written whole once. */
const REMEMBERED_RUNS = 1_000

/** Options of the sqlite store. */
export interface SqliteJobStoreOptions {
  /** Database file; `:memory:` for a private in-memory database. */
  path: string
}

/** Opens (creating and migrating if needed) the sqlite job store at `options.path`. */
export function createSqliteJobStore(options: SqliteJobStoreOptions): JobStore {
  const db = openSqliteDatabase(options.path)

  const statements = {
    insert: db.prepare(`INSERT INTO background_jobs (id, user_id, thread_id, message_id, type, model, status, started_at, updated_at, request, api_key_ciphertext)
      VALUES (@id, @userId, @threadId, @messageId, @type, @model, 'streaming', @now, @now, @request, @apiKeyCiphertext)`),
    get: db.prepare<[string], JobRow>('SELECT * FROM background_jobs WHERE id = ?'),
    progress: db.prepare(`UPDATE background_jobs SET
        content = content || @contentChunk,
        reasoning = reasoning || @reasoningChunk,
        chunks_received = coalesce(@chunksReceived, chunks_received),
        active_tool_calls = coalesce(@activeToolCalls, active_tool_calls),
        event_seq = CASE WHEN @eventSeq > 0 THEN @eventSeq ELSE event_seq END,
        updated_at = @now
      WHERE id = @id AND status = 'streaming'`),
    appendEvent: db.prepare(`INSERT INTO job_events (job_id, seq, attempt, type, body, superseded) VALUES (@jobId, @seq, @attempt, @type, @body, @superseded)`),
    dropEventsFrom: db.prepare('DELETE FROM job_events WHERE job_id = ? AND seq >= ?'),
    dropEventsUpTo: db.prepare('DELETE FROM job_events WHERE job_id = ? AND seq <= ?'),
    // Ended jobs whose log is still kept are few (ended a moment ago): found through their own index.
    compactEndedLogs: db.prepare('DELETE FROM job_events WHERE job_id IN (SELECT id FROM background_jobs WHERE log_kept = 1 AND completed_at < ?)'),
    unmarkEndedLogs: db.prepare('UPDATE background_jobs SET log_kept = 0 WHERE log_kept = 1 AND completed_at < ?'),
    readEvents: db.prepare<[string, number, number], JobEventRow>('SELECT seq, attempt, type, body, superseded FROM job_events WHERE job_id = ? AND seq >= ? ORDER BY seq LIMIT ?'),
    eventSeq: db.prepare<[string], { event_seq: number, status: JobStatus }>('SELECT event_seq, status FROM background_jobs WHERE id = ?'),
    toolRounds: db.prepare<[string], { tool_rounds: string }>(`SELECT tool_rounds FROM background_jobs WHERE id = ? AND status = 'streaming'`),
    setToolRounds: db.prepare(`UPDATE background_jobs SET tool_rounds = @toolRounds, updated_at = @now WHERE id = @id AND status = 'streaming'`),
    metadata: db.prepare(`UPDATE background_jobs SET
        tool_rounds = coalesce(@toolRounds, tool_rounds),
        checkpoint = CASE WHEN @clearCheckpoint THEN NULL ELSE coalesce(@checkpoint, checkpoint) END,
        usage = coalesce(@usage, usage),
        content = coalesce(@content, content),
        reasoning = coalesce(@reasoning, reasoning),
        resume_count = coalesce(@resumeCount, resume_count),
        updated_at = @now
      WHERE id = @id AND status = 'streaming'`),
    workflow: db.prepare(`UPDATE background_jobs SET workflow_state = @state, updated_at = @now WHERE id = @id AND status = 'streaming'`),
    stateParts: db.prepare<[string], { path: string, body: string }>('SELECT path, body FROM job_workflow_state_parts WHERE job_id = ?'),
    updatedAt: db.prepare<[string], { updated_at: number }>('SELECT updated_at FROM background_jobs WHERE id = ?'),
    writePart: db.prepare(`INSERT INTO job_workflow_state_parts (job_id, path, body) VALUES (@jobId, @path, @body)
      ON CONFLICT (job_id, path) DO UPDATE SET body = excluded.body`),
    finish: db.prepare(`UPDATE background_jobs SET
        status = @status,
        content = coalesce(@content, content),
        reasoning = coalesce(@reasoning, reasoning),
        chunks_received = coalesce(@chunksReceived, chunks_received),
        usage = coalesce(@usage, usage),
        error = @error,
        finish_reason = @finishReason,
        updated_at = @now,
        completed_at = @now,
        checkpoint = NULL,
        api_key_ciphertext = NULL,
        log_kept = event_seq > 0
      WHERE id = @id AND status = 'streaming'`),
    activeCalls: db.prepare<[string], { active_tool_calls: string }>('SELECT active_tool_calls FROM background_jobs WHERE id = ?'),
    setActiveCalls: db.prepare('UPDATE background_jobs SET active_tool_calls = ? WHERE id = ?'),
    listByUser: db.prepare<[string, number], JobRow>(`SELECT * FROM background_jobs WHERE user_id = ?
      ORDER BY (status = 'streaming') DESC, started_at DESC LIMIT ?`),
    listByUserStatus: db.prepare<[string, string, number], JobRow>(`SELECT * FROM background_jobs WHERE user_id = ? AND status = ?
      ORDER BY started_at DESC LIMIT ?`),
    listStreaming: db.prepare<[], JobRow>(`SELECT * FROM background_jobs WHERE status = 'streaming' ORDER BY started_at`),
    deleteNotificationsOfExpired: db.prepare(`DELETE FROM job_notifications WHERE job_id IN
      (SELECT id FROM background_jobs WHERE status != 'streaming' AND completed_at < ?)`),
    deleteInputRequestsOfExpired: db.prepare(`DELETE FROM job_input_requests WHERE job_id IN
      (SELECT id FROM background_jobs WHERE status != 'streaming' AND completed_at < ?)`),
    deleteExpired: db.prepare(`DELETE FROM background_jobs WHERE status != 'streaming' AND completed_at < ?`),
    // One person's (an account being deleted): their ended jobs whatever their age, and every notification of theirs.
    deleteNotificationsOfUser: db.prepare('DELETE FROM job_notifications WHERE user_id = ?'),
    deleteInputRequestsOfUserEnded: db.prepare(`DELETE FROM job_input_requests WHERE job_id IN
      (SELECT id FROM background_jobs WHERE user_id = ? AND status != 'streaming' AND completed_at < ?)`),
    deleteEndedOfUser: db.prepare(`DELETE FROM background_jobs WHERE user_id = ? AND status != 'streaming' AND completed_at < ?`),
    insertNotification: db.prepare(`INSERT INTO job_notifications (id, user_id, job_id, thread_id, kind, title, body, created_at)
      VALUES (@id, @userId, @jobId, @threadId, @kind, @title, @body, @createdAt)`),
    listNotifications: db.prepare<[string, number], NotificationRow>('SELECT * FROM job_notifications WHERE user_id = ? ORDER BY created_at DESC LIMIT ?'),
    listUnread: db.prepare<[string, number], NotificationRow>('SELECT * FROM job_notifications WHERE user_id = ? AND read_at IS NULL ORDER BY created_at DESC LIMIT ?'),
    markRead: db.prepare('UPDATE job_notifications SET read_at = ? WHERE user_id = ? AND id = ? AND read_at IS NULL'),
    markAllRead: db.prepare('UPDATE job_notifications SET read_at = ? WHERE user_id = ? AND read_at IS NULL'),
  }

  const partsOf = (jobId: string) => new Map(statements.stateParts.all(jobId).map(row => [row.path, row.body]))
  const toJob = (row: JobRow) => rowToJob(row, partsOf)
  /** Per running workflow: each part's JSON as last written here, and when (the row's `updated_at` then). */
  const writtenParts = new LRUCache<string, { parts: Map<string, string>, at: number }>({ max: REMEMBERED_RUNS })
  /**
   * The root in full, and the parts that changed since this process last wrote them; all of them
   * when the row was written since by anything else (another process sharing the file took the run
   * over, say), so what is remembered is never taken for what is stored. False when the job ended.
   */
  const writeWorkflowState = db.transaction((jobId: string, parts: Map<string, string>, root: string, now: number): Map<string, string> | false => {
    const remembered = writtenParts.get(jobId)
    const written = remembered && statements.updatedAt.get(jobId)?.updated_at === remembered.at ? remembered.parts : new Map<string, string>()
    if (statements.workflow.run({ id: jobId, state: root, now }).changes === 0) return false
    for (const [path, body] of parts) {
      if (written.get(path) === body) continue
      statements.writePart.run({ jobId, path, body })
      written.set(path, body)
    }
    return written
  })

  const appendToolExecution = db.transaction((jobId: string, round: number, execution: Parameters<JobStore['appendToolExecution']>[2]) => {
    const row = statements.toolRounds.get(jobId)
    if (!row) return false
    const rounds = withToolExecution(JSON.parse(row.tool_rounds) as ToolRoundRecord[], round, execution)
    return statements.setToolRounds.run({ id: jobId, toolRounds: JSON.stringify(rounds), now: Date.now() }).changes > 0
  })

  /** Text, counters and the run log's events in one transaction: the row and the log agree after every write. */
  const progress = db.transaction((jobId: string, update: JobProgressUpdate) => {
    const events = update.events ?? []
    const last = events.at(-1)?.seq ?? 0
    const changed = statements.progress.run({
      id: jobId,
      contentChunk: update.contentChunk ?? '',
      reasoningChunk: update.reasoningChunk ?? '',
      chunksReceived: update.chunksReceived ?? null,
      activeToolCalls: json(update.activeToolCalls),
      eventSeq: last,
      now: update.now ?? Date.now(),
    }).changes > 0
    if (!changed || events.length === 0) return changed
    // A run numbering on from an event the store lost replaces what it numbered the same.
    statements.dropEventsFrom.run(jobId, events[0]!.seq)
    for (const event of events.map(encodeJobEvent)) {
      statements.appendEvent.run({ jobId, seq: event.seq, attempt: event.attempt, type: event.type, body: event.body ?? null, superseded: event.superseded ? 1 : 0 })
    }
    statements.dropEventsUpTo.run(jobId, last - MAX_KEPT_JOB_EVENTS)
    return true
  })

  const finish = db.transaction((jobId: string, status: Exclude<JobStatus, 'streaming'>, final: JobFinalState, error?: unknown) => {
    const now = final.now ?? Date.now()
    const changed = statements.finish.run({
      id: jobId,
      status,
      content: final.content ?? null,
      reasoning: final.reasoning ?? null,
      chunksReceived: final.chunksReceived ?? null,
      usage: json(final.usage),
      error: json(error),
      finishReason: final.finishReason ?? (status === 'complete' ? 'stop' : status),
      now,
    }).changes > 0
    if (changed) {
      // Calls still pending or running when the job ended did not finish.
      const calls = JSON.parse(statements.activeCalls.get(jobId)!.active_tool_calls) as BackgroundJob['activeToolCalls']
      if (calls.some(call => call.status === 'pending' || call.status === 'running')) {
        const settled = calls.map(call => call.status === 'pending' || call.status === 'running'
          ? { ...call, status: 'error' as const, error: 'stopped before it finished', finishedAt: now }
          : call)
        statements.setActiveCalls.run(JSON.stringify(settled), jobId)
      }
    }
    return changed
  })

  const cleanupOfUser = db.transaction((userId: string, finishedBefore: number) => {
    statements.deleteNotificationsOfUser.run(userId)
    statements.deleteInputRequestsOfUserEnded.run(userId, finishedBefore)
    return statements.deleteEndedOfUser.run(userId, finishedBefore).changes
  })

  const cleanup = db.transaction((finishedBefore: number, logsEndedBefore: number) => {
    statements.compactEndedLogs.run(logsEndedBefore)
    statements.unmarkEndedLogs.run(logsEndedBefore)
    statements.deleteNotificationsOfExpired.run(finishedBefore)
    statements.deleteInputRequestsOfExpired.run(finishedBefore)
    return statements.deleteExpired.run(finishedBefore).changes
  })

  const markRead = db.transaction((userId: string, ids: readonly string[] | undefined, now: number) => {
    if (!ids) return statements.markAllRead.run(now, userId).changes
    let changed = 0
    for (const id of ids) changed += statements.markRead.run(now, userId, id).changes
    return changed
  })

  return {
    name: 'sqlite',
    ...createSqliteInputRequests(db),
    async createJob(input) {
      const now = input.now ?? Date.now()
      const id = input.id ?? randomUUID()
      statements.insert.run({
        id,
        userId: input.userId,
        threadId: input.threadId,
        messageId: input.messageId,
        type: input.type,
        model: input.model,
        now,
        request: json(input.request),
        apiKeyCiphertext: input.apiKeyCiphertext ?? null,
      })
      return toJob(statements.get.get(id)!)
    },
    async getJob(jobId) {
      const row = statements.get.get(jobId)
      return row ? toJob(row) : null
    },
    async updateJob(jobId, update) {
      return progress(jobId, update)
    },
    async readJobEvents(jobId, fromSeq, limit) {
      const row = statements.eventSeq.get(jobId)
      if (!row) return null
      return { events: statements.readEvents.all(jobId, fromSeq, Math.max(0, limit)).map(toStoredEvent), lastSeq: row.event_seq, status: row.status }
    },
    async appendToolExecution(jobId, round, execution) {
      return appendToolExecution(jobId, round, execution)
    },
    async updateJobMetadata(jobId, update) {
      return statements.metadata.run({
        id: jobId,
        toolRounds: json(update.toolRounds),
        checkpoint: update.checkpoint ? JSON.stringify(update.checkpoint) : null,
        clearCheckpoint: update.checkpoint === null ? 1 : 0,
        usage: json(update.usage),
        content: update.content ?? null,
        reasoning: update.reasoning ?? null,
        resumeCount: update.resumeCount ?? null,
        now: update.now ?? Date.now(),
      }).changes > 0
    },
    async updateWorkflowState(jobId, state) {
      const { root, parts } = splitWorkflowState(state)
      const now = Date.now()
      let written: Map<string, string> | false
      try {
        written = writeWorkflowState(jobId, parts, root, now)
      } catch (error) {
        // Rolled back: what the transaction noted as written was not.
        writtenParts.delete(jobId)
        throw error
      }
      if (!written) {
        writtenParts.delete(jobId)
        return false
      }
      writtenParts.set(jobId, { parts: written, at: now })
      return true
    },
    async completeJob(jobId, final) {
      return finish(jobId, 'complete', final)
    },
    async failJob(jobId, error, final = {}) {
      return finish(jobId, 'error', final, error)
    },
    async rejectJob(jobId, reason, final = {}) {
      return finish(jobId, 'rejected', final, reason)
    },
    async abortJob(jobId, final = {}) {
      return finish(jobId, 'aborted', final)
    },
    async listJobsByUser(userId, options = {}) {
      const limit = listLimit(options.limit)
      const rows = options.status ? statements.listByUserStatus.all(userId, options.status, limit) : statements.listByUser.all(userId, limit)
      return rows.map(toJob)
    },
    async listStreamingJobs() {
      return statements.listStreaming.all().map(toJob)
    },
    async cleanupExpired(finishedBefore, logsEndedBefore = finishedBefore, ofUser) {
      // SQLite compares a number with Infinity as a REAL: every finished job is before it.
      if (ofUser !== undefined) return cleanupOfUser(ofUser, finishedBefore)
      return cleanup(finishedBefore, logsEndedBefore)
    },
    async addNotification({ now, ...fields }) {
      const notification: JobNotification = { ...fields, id: randomUUID(), createdAt: now ?? Date.now() }
      statements.insertNotification.run(notification)
      return notification
    },
    async listNotifications(userId, options = {}) {
      const limit = listLimit(options.limit)
      const rows = options.unreadOnly ? statements.listUnread.all(userId, limit) : statements.listNotifications.all(userId, limit)
      return rows.map(toNotification)
    },
    async markNotificationsRead(userId, ids, now = Date.now()) {
      return markRead(userId, ids, now)
    },
    async ping() {
      // Takes the write lock and gives it back: fails (busy) while another process holds it.
      db.exec('BEGIN IMMEDIATE')
      db.exec('ROLLBACK')
    },
    async close() {
      if (db.open) db.close()
    },
  }
}
