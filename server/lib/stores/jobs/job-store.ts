/**
 * The one interface every job store implements (memory, sqlite, Convex). Writes to a job that is
 * no longer `streaming` are refused (they answer `false`), so a late write from an aborted or
 * timed-out run can never overwrite a final state. The contract suite in
 * tests/support/job-store-contract.ts pins this down for every store.
 */
import type {
  ActiveToolCall, BackgroundJob, ChatJobRequest, JobCheckpoint, JobError, JobNotification, JobStatus, JobSteer, JobType,
  ToolExecutionRecord, ToolRoundRecord,
} from '../../../../shared/types/job'
import type { WorkflowState } from '../../../../shared/types/workflow'
import type { InputRequestStore } from './input-request-store'
import type { Usage } from '../../../../shared/types/chat'
import type { StoredJobEvent } from '../../../../shared/types/job-events'

/** Fields a new job starts with. */
export interface CreateJobInput {
  id?: string
  userId: string
  threadId: string
  messageId: string
  type: JobType
  model: string
  request?: ChatJobRequest
  apiKeyCiphertext?: string
  now?: number
  /**
   * Caps a store shared by several instances checks as it creates the job, counting every
   * instance's running jobs (each instance checks its own before): refused with `RunningCapError`.
   */
  caps?: { user: number, total: number }
}

/** A store shared by instances refused a new job: its user (or the deployment) already runs `limit` jobs. */
export class RunningCapError extends Error {
  override name = 'RunningCapError'
  constructor(readonly scope: 'user' | 'server', readonly limit: number) {
    super(`${scope === 'user' ? 'The user' : 'The deployment'} already runs ${limit} jobs.`)
  }
}

/** A throttled progress write: text to append, the latest counters, and the run log's events they came in. */
export interface JobProgressUpdate {
  contentChunk?: string
  reasoningChunk?: string
  chunksReceived?: number
  activeToolCalls?: ActiveToolCall[]
  /** The events viewers got since the last write, in order, numbered on from the job's `eventSeq`. */
  events?: StoredJobEvent[]
  now?: number
}

/** What `readJobEvents` answers: the events kept from a number on, and the last number kept. */
export interface JobEventsRead {
  events: StoredJobEvent[]
  /** The job's `eventSeq`: the last event the store kept (0: none). */
  lastSeq: number
  /** The job's status (a relay stops reading once it ended). */
  status: JobStatus
}

/** Events of a running job's log kept at most; older ones are dropped (a reader from before gets a snapshot). */
export const MAX_KEPT_JOB_EVENTS = 5_000

/** Characters of one event's JSON kept at most; a larger one is kept as "not kept" (a reader passing it gets a snapshot). */
export const MAX_STORED_EVENT_CHARS = 256 * 1024

/**
 * Less frequent changes, written as they happen (not throttled): rounds, one executed tool call,
 * the checkpoint, usage, text rewinds on resume, a workflow's state. One atomic write.
 */
export interface JobRunStateUpdate {
  toolRounds?: ToolRoundRecord[]
  /** One executed tool call added to its round (creating the round if needed; replacing an earlier record of the same call). */
  toolExecution?: { round: number, execution: ToolExecutionRecord }
  checkpoint?: JobCheckpoint | null
  usage?: Usage
  /** Replace the text (used when a resumed job rewinds to its checkpoint). */
  content?: string
  reasoning?: string
  resumeCount?: number
  /** Every message the person sent the running answer so far (replaces the list). */
  steers?: JobSteer[]
  /** A workflow run's whole state (the stores write only its parts that changed). */
  workflowState?: WorkflowState
  now?: number
}

/** How a job finished successfully. */
export interface CompleteJobInput {
  content: string
  reasoning: string
  usage?: Usage
  finishReason: string
  chunksReceived: number
  now?: number
}

/** The text and counters a job ends with when it fails or is aborted. */
export interface JobFinalState {
  content?: string
  reasoning?: string
  chunksReceived?: number
  usage?: Usage
  finishReason?: string
  now?: number
}

/**
 * How a job ends: complete with its final text; failed (`error`) or refused by a person
 * (`rejected`: an approval said no, `error` says which) keeping the text it had; or aborted
 * (allowed from any instance: a person's stop wins over the lease).
 */
export type JobEnd =
  | { status: 'complete', final: CompleteJobInput }
  | { status: 'error' | 'rejected', error: JobError, final?: JobFinalState }
  | { status: 'aborted', final?: JobFinalState }

/** Which jobs `listJobs` answers: a user's (running first, then newest first), or every running job (recovery after a restart). */
export type ListJobsQuery =
  | { userId: string, status?: JobStatus, limit?: number }
  | { streaming: true }

/** A notification before it is stored. */
export type NewJobNotification = Omit<JobNotification, 'id' | 'createdAt' | 'readAt'> & { now?: number }

/** What a person is told of jobs that ended while they were away; kept and deleted with their jobs. */
export interface JobNotificationStore {
  add(notification: NewJobNotification): Promise<JobNotification>
  /** Newest first. */
  list(userId: string, options?: { unreadOnly?: boolean, limit?: number }): Promise<JobNotification[]>
  /** Marks the given notifications (or all of the user's) read; returns how many changed. */
  markRead(userId: string, ids?: readonly string[], now?: number): Promise<number>
}

