/** Kept workflow runs in the app's sqlite file: indexed columns to list by, the run as JSON. */
import { openSqliteDatabase } from '../sqlite/database'
import type { WorkflowRun, WorkflowRunSummary } from '../../../../shared/types/workflow-run'
import { WORKFLOW_RUNS_CLEANUP_BATCH, WORKFLOW_RUNS_PAGE_MAX, summaryOf, type WorkflowRunStore } from './run-store'

interface RunRow { job_id: string, summary: string, job: string }

/** Opens the run store in the sqlite file at `path`. */
export function createSqliteWorkflowRunStore(options: { path: string }): WorkflowRunStore {
  const db = openSqliteDatabase(options.path)
  const statements = {
    save: db.prepare(`INSERT INTO workflow_runs (job_id, user_id, workflow_id, status, started_at, finished_at, summary, job)
      VALUES (@jobId, @userId, @workflowId, @status, @startedAt, @finishedAt, @summary, @job)
      ON CONFLICT (job_id) DO UPDATE SET status = excluded.status, finished_at = excluded.finished_at, summary = excluded.summary, job = excluded.job`),
    get: db.prepare<[string], RunRow>('SELECT job_id, summary, job FROM workflow_runs WHERE job_id = ?'),
    unfinished: db.prepare<[number], Pick<RunRow, 'summary'>>('SELECT summary FROM workflow_runs WHERE status = \'streaming\' ORDER BY started_at LIMIT ?'),
    remove: db.prepare('DELETE FROM workflow_runs WHERE job_id = ?'),
    removeOfWorkflow: db.prepare('DELETE FROM workflow_runs WHERE job_id IN (SELECT job_id FROM workflow_runs WHERE workflow_id = ? LIMIT ?)'),
    removeOfUser: db.prepare('DELETE FROM workflow_runs WHERE job_id IN (SELECT job_id FROM workflow_runs WHERE user_id = ? LIMIT ?)'),
    removeExpired: db.prepare('DELETE FROM workflow_runs WHERE job_id IN (SELECT job_id FROM workflow_runs WHERE finished_at < ? LIMIT ?)'),
  }
  return {
    async saveRun(run) {
      const summary = summaryOf(run)
      statements.save.run({ jobId: run.jobId, userId: run.userId, workflowId: run.workflowId, status: run.status, startedAt: run.startedAt, finishedAt: run.finishedAt ?? null, summary: JSON.stringify(summary), job: JSON.stringify(run.job) })
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
      return statements.removeOfWorkflow.run(workflowId, WORKFLOW_RUNS_CLEANUP_BATCH).changes
    },
    async deleteRunsOfUser(userId) {
      return statements.removeOfUser.run(userId, WORKFLOW_RUNS_CLEANUP_BATCH).changes
    },
    async cleanupExpired(finishedBefore) {
      return statements.removeExpired.run(finishedBefore, WORKFLOW_RUNS_CLEANUP_BATCH).changes
    },
    async close() {
      if (db.open) db.close()
    },
  }
}
