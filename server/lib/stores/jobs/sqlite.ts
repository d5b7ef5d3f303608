/**
 * The default job store: one sqlite file (better-sqlite3, WAL mode), created with its directory on
 * first use and migrated on open. Every statement is prepared once. Writes are synchronous inside
 * the process, so each operation is atomic; a crash loses nothing that was acknowledged.
 */
import { randomUUID } from 'node:crypto'
import type { BackgroundJob, JobStatus, ToolRoundRecord } from '../../../../shared/types/job'
import { listLimit, MAX_KEPT_JOB_EVENTS, type JobEnd, type JobProgressUpdate, type JobRunStateUpdate, type JobStore } from './job-store'
import { openSqliteDatabase } from '../sqlite/database'
import { encodeJobEvent, finalStateOf, withToolExecution } from './job-record'
import { endOpenToolCalls } from '../../../../shared/job-state'
import { createSqliteInputRequests } from './input-requests-sqlite'
import { createSqliteNotifications } from './notifications-sqlite'
import { LRUCache } from 'lru-cache'
import { json, toJob as rowToJob, toStoredEvent, type JobEventRow, type JobRow } from './sqlite-rows'
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
    runState: db.prepare(`UPDATE background_jobs SET
        tool_rounds = coalesce(@toolRounds, tool_rounds),
        checkpoint = CASE WHEN @clearCheckpoint THEN NULL ELSE coalesce(@checkpoint, checkpoint) END,
        usage = coalesce(@usage, usage),
        content = coalesce(@content, content),
        reasoning = coalesce(@reasoning, reasoning),
        resume_count = coalesce(@resumeCount, resume_count),
        steers = coalesce(@steers, steers),
        workflow_state = coalesce(@workflowState, workflow_state),
        updated_at = @now
      WHERE id = @id AND status = 'streaming'`),
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
  }

  const partsOf = (jobId: string) => new Map(statements.stateParts.all(jobId).map(row => [row.path, row.body]))
  const toJob = (row: JobRow) => rowToJob(row, partsOf)
  /** Per running workflow: each part's JSON as last written here, and when (the row's `updated_at` then). */
  const writtenParts = new LRUCache<string, { parts: Map<string, string>, at: number }>({ max: REMEMBERED_RUNS })
  /**
   * Rounds, a tool call, the checkpoint, usage, rewinds and a workflow's state in one transaction;
   * false when the job ended. Of a workflow's state, the root in full and the parts that changed
   * since this process last wrote them; all of them when the row was written since by anything else
   * (another process sharing the file took the run over, say), so what is remembered is never taken
   * for what is stored. Answers the parts now written (for the next write to compare with).
   */
  const writeRunState = db.transaction((jobId: string, update: JobRunStateUpdate, state: { root: string, parts: Map<string, string> } | undefined, now: number): Map<string, string> | boolean => {
    const remembered = state ? writtenParts.get(jobId) : undefined
    const written = remembered && statements.updatedAt.get(jobId)?.updated_at === remembered.at ? remembered.parts : new Map<string, string>()
    let toolRounds = update.toolRounds
    if (update.toolExecution) {
      const row = statements.toolRounds.get(jobId)
      if (!row) return false
      toolRounds = withToolExecution(toolRounds ?? JSON.parse(row.tool_rounds) as ToolRoundRecord[], update.toolExecution.round, update.toolExecution.execution)
    }
    const changed = statements.runState.run({
      id: jobId,
      toolRounds: json(toolRounds),
      checkpoint: update.checkpoint ? JSON.stringify(update.checkpoint) : null,
      clearCheckpoint: update.checkpoint === null ? 1 : 0,
      usage: json(update.usage),
      content: update.content ?? null,
      reasoning: update.reasoning ?? null,
      resumeCount: update.resumeCount ?? null,
      steers: json(update.steers),
      workflowState: state?.root ?? null,
      now,
    }).changes > 0
    if (!changed || !state) return changed
    for (const [path, body] of state.parts) {
      if (written.get(path) === body) continue
      statements.writePart.run({ jobId, path, body })
      written.set(path, body)
    }
    return written
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

  const end = db.transaction((jobId: string, ending: JobEnd) => {
    const final = finalStateOf(ending)
    const now = final.now ?? Date.now()
    const changed = statements.finish.run({
      id: jobId,
      status: ending.status,
      content: final.content ?? null,
      reasoning: final.reasoning ?? null,
      chunksReceived: final.chunksReceived ?? null,
      usage: json(final.usage),
      error: json(final.error),
      finishReason: final.finishReason,
      now,
    }).changes > 0
    if (changed) {
      const calls = JSON.parse(statements.activeCalls.get(jobId)!.active_tool_calls) as BackgroundJob['activeToolCalls']
      const settled = endOpenToolCalls(calls, now)
      if (settled.some((call, index) => call !== calls[index])) statements.setActiveCalls.run(JSON.stringify(settled), jobId)
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

  return {
    name: 'sqlite',
    inputRequests: createSqliteInputRequests(db),
    notifications: createSqliteNotifications(db),
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
    async updateRunState(jobId, update) {
      const now = update.now ?? Date.now()
      const state = update.workflowState ? splitWorkflowState(update.workflowState) : undefined
      let written: Map<string, string> | boolean
      try {
        written = writeRunState(jobId, update, state, now)
      } catch (error) {
        // Rolled back: what the transaction noted as written was not.
        writtenParts.delete(jobId)
        throw error
      }
      if (!state) return written !== false
      if (!(written instanceof Map)) {
        writtenParts.delete(jobId)
        return false
      }
      writtenParts.set(jobId, { parts: written, at: now })
      return true
    },
    async endJob(jobId, ending) {
      return end(jobId, ending)
    },
    async listJobs(query) {
      if ('streaming' in query) return statements.listStreaming.all().map(toJob)
      const limit = listLimit(query.limit)
      const rows = query.status ? statements.listByUserStatus.all(query.userId, query.status, limit) : statements.listByUser.all(query.userId, limit)
      return rows.map(toJob)
    },
    async cleanupExpired(finishedBefore, logsEndedBefore = finishedBefore, ofUser) {
      // SQLite compares a number with Infinity as a REAL: every finished job is before it.
      if (ofUser !== undefined) return cleanupOfUser(ofUser, finishedBefore)
      return cleanup(finishedBefore, logsEndedBefore)
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
