/** The job store's sqlite rows and how they map to shared/types records (JSON columns parsed). */
import type { BackgroundJob, JobNotification } from '../../../../shared/types/job'
import { joinWorkflowState } from '../../../../shared/workflow-state-parts'
import type { StoredJobEvent } from '../../../../shared/types/job-events'
import { decodeJobEvent } from './job-record'

/** A row of `background_jobs`. */
export interface JobRow {
  id: string
  user_id: string
  thread_id: string
  message_id: string
  type: BackgroundJob['type']
  model: string
  status: BackgroundJob['status']
  content: string
  reasoning: string
  chunks_received: number
  active_tool_calls: string
  tool_rounds: string
  workflow_state: string | null
  usage: string | null
  error: string | null
  finish_reason: string | null
  started_at: number
  updated_at: number
  completed_at: number | null
  resume_count: number
  event_seq: number
  /** 1 while an ended job's run log is still kept (the sweep folds it away). */
  log_kept: number
  request: string | null
  checkpoint: string | null
  api_key_ciphertext: string | null
  steers: string | null
}

/** A row of `job_notifications`. */
export interface NotificationRow {
  id: string
  user_id: string
  job_id: string
  thread_id: string
  kind: JobNotification['kind']
  title: string
  body: string
  created_at: number
  read_at: number | null
}

/** A JSON column value; null for undefined. */
export function json(value: unknown): string | null {
  return value === undefined ? null : JSON.stringify(value)
}

/**
 * The job a row holds; `partsOf` reads a workflow run's stored state parts (shared/workflow-state-parts.ts)
 * when its root names any.
 */
export function toJob(row: JobRow, partsOf?: (jobId: string) => Map<string, string>): BackgroundJob {
  const job: BackgroundJob = {
    id: row.id,
    userId: row.user_id,
    threadId: row.thread_id,
    messageId: row.message_id,
    type: row.type,
    model: row.model,
    status: row.status,
    content: row.content,
    reasoning: row.reasoning,
    chunksReceived: row.chunks_received,
    activeToolCalls: JSON.parse(row.active_tool_calls),
    toolRounds: JSON.parse(row.tool_rounds),
    startedAt: row.started_at,
    updatedAt: row.updated_at,
    resumeCount: row.resume_count,
  }
  if (row.workflow_state) {
    const parts = partsOf && row.workflow_state.includes('"$part"') ? partsOf(row.id) : undefined
    job.workflowState = parts ? joinWorkflowState(row.workflow_state, path => parts.get(path)) : JSON.parse(row.workflow_state)
  }
  if (row.event_seq > 0) job.eventSeq = row.event_seq
  if (row.usage) job.usage = JSON.parse(row.usage)
  if (row.steers) job.steers = JSON.parse(row.steers)
  if (row.error) job.error = JSON.parse(row.error)
  if (row.finish_reason) job.finishReason = row.finish_reason
  if (row.completed_at !== null) job.completedAt = row.completed_at
  if (row.request) job.request = JSON.parse(row.request)
  if (row.checkpoint) job.checkpoint = JSON.parse(row.checkpoint)
  if (row.api_key_ciphertext) job.apiKeyCiphertext = row.api_key_ciphertext
  return job
}

/** The notification a row holds. */
export function toNotification(row: NotificationRow): JobNotification {
  const notification: JobNotification = {
    id: row.id,
    userId: row.user_id,
    jobId: row.job_id,
    threadId: row.thread_id,
    kind: row.kind,
    title: row.title,
    body: row.body,
    createdAt: row.created_at,
  }
  if (row.read_at !== null) notification.readAt = row.read_at
  return notification
}

/** A row of `job_events`. */
export interface JobEventRow {
  seq: number
  attempt: number
  type: string
  body: string | null
  superseded: number
}

/** The run-log event a row holds. */
export function toStoredEvent(row: JobEventRow): StoredJobEvent {
  return decodeJobEvent({ seq: row.seq, attempt: row.attempt, type: row.type, ...(row.body === null ? {} : { body: row.body }), ...(row.superseded ? { superseded: true } : {}) })
}
