/**
 * The one interface every workflow run store implements (memory, sqlite, Convex): the history of
 * workflow runs, apart from their jobs' live state (which goes minutes after a run ends). One
 * contract suite pins it (tests/support/workflow-run-store-contract.ts).
 */
import { keptOutputBytes } from '../../../../shared/workflow-outputs'
import type { WorkflowRun, WorkflowRunCursor, WorkflowRunQuery, WorkflowRunSummary } from '../../../../shared/types/workflow-run'

/** Most runs one page lists. */
export const WORKFLOW_RUNS_PAGE_MAX = 100

/** Runs one cleanup call deletes at most (it is called again until none are left). */
export const WORKFLOW_RUNS_CLEANUP_BATCH = 500

/** Whose runs: an account's, or a workflow's. */
export type RunOwner = { userId: string } | { workflowId: string }

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
  /** Deletes a workflow's runs (up to `WORKFLOW_RUNS_CLEANUP_BATCH`); the job ids of those that went. */
  deleteRunsOfWorkflow(workflowId: string): Promise<string[]>
  /** Deletes an account's runs (up to `WORKFLOW_RUNS_CLEANUP_BATCH`); the job ids of those that went. */
  deleteRunsOfUser(userId: string): Promise<string[]>
  /** Deletes runs that ended before `finishedBefore` (up to `WORKFLOW_RUNS_CLEANUP_BATCH`); the job ids of those that went. */
  cleanupExpired(finishedBefore: number): Promise<string[]>
  /** The bytes the kept runs of an account, or of a workflow, take (each run's `sizeBytes`). */
  bytesOf(owner: RunOwner): Promise<number>
  /**
   * Deletes the oldest ended runs of an account or a workflow until what is left takes at most
   * `maxBytes` (up to `WORKFLOW_RUNS_CLEANUP_BATCH` runs a call); the job ids of those that went.
   */
  trimToBytes(owner: RunOwner, maxBytes: number): Promise<string[]>
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

/**
 * The run as a store keeps it: its summary and its run as JSON, with `sizeBytes` (both texts'
 * bytes, the size counted against the caps; the summary's own few bytes for the size not counted).
 */
export function storedForm(run: WorkflowRun): { run: WorkflowRun, summary: string, job: string, size: number } {
  const { sizeBytes: _before, ...summary } = summaryOf(run)
  const job = JSON.stringify(run.job)
  // Its long step outputs are files beside the record (workflows/output-files.ts): counted too, so
  // the history's size caps bound the disk a run history takes, files and all.
  const size = Buffer.byteLength(job) + Buffer.byteLength(JSON.stringify(summary)) + 24 + keptOutputBytes(run.job.workflowState)
  const sized = { ...summary, sizeBytes: size }
  return { run: { ...sized, job: run.job }, summary: JSON.stringify(sized), job, size }
}
