/**
 * What a job stream (`GET /api/jobs/:id/stream`) carries, event by event: the server sends these,
 * the app's reducer (app/utils/job-events.ts) applies them. Noun-verb names as in the AI SDK.
 */
import type { Usage } from './chat'
import type { ActiveToolCall, JobError, JobStatus, PublicJob } from './job'
import type { WorkflowState } from './workflow'
import type { JobInputRequest } from './input-request'

/** Everything a viewer needs to draw the job; replaces whatever it had. */
export interface JobSnapshotEvent { type: 'snapshot', job: PublicJob }

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
export type JobStreamEvent = JobSnapshotEvent | JobDeltaEvent | JobToolCallEvent | JobWorkflowStateEvent | JobInputRequestEvent | JobStatusEvent
