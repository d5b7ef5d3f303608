/**
 * What a job stream (`GET /api/jobs/:id/stream`) carries, event by event: the server sends these,
 * the app's reducer (app/utils/job-events.ts) applies them. Noun-verb names as in the AI SDK.
 */
import type { Usage } from './chat'
import type { ActiveToolCall, JobError, JobStatus, JobSteer, PublicJob } from './job'
import type { WorkflowState } from './workflow'
import type { JobInputRequest } from './input-request'

/**
 * Everything a viewer needs to draw the job; replaces whatever it had. `reason` says why a viewer
 * that asked to resume (`Last-Event-ID`) gets one instead of the events after its id:
 * `resumed`: the run started again from its last checkpoint (its text may be shorter): the first
 * event a resumed run sends, kept in its log like any other;
 * `compacted`: the events after that id are no longer kept (the job ended, or its log was long);
 * `diverged`: that id names an event the store never kept (the server stopped before writing it),
 * so the view is replaced from the last event both had; `unknown`: an id of no run of this job.
 */
export interface JobSnapshotEvent { type: 'snapshot', job: PublicJob, reason?: 'resumed' | 'compacted' | 'diverged' | 'unknown' }

/** Text streamed since the previous delta. Offsets are the text lengths before this delta. */
export interface JobDeltaEvent {
  type: 'delta'
  content?: string
  reasoning?: string
  contentOffset: number
  reasoningOffset: number
  chunksReceived: number
}

/** A tool call changed state (pending, running, completed, error). */
export interface JobToolCallEvent { type: 'tool-call', toolCall: ActiveToolCall }

/** The model read a message the person sent the running answer. */
export interface JobSteerEvent { type: 'steer', steer: JobSteer }

/** A workflow moved on. */
export interface JobWorkflowStateEvent { type: 'workflow-state', workflowState: WorkflowState }

/** The job asks its user something, or a request changed (claimed, answered, expired). */
export interface JobInputRequestEvent { type: 'input-request', request: JobInputRequest }

/** The job reached a terminal state; the stream closes after it. */
export interface JobStatusEvent {
  type: 'status'
  status: JobStatus
  finishReason?: string
  error?: JobError
  usage?: Usage
  completedAt?: number
  contentLength: number
}

/** Every event of a job stream. */
export type JobStreamEvent = JobSnapshotEvent | JobDeltaEvent | JobToolCallEvent | JobSteerEvent | JobWorkflowStateEvent | JobInputRequestEvent | JobStatusEvent

/**
 * One event of a job's run log as the store keeps it. `seq` numbers the job's events (1, 2, …,
 * going on across restarts); `attempt` is the run that wrote it (the job's resume count then), so
 * an id a viewer holds names one event on every instance and after every restart.
 */
export interface StoredJobEvent {
  seq: number
  attempt: number
  /**
   * The event as viewers got it; absent when it is not kept (an event past the store's
   * `MAX_STORED_EVENT_CHARS`): a reader replaying past it starts from a snapshot of now instead.
   */
  event?: JobStreamEvent
  /** The type of the event when it is not kept. */
  omitted?: JobStreamEvent['type']
  /** Replaced by a later event of the same write (a workflow state): a reader replaying passes it by. */
  superseded?: true
}

/** The id of event `seq` written by run `attempt` of its job: `<seq>.<attempt>` (SSE `id:` and `Last-Event-ID`). */
export interface JobEventId { seq: number, attempt: number }
