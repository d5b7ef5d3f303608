/**
 * The one interface every workflow run store implements (memory, sqlite, Convex): the history of
 * workflow runs, apart from their jobs' live state (which goes minutes after a run ends). One
 * contract suite pins it (tests/support/workflow-run-store-contract.ts).
 */
import type { WorkflowRun, WorkflowRunCursor, WorkflowRunQuery, WorkflowRunSummary } from '../../../../shared/types/workflow-run'

/** Most runs one page lists. */
export const WORKFLOW_RUNS_PAGE_MAX = 100

/** Runs one cleanup call deletes at most (it is called again until none are left). */
export const WORKFLOW_RUNS_CLEANUP_BATCH = 500

/** One page of a store's runs. */
export interface StoredRunPage {
  runs: WorkflowRunSummary[]
  next?: WorkflowRunCursor
}

/** Storage of kept workflow runs, by job id. */
export interface WorkflowRunStore {
  /** Writes the run (inserted, or replacing what was kept of it). */
  saveRun(run: WorkflowRun): Promise<void>
  getRun(jobId: string): Promise<WorkflowRun | null>
  /** One page of an account's runs, newest start first (`limit` at most `WORKFLOW_RUNS_PAGE_MAX`). */
  listRuns(query: WorkflowRunQuery): Promise<StoredRunPage>
  /** Runs kept as still running (their end was not recorded yet), oldest first. */
  listUnfinishedRuns(limit: number): Promise<WorkflowRunSummary[]>
  deleteRun(jobId: string): Promise<boolean>
  /** Deletes a workflow's runs (up to `WORKFLOW_RUNS_CLEANUP_BATCH`); how many went. */
  deleteRunsOfWorkflow(workflowId: string): Promise<number>
  /** Deletes an account's runs (up to `WORKFLOW_RUNS_CLEANUP_BATCH`); how many went. */
  deleteRunsOfUser(userId: string): Promise<number>
  /** Deletes runs that ended before `finishedBefore` (up to `WORKFLOW_RUNS_CLEANUP_BATCH`); how many went. */
  cleanupExpired(finishedBefore: number): Promise<number>
  close(): Promise<void>
}

/** Whether `run` is one `query` lists (ignoring its page). */
export function runMatches(run: WorkflowRunSummary, query: Omit<WorkflowRunQuery, 'after' | 'limit'>): boolean {
  return run.userId === query.userId
    && (query.workflowId === undefined || run.workflowId === query.workflowId)
    && (query.statuses === undefined || query.statuses.includes(run.status))
    && (query.startedFrom === undefined || run.startedAt >= query.startedFrom)
    && (query.startedBefore === undefined || run.startedAt < query.startedBefore)
}

/** Whether `run` comes after `cursor` in newest-first order (start time, then job id). */
export function runIsAfter(run: WorkflowRunSummary, cursor: WorkflowRunCursor | undefined): boolean {
  if (!cursor) return true
  return run.startedAt < cursor.startedAt || (run.startedAt === cursor.startedAt && run.jobId < cursor.jobId)
}

/** The summary part of a kept run. */
export function summaryOf(run: WorkflowRun): WorkflowRunSummary {
  const { job: _job, ...summary } = run
  return summary
}
