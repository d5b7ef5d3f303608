/**
 * How each store operation changes a job record, shared by the providers that hold whole
 * records (memory) and used as the reference the sqlite and Convex providers must match.
 */
import { randomUUID } from 'node:crypto'
import type { BackgroundJob, JobError, ToolExecutionRecord, ToolRoundRecord } from '../../../../shared/types/job'
import { MAX_KEPT_JOB_EVENTS, type CreateJobInput, type JobEnd, type JobFinalState, type JobProgressUpdate, type JobRunStateUpdate } from './job-store'
import type { StoredJobEvent } from '../../../../shared/types/job-events'
import { endOpenToolCalls } from '../../../../shared/job-state'

/** A fresh `streaming` record. */
export function newJobRecord(input: CreateJobInput): BackgroundJob {
  const now = input.now ?? Date.now()
  const job: BackgroundJob = {
    id: input.id ?? randomUUID(),
    userId: input.userId,
    threadId: input.threadId,
    messageId: input.messageId,
    type: input.type,
    model: input.model,
    status: 'streaming',
    content: '',
    reasoning: '',
    chunksReceived: 0,
    activeToolCalls: [],
    toolRounds: [],
    startedAt: now,
    updatedAt: now,
    resumeCount: 0,
  }
  if (input.request) job.request = input.request
  if (input.apiKeyCiphertext) job.apiKeyCiphertext = input.apiKeyCiphertext
  return job
}

/** Appends text and replaces counters (and notes the last run-log event, when it brings any). */
export function applyProgress(job: BackgroundJob, update: JobProgressUpdate): void {
  const last = update.events?.at(-1)
  if (last) job.eventSeq = last.seq
  if (update.contentChunk) job.content += update.contentChunk
  if (update.reasoningChunk) job.reasoning += update.reasoningChunk
  if (update.chunksReceived !== undefined) job.chunksReceived = update.chunksReceived
  if (update.activeToolCalls) job.activeToolCalls = update.activeToolCalls
  job.updatedAt = update.now ?? Date.now()
}

/** The rounds with `execution` added to its round (replacing an earlier record of the same call). */
export function withToolExecution(rounds: readonly ToolRoundRecord[], round: number, execution: ToolExecutionRecord): ToolRoundRecord[] {
  const next = rounds.map(entry => ({ round: entry.round, toolCalls: [...entry.toolCalls] }))
  let entry = next.find(item => item.round === round)
  if (!entry) {
    entry = { round, toolCalls: [] }
    next.push(entry)
    next.sort((a, b) => a.round - b.round)
  }
  const existing = entry.toolCalls.findIndex(call => call.id === execution.id)
  if (existing >= 0) entry.toolCalls[existing] = execution
  else entry.toolCalls.push(execution)
  return next
}

/** Applies rounds, a tool call, the checkpoint, usage, text rewinds and a workflow's state. */
export function applyRunState(job: BackgroundJob, update: JobRunStateUpdate): void {
  if (update.toolRounds) job.toolRounds = update.toolRounds
  if (update.toolExecution) job.toolRounds = withToolExecution(job.toolRounds, update.toolExecution.round, update.toolExecution.execution)
  if (update.checkpoint === null) delete job.checkpoint
  else if (update.checkpoint) job.checkpoint = update.checkpoint
  if (update.usage) job.usage = update.usage
  if (update.content !== undefined) job.content = update.content
  if (update.reasoning !== undefined) job.reasoning = update.reasoning
  if (update.resumeCount !== undefined) job.resumeCount = update.resumeCount
  if (update.steers) job.steers = update.steers
  if (update.workflowState) job.workflowState = update.workflowState
  job.updatedAt = update.now ?? Date.now()
}

/** The text and counters a job ends with, the reason it gives (`finishReason`), and for a failure or refusal why, whatever its end. */
export function finalStateOf(end: JobEnd): JobFinalState & { finishReason: string, error?: JobError } {
  const final: JobFinalState = end.final ?? {}
  const finishReason = final.finishReason ?? (end.status === 'complete' ? 'stop' : end.status)
  return end.status === 'error' || end.status === 'rejected' ? { ...final, finishReason, error: end.error } : { ...final, finishReason }
}

/** Ends a job: its status, final text and counters, and for a failure or refusal why. */
export function applyEnd(job: BackgroundJob, end: JobEnd): void {
  const final = finalStateOf(end)
  job.status = end.status
  if (final.content !== undefined) job.content = final.content
  if (final.reasoning !== undefined) job.reasoning = final.reasoning
  if (final.chunksReceived !== undefined) job.chunksReceived = final.chunksReceived
  if (final.usage) job.usage = final.usage
  job.finishReason = final.finishReason
  if (final.error) job.error = final.error
  const now = final.now ?? Date.now()
  job.updatedAt = now
  job.completedAt = now
  job.activeToolCalls = endOpenToolCalls(job.activeToolCalls, now)
  delete job.checkpoint
  // The key is only needed while the job may still resume.
  delete job.apiKeyCiphertext
}

/** Running jobs first, then newest first. */
export function compareForList(a: BackgroundJob, b: BackgroundJob): number {
  const running = Number(b.status === 'streaming') - Number(a.status === 'streaming')
  return running !== 0 ? running : b.startedAt - a.startedAt
}

/** A run-log event as a database keeps it: its type beside its JSON (`body`, absent when not kept), and whether it was superseded. */
export interface EncodedJobEvent {
  seq: number
  attempt: number
  type: string
  body?: string
  superseded?: boolean
}

/** `event` as sqlite and Convex keep it. */
export function encodeJobEvent(event: StoredJobEvent): EncodedJobEvent {
  return {
    seq: event.seq,
    attempt: event.attempt,
    // Only a workflow state is ever superseded (run-log.ts), and then neither kept nor omitted.
    type: event.event?.type ?? event.omitted ?? 'workflow-state',
    ...(event.event ? { body: JSON.stringify(event.event) } : {}),
    ...(event.superseded ? { superseded: true } : {}),
  }
}

/** The run-log event a database kept (`encodeJobEvent` the other way). */
export function decodeJobEvent(encoded: EncodedJobEvent): StoredJobEvent {
  const event: StoredJobEvent = { seq: encoded.seq, attempt: encoded.attempt }
  if (encoded.superseded) event.superseded = true
  else if (encoded.body !== undefined) event.event = JSON.parse(encoded.body)
  else event.omitted = encoded.type as NonNullable<StoredJobEvent['omitted']>
  return event
}

/** A run log with `appended` added, past events replaced by number and the oldest dropped beyond `MAX_KEPT_JOB_EVENTS`. */
export function withAppendedEvents(kept: readonly StoredJobEvent[], appended: readonly StoredJobEvent[]): StoredJobEvent[] {
  const first = appended[0]?.seq ?? Number.POSITIVE_INFINITY
  const last = appended.at(-1)?.seq ?? 0
  return [...kept.filter(event => event.seq < first), ...appended].filter(event => event.seq > last - MAX_KEPT_JOB_EVENTS)
}