/**
 * The job store port: a job's row (its summary, which lists read), its run log, and its life
 * (created streaming, progress and run state while it streams, one end). Every backend implements
 * these ten methods once; what jobs wait on their users for and what people are told of ended jobs
 * are ports of their own beside it (`inputRequests`, `notifications`), kept and deleted with the jobs.
 */
export interface JobStore {
  /** `memory`, `sqlite` or `convex`. */
  readonly name: string
  /** What jobs wait on their users for (compare-and-set answers and claims). */
  readonly inputRequests: InputRequestStore
  readonly notifications: JobNotificationStore
  createJob(input: CreateJobInput): Promise<BackgroundJob>
  getJob(jobId: string): Promise<BackgroundJob | null>
  /**
   * Appends streamed text, replaces counters and the active tool calls, and appends the run log's
   * events (one atomic write; throttled by the writer). A job's oldest events are dropped once it keeps `MAX_KEPT_JOB_EVENTS`,
   * and its whole log a while after it ended (`cleanupExpired`: its row is the whole of it then).
   */
  updateJob(jobId: string, update: JobProgressUpdate): Promise<boolean>
  /** The run log's events numbered `fromSeq` and after, at most `limit`; null for an unknown job. */
  readJobEvents(jobId: string, fromSeq: number, limit: number): Promise<JobEventsRead | null>
  /** Rounds, a tool call, the checkpoint, usage, rewinds, a workflow's state (see `JobRunStateUpdate`). */
  updateRunState(jobId: string, update: JobRunStateUpdate): Promise<boolean>
  /** Ends a streaming job; `false` when it had already ended (idempotent). */
  endJob(jobId: string, end: JobEnd): Promise<boolean>
  listJobs(query: ListJobsQuery): Promise<BackgroundJob[]>
  /**
   * Deletes jobs that finished before `finishedBefore` (and their notifications and input requests), and folds the run
   * logs of jobs that ended before `logsEndedBefore` into their rows (the log goes); returns how many jobs went.
   * With `ofUser`, only that person's jobs, and all their notifications (their account is being
   * deleted: with `finishedBefore` Infinity, every job of theirs that has ended goes).
   */
  cleanupExpired(finishedBefore: number, logsEndedBefore?: number, ofUser?: string): Promise<number>
  /** Resolves when the store can take a write now (sqlite: the write lock is free); rejects with why not. For `GET /api/health`. */
  ping(): Promise<void>
  close(): Promise<void>
}

/** Default and largest page of a job or notification list. */
export const DEFAULT_LIST_LIMIT = 50
export const MAX_LIST_LIMIT = 200

/** Clamps a requested list size. */
export function listLimit(limit: number | undefined): number {
  return Math.min(Math.max(1, Math.floor(limit ?? DEFAULT_LIST_LIMIT)), MAX_LIST_LIMIT)
}

/** Where a viewer on another instance is in a job's text: its generation and how much of each kind it has. */
export interface JobTextCursor {
  generation: number
  content: number
  reasoning: number
}

/** A job as a viewer on another instance reads it: everything but its text, and its text since a cursor. */
export interface JobWatch {
  /** The job with `content` and `reasoning` empty (the text is below). */
  job: BackgroundJob
  /** True when the text below is all of it (no cursor, or the text was rewritten since). */
  restarted: boolean
  content: string
  reasoning: string
  cursor: JobTextCursor
}

/** The lease side of a store shared by several instances (Convex), used by the job manager. */
export interface JobLeaseStore {
  readonly instanceId: string
  readonly leaseMs: number
  /** Takes the lease of a free or expired job. */
  claimJob(jobId: string): Promise<boolean>
  /**
   * Keeps this instance's lease of `jobId` renewed until the returned function is called;
   * `onStop` hears of a lost lease or a stop asked for elsewhere (within the store's heartbeat).
   */
  holdLease(jobId: string, onStop: (reason: 'lease-lost' | 'user') => void): () => void
  releaseLease(jobId: string): Promise<boolean>
  /** Asks whichever instance runs the job to stop it. */
  requestAbort(jobId: string): Promise<boolean>
  /** Streaming jobs whose lease has expired (their instance died). */
  listOrphanedJobs(): Promise<BackgroundJob[]>
  /** What a viewer on another instance sees: the job, and its text after `since` (all of it without). */
  watchJob(jobId: string, since?: JobTextCursor): Promise<JobWatch | null>
  /** Tells `onSettled` when a request a job here waits on is answered or closed on another instance (within a heartbeat); stop with the returned function. */
  watchInputRequest(jobId: string, requestId: string, onSettled: () => void): () => void
  /** A job this instance runs starts (true) or stops (false) waiting for a person: its slot stops or starts counting as running. */
  setParked(jobId: string, parked: boolean): Promise<boolean>
  /** Tells the store how many people here watch `jobId`, which another instance runs (0: none any more; 'ended': the job ended, stop reporting). */
  reportViewers(jobId: string, count: number | 'ended'): void
  /** How many people watch `jobId` from other instances. */
  countRemoteViewers(jobId: string): Promise<number>
}

/** Whether the store is shared by several instances (it leases jobs). */
export function isLeaseStore(store: JobStore): store is JobStore & JobLeaseStore {
  return typeof (store as Partial<JobLeaseStore>).claimJob === 'function'
}
