/**
 * A workflow run as its history keeps it: written when the run starts and again when it ends, kept
 * for the operator's retention (days) after its job's live state is gone.
 */
import type { Usage } from './chat'
import type { JobError, JobStatus, PublicJob } from './job'

/** How a run was started: from the app's run form, again with a finished run's inputs, resumed from a step, by a script with an API token, by the workflow's webhook or a schedule, by a workflow step of another run, or as the failure handler of a run that failed. */
export type WorkflowRunStart = 'form' | 'again' | 'resume' | 'api' | 'webhook' | 'schedule' | 'parent' | 'failure'

/** A run in a list: who, how, when, how it went and what it cost. */
export interface WorkflowRunSummary {
  /** The run's job id (its run view is `/workflows/runs/<jobId>`). */
  jobId: string
  workflowId: string
  workflowName: string
  /** The definition version it ran (absent on runs of workflows saved before versions). */
  version?: number
  /** The account that started it (its owner). */
  userId: string
  startedVia: WorkflowRunStart
  status: JobStatus
  startedAt: number
  finishedAt?: number
  /** Its prompt's first line (or its inputs', for a workflow with named inputs). */
  prompt?: string
  /** Steps finished of all it had (skipped ones not counted). */
  stepsDone: number
  stepCount: number
  usage?: Usage
  error?: Pick<JobError, 'message' | 'kind'>
  resumedFrom?: { jobId: string, nodeId: string }
  /** What it takes in the run history, in bytes (its steps' outputs, tool calls, timings; absent on runs kept before sizes). */
  sizeBytes?: number
  /** A failure handler's run: the failed run it was started for. */
  failureOf?: string
  /** A child run: the run whose workflow step (`nodeId`, `<loop>.<n>.<step>` inside a loop) ran it. */
  parentRun?: { jobId: string, nodeId: string }
}

/** A kept run: its summary and the run as its viewers last saw it (steps, outputs, tool calls, timings). */
export interface WorkflowRun extends WorkflowRunSummary {
  job: PublicJob
}

/** Which runs a list shows (always one account's), newest first. */
export interface WorkflowRunQuery {
  userId: string
  workflowId?: string
  statuses?: JobStatus[]
  /** Started at or after (ms). */
  startedFrom?: number
  /** Started before (ms). */
  startedBefore?: number
  /** Where the previous page ended (its `nextCursor`). */
  after?: WorkflowRunCursor
  limit: number
}

/** The last run of a page: the next page starts after it. */
export interface WorkflowRunCursor {
  startedAt: number
  jobId: string
}

/** One page of runs (`GET /api/workflows/runs`). */
export interface WorkflowRunPage {
  runs: WorkflowRunSummary[]
  /** Present when there are more: pass it back as `cursor`. */
  nextCursor?: string
}
