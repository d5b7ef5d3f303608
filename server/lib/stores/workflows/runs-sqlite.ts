/** Kept workflow runs in the app's sqlite file: indexed columns to list by, the run as JSON. */
import { openSqliteDatabase } from '../sqlite/database'
import type { WorkflowRun, WorkflowRunSummary } from '../../../../shared/types/workflow-run'
import { WORKFLOW_RUNS_CLEANUP_BATCH, WORKFLOW_RUNS_PAGE_MAX, storedForm, type RunOwner, type WorkflowRunStore } from './run-store'

interface RunRow { job_id: string, summary: string, job: string }

/** Opens the run store in the sqlite file at `path`. */
export function createSqliteWorkflowRunStore(options: { path: string }): WorkflowRunStore {
  const db = openSqliteDatabase(options.path)
  const statements = {
    save: db.prepare(`INSERT INTO workflow_runs (job_id, user_id, workflow_id, status, started_at, finished_at, summary, job, size)
      VALUES (@jobId, @userId, @workflowId, @status, @startedAt, @finishedAt, @summary, @job, @size)
      ON CONFLICT (job_id) DO UPDATE SET status = excluded.status, finished_at = excluded.finished_at, summary = excluded.summary, job = excluded.job, size = excluded.size`),
    // Totals kept by triggers (migration 'workflow_run_bytes').
    bytes: db.prepare<[string], { bytes: number }>('SELECT bytes FROM workflow_run_bytes WHERE owner = ?'),
    oldestOfUser: db.prepare<[string, number], { job_id: string, size: number }>('SELECT job_id, size FROM workflow_runs WHERE user_id = ? AND finished_at IS NOT NULL ORDER BY finished_at LIMIT ?'),
    oldestOfWorkflow: db.prepare<[string, number], { job_id: string, size: number }>('SELECT job_id, size FROM workflow_runs WHERE workflow_id = ? AND finished_at IS NOT NULL ORDER BY finished_at LIMIT ?'),
    get: db.prepare<[string], RunRow>('SELECT job_id, summary, job FROM workflow_runs WHERE job_id = ?'),
    unfinished: db.prepare<[number], Pick<RunRow, 'summary'>>('SELECT summary FROM workflow_runs WHERE status = \'streaming\' ORDER BY started_at LIMIT ?'),
    remove: db.prepare('DELETE FROM workflow_runs WHERE job_id = ?'),
    removeOfWorkflow: db.prepare<[string, number], { job_id: string }>('DELETE FROM workflow_runs WHERE job_id IN (SELECT job_id FROM workflow_runs WHERE workflow_id = ? LIMIT ?) RETURNING job_id'),
    removeOfUser: db.prepare<[string, number], { job_id: string }>('DELETE FROM workflow_runs WHERE job_id IN (SELECT job_id FROM workflow_runs WHERE user_id = ? LIMIT ?) RETURNING job_id'),
    removeExpired: db.prepare<[number, number], { job_id: string }>('DELETE FROM workflow_runs WHERE job_id IN (SELECT job_id FROM workflow_runs WHERE finished_at < ? LIMIT ?) RETURNING job_id'),
  }
  return {
    async saveRun(run) {
      const stored = storedForm(run)
      statements.save.run({ jobId: run.jobId, userId: run.userId, workflowId: run.workflowId, status: run.status, startedAt: run.startedAt, finishedAt: run.finishedAt ?? null, summary: stored.summary, job: stored.job, size: stored.size })
    },
    async getRun(jobId) {
      const row = statements.get.get(jobId)
      return row ? { ...JSON.parse(row.summary), job: JSON.parse(row.job) } as WorkflowRun : null
    },
    async listRuns(query) {
      const limit = Math.min(query.limit, WORKFLOW_RUNS_PAGE_MAX)
      const where = ['user_id = @userId']
      const params: Record<string, unknown> = { userId: query.userId, limit: limit + 1 }
      if (query.workflowId !== undefined) {
        where.push('workflow_id = @workflowId')
        params.workflowId = query.workflowId
      }
      if (query.statuses) {
        // Statuses come from a fixed set (checked at the route); each is still a bound parameter.
        where.push(`status IN (${query.statuses.map((_, index) => `@status${index}`).join(', ') || 'NULL'})`)
        query.statuses.forEach((status, index) => (params[`status${index}`] = status))
      }
      if (query.startedFrom !== undefined) {
        where.push('started_at >= @startedFrom')
        params.startedFrom = query.startedFrom
      }
      if (query.startedBefore !== undefined) {
        where.push('started_at < @startedBefore')
        params.startedBefore = query.startedBefore
      }
      if (query.after) {
        where.push('(started_at < @afterStartedAt OR (started_at = @afterStartedAt AND job_id < @afterJobId))')
        params.afterStartedAt = query.after.startedAt
        params.afterJobId = query.after.jobId
      }
      const rows = db.prepare<Record<string, unknown>, Pick<RunRow, 'summary'>>(`SELECT summary FROM workflow_runs WHERE ${where.join(' AND ')} ORDER BY started_at DESC, job_id DESC LIMIT @limit`).all(params)
      const runs = rows.slice(0, limit).map(row => JSON.parse(row.summary) as WorkflowRunSummary)
      const last = runs.at(-1)
      return { runs, ...(rows.length > limit && last ? { next: { startedAt: last.startedAt, jobId: last.jobId } } : {}) }
    },
    async listUnfinishedRuns(limit) {
      return statements.unfinished.all(limit).map(row => JSON.parse(row.summary) as WorkflowRunSummary)
    },
    async deleteRun(jobId) {
      return statements.remove.run(jobId).changes > 0
    },
    async deleteRunsOfWorkflow(workflowId) {
      return statements.removeOfWorkflow.all(workflowId, WORKFLOW_RUNS_CLEANUP_BATCH).map(row => row.job_id)
    },
    async deleteRunsOfUser(userId) {
      return statements.removeOfUser.all(userId, WORKFLOW_RUNS_CLEANUP_BATCH).map(row => row.job_id)
    },
    async cleanupExpired(finishedBefore) {
      return statements.removeExpired.all(finishedBefore, WORKFLOW_RUNS_CLEANUP_BATCH).map(row => row.job_id)
    },
    async bytesOf(owner) {
      return statements.bytes.get(ownerKey(owner))?.bytes ?? 0
    },
    async trimToBytes(owner, maxBytes) {
      let excess = (statements.bytes.get(ownerKey(owner))?.bytes ?? 0) - maxBytes
      if (excess <= 0) return []
      const oldest = 'userId' in owner ? statements.oldestOfUser.all(owner.userId, WORKFLOW_RUNS_CLEANUP_BATCH) : statements.oldestOfWorkflow.all(owner.workflowId, WORKFLOW_RUNS_CLEANUP_BATCH)
      const doomed: string[] = []
      for (const row of oldest) {
        if (excess <= 0) break
        doomed.push(row.job_id)
        excess -= row.size
      }
      db.transaction(() => doomed.forEach(jobId => statements.remove.run(jobId)))()
      return doomed
    },
    async close() {
      if (db.open) db.close()
    },
  }
}

/** The key of an owner's total in `workflow_run_bytes`. */
function ownerKey(owner: RunOwner): string {
  return 'userId' in owner ? `user:${owner.userId}` : `workflow:${owner.workflowId}`
}
