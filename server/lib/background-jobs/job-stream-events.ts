/**
 * The events a job stream carries, and their SSE framing. Every event has an id
 * `<epoch>-<seq>`: the epoch names one live run of a job in one server process, the sequence
 * counts its events, so a reconnect with `Last-Event-ID` can be replayed exactly or, when that run
 * is gone, answered with a fresh snapshot.
 */
import type { Usage } from '../../utils/openrouter/types'
import type { ActiveToolCall, JobError, JobStatus, PublicJob, WorkflowState } from '../../utils/background-jobs/types'

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
export type JobStreamEvent = JobSnapshotEvent | JobDeltaEvent | JobToolCallEvent | JobWorkflowStateEvent | JobStatusEvent

/** An event with its id and its SSE frame, serialised once however many viewers get it. */
export interface SequencedJobEvent {
  id: string
  seq: number
  event: JobStreamEvent
  frame: string
}

/** The SSE frame for one event (`id`, `event`, one `data` line of JSON). */
export function formatSseFrame(id: string, event: JobStreamEvent): string {
  const { type, ...data } = event
  // JSON.stringify never emits a raw newline, so one data line is always enough.
  return `id: ${id}\nevent: ${type}\ndata: ${JSON.stringify(data)}\n\n`
}

/** Builds the id of event `seq` of live run `epoch`. */
export function formatEventId(epoch: string, seq: number): string {
  return `${epoch}-${seq}`
}

/** Reads a `Last-Event-ID`; undefined when absent or not ours. */
export function parseEventId(value: string | undefined | null): { epoch: string, seq: number } | undefined {
  const match = value?.trim().match(/^([a-z0-9]{4,32})-(\d{1,15})$/)
  return match ? { epoch: match[1]!, seq: Number(match[2]) } : undefined
}
