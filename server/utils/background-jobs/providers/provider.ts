/**
 * The one interface every job store implements (memory, sqlite, Convex). Writes to a job that is
 * no longer `streaming` are refused (they answer `false`), so a late write from an aborted or
 * timed-out run can never overwrite a final state. The contract suite in
 * tests/support/job-provider-contract.ts pins this down for every provider.
 */
import type {
  BackgroundJob, CompleteJobInput, CreateJobInput, JobError, JobMetadataUpdate, JobNotification,
  JobProgressUpdate, ListJobsOptions, ToolExecutionRecord, WorkflowState,
} from '../types'
import type { Usage } from '../../openrouter/types'

/** The text and counters a job ends with when it fails or is aborted. */
export interface JobFinalState {
  content?: string
  reasoning?: string
  chunksReceived?: number
  usage?: Usage
  finishReason?: string
  now?: number
}

/** A notification before it is stored. */
export type NewJobNotification = Omit<JobNotification, 'id' | 'createdAt' | 'readAt'> & { now?: number }

/** Durable storage of jobs and job notifications. */
export interface BackgroundJobProvider {
  /** `memory`, `sqlite` or `convex`. */
  readonly name: string
  createJob(input: CreateJobInput): Promise<BackgroundJob>
  getJob(jobId: string): Promise<BackgroundJob | null>
  /** Appends streamed text and replaces counters and the active tool calls. */
  updateJob(jobId: string, update: JobProgressUpdate): Promise<boolean>
  /** Adds one executed tool call to its round (creating the round if needed). */
  appendToolExecution(jobId: string, round: number, execution: ToolExecutionRecord): Promise<boolean>
  updateJobMetadata(jobId: string, update: JobMetadataUpdate): Promise<boolean>
  updateWorkflowState(jobId: string, state: WorkflowState): Promise<boolean>
  completeJob(jobId: string, final: CompleteJobInput): Promise<boolean>
  failJob(jobId: string, error: JobError, final?: JobFinalState): Promise<boolean>
  /** Idempotent: `false` when the job had already finished. */
  abortJob(jobId: string, final?: JobFinalState): Promise<boolean>
  /** A user's jobs, running ones first, then newest first. */
  listJobsByUser(userId: string, options?: ListJobsOptions): Promise<BackgroundJob[]>
  /** Every job still marked `streaming` (for recovery after a restart). */
  listStreamingJobs(): Promise<BackgroundJob[]>
  /** Deletes jobs that finished before `finishedBefore` (and their notifications); returns how many. */
  cleanupExpired(finishedBefore: number): Promise<number>
  addNotification(notification: NewJobNotification): Promise<JobNotification>
  /** Newest first. */
  listNotifications(userId: string, options?: { unreadOnly?: boolean, limit?: number }): Promise<JobNotification[]>
  /** Marks the given notifications (or all of the user's) read; returns how many changed. */
  markNotificationsRead(userId: string, ids?: readonly string[], now?: number): Promise<number>
  close(): Promise<void>
}

/** Default and largest page of a job or notification list. */
export const DEFAULT_LIST_LIMIT = 50
export const MAX_LIST_LIMIT = 200

/** Clamps a requested list size. */
export function listLimit(limit: number | undefined): number {
  return Math.min(Math.max(1, Math.floor(limit ?? DEFAULT_LIST_LIMIT)), MAX_LIST_LIMIT)
}
