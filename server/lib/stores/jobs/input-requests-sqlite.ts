/**
 * The input requests of the sqlite job store: one row per request, its fields as JSON in `body`
 * with the columns it is found by. Every change reads and writes in one immediate transaction, so
 * the compare-and-set holds across processes sharing the file (see input-request-store.ts).
 */
import { randomUUID } from 'node:crypto'
import type { Database } from 'better-sqlite3'
import type { JobInputRequest } from '../../../../shared/types/input-request'
import { newInputRequest, type InputRequestStore } from './input-request-store'
import { INPUT_REQUEST_LIST_LIMIT, inputRequestRules, type InputRequestChange } from '../../../../shared/input-request-rules'

interface RequestRow { body: string }

/** The input-request methods over `db` (migrated: table `job_input_requests`). */
export function createSqliteInputRequests(db: Database): InputRequestStore {
  const statements = {
    insert: db.prepare(`INSERT INTO job_input_requests (id, job_id, user_id, key, status, created_at, body)
      VALUES (@id, @jobId, @userId, @key, @status, @createdAt, @body) ON CONFLICT (job_id, key) DO NOTHING`),
    byKey: db.prepare<[string, string], RequestRow>('SELECT body FROM job_input_requests WHERE job_id = ? AND key = ?'),
    get: db.prepare<[string, string], RequestRow>('SELECT body FROM job_input_requests WHERE id = ? AND job_id = ?'),
    byJob: db.prepare<[string, number], RequestRow>('SELECT body FROM job_input_requests WHERE job_id = ? ORDER BY created_at LIMIT ?'),
    openByUser: db.prepare<[string, number], RequestRow>(`SELECT body FROM job_input_requests WHERE user_id = ? AND status = 'open' ORDER BY created_at DESC LIMIT ?`),
    update: db.prepare('UPDATE job_input_requests SET status = @status, body = @body WHERE id = @id'),
  }
  const parse = (row: RequestRow | undefined): JobInputRequest | null => (row ? JSON.parse(row.body) as JobInputRequest : null)
  const write = (request: JobInputRequest) => statements.update.run({ id: request.id, status: request.status, body: JSON.stringify(request) })

  const open = db.transaction((request: JobInputRequest): JobInputRequest => {
    statements.insert.run({ id: request.id, jobId: request.jobId, userId: request.userId, key: request.key, status: request.status, createdAt: request.createdAt, body: JSON.stringify(request) })
    return parse(statements.byKey.get(request.jobId, request.key))!
  })
  const change = db.transaction((jobId: string, requestId: string, apply: (request: JobInputRequest) => InputRequestChange): InputRequestChange => {
    const request = parse(statements.get.get(requestId, jobId))
    if (!request) return { ok: false, reason: 'missing' }
    const result = apply(request)
    if (result.ok) write(result.request)
    return result
  })
  const consume = db.transaction((jobId: string, requestId: string, now: number): boolean => {
    const request = parse(statements.get.get(requestId, jobId))
    const consumed = request ? inputRequestRules.consume(request, now) : undefined
    if (consumed) write(consumed)
    return consumed !== undefined
  })

  return {
    async open(input) {
      return open.immediate(newInputRequest(input, input.id ?? randomUUID()))
    },
    async get(jobId, requestId) {
      return parse(statements.get.get(requestId, jobId))
    },
    async list(query) {
      const rows = 'jobId' in query ? statements.byJob.all(query.jobId, INPUT_REQUEST_LIST_LIMIT) : statements.openByUser.all(query.userId, INPUT_REQUEST_LIST_LIMIT)
      return rows.map(row => parse(row)!)
    },
    async claim(jobId, requestId, claimant, { claimMs, now = Date.now() }) {
      return change.immediate(jobId, requestId, request => inputRequestRules.claim(request, claimant, claimMs, now))
    },
    async answer(jobId, requestId, answer, { now = Date.now(), ...options } = {}) {
      return change.immediate(jobId, requestId, request => inputRequestRules.answer(request, answer, { ...options, now }))
    },
    async close(jobId, requestId, status, now = Date.now()) {
      return change.immediate(jobId, requestId, request => inputRequestRules.close(request, status, now))
    },
    async consume(jobId, requestId, now = Date.now()) {
      return consume.immediate(jobId, requestId, now)
    },
  }
}
