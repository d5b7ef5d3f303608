/**
 * The one fold of a job's events (shared/types/job-events.ts) into the job they describe. The live
 * hub keeps its viewers' state with it, the browser draws with it, and a reader replaying a stored
 * run log gets the same job a viewer saw live. Pure: it never changes what it is given.
 *
 * Every event is applied on its own terms: a snapshot replaces the job; a delta continues the text
 * only when its offsets equal what the job has (otherwise the job is returned unchanged and
 * `continuesText` says why); tool calls and input requests are upserted by their ids, a steer added once; a status
 * ends the job, and the calls still pending or running end with it.
 */
import type { ActiveToolCall, PublicJob } from './types/job'
import type { JobStreamEvent } from './types/job-events'
import type { JobInputRequest } from './types/input-request'

/** What a call still pending or running says when its job ends. */
export const STOPPED_CALL_ERROR = 'stopped before it finished'

/** The calls with every one still pending or running ended as stopped (at `finishedAt` when known). */
export function endOpenToolCalls(calls: readonly ActiveToolCall[], finishedAt?: number): ActiveToolCall[] {
  return calls.map(call => call.status === 'pending' || call.status === 'running'
    ? { ...call, status: 'error', error: STOPPED_CALL_ERROR, ...(finishedAt === undefined ? {} : { finishedAt }) }
    : call)
}

/** `calls` with `call` in the place of the one with its id and round (or added at the end). */
export function upsertToolCall(calls: readonly ActiveToolCall[], call: ActiveToolCall): ActiveToolCall[] {
  const index = calls.findIndex(item => item.id === call.id && item.round === call.round)
  return index < 0 ? [...calls, call] : calls.with(index, call)
}

/** `requests` with `request` in the place of the one with its id (or added at the end). */
export function upsertInputRequest(requests: readonly JobInputRequest[], request: JobInputRequest): JobInputRequest[] {
  const index = requests.findIndex(item => item.id === request.id)
  return index < 0 ? [...requests, request] : requests.with(index, request)
}

/** Whether a delta continues `job`'s text exactly (its offsets are the lengths the job has). */
export function continuesText(job: Pick<PublicJob, 'content' | 'reasoning'>, event: { contentOffset: number, reasoningOffset: number }): boolean {
  return event.contentOffset === job.content.length && event.reasoningOffset === job.reasoning.length
}

/** The job after `event` (the same object when the event changes nothing or does not apply). */
export function applyJobEvent(job: PublicJob, event: JobStreamEvent): PublicJob {
  switch (event.type) {
    case 'snapshot':
      return event.job
    case 'delta':
      if (!continuesText(job, event)) return job
      return { ...job, content: job.content + (event.content ?? ''), reasoning: job.reasoning + (event.reasoning ?? ''), chunksReceived: event.chunksReceived }
    case 'tool-call':
      return { ...job, activeToolCalls: upsertToolCall(job.activeToolCalls, event.toolCall) }
    case 'steer':
      return job.steers?.some(steer => steer.id === event.steer.id) ? job : { ...job, steers: [...job.steers ?? [], event.steer] }
    case 'workflow-state':
      return { ...job, workflowState: event.workflowState }
    case 'input-request':
      return { ...job, inputRequests: upsertInputRequest(job.inputRequests ?? [], event.request) }
    case 'status': {
      const next: PublicJob = { ...job, status: event.status, activeToolCalls: endOpenToolCalls(job.activeToolCalls, event.completedAt) }
      if (event.completedAt !== undefined) next.completedAt = event.completedAt
      if (event.finishReason !== undefined) next.finishReason = event.finishReason
      if (event.error !== undefined) next.error = event.error
      if (event.usage !== undefined) next.usage = event.usage
      return next
    }
    default:
      return job
  }
}

/** `events` applied in order to `job`. */
export function foldJobEvents(job: PublicJob, events: Iterable<JobStreamEvent>): PublicJob {
  let state = job
  for (const event of events) state = applyJobEvent(state, event)
  return state
}

/** A job nobody has described yet: what a viewer holds before its first event. */
export function emptyPublicJob(jobId: string): PublicJob {
  return {
    id: jobId, userId: '', threadId: '', messageId: '', type: 'chat', model: '', status: 'streaming',
    content: '', reasoning: '', chunksReceived: 0, activeToolCalls: [], toolRounds: [], startedAt: 0, updatedAt: 0, resumeCount: 0,
  }
}
