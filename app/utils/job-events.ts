/**
 * A job's state as the UI shows it, rebuilt from the job stream's events (shared/types/job-events:
 * snapshot, delta, tool-call, workflow-state, input-request, status) by the one fold the server uses
 * too (shared/job-state.ts). Pure functions, shared by the stream composable and its tests.
 */
import type { JobStreamEvent } from '../../shared/types/job-events'
import type { ActiveToolCall, JobError, JobStatus, PublicJob } from '../../shared/types/job'
import type { WorkflowNodeState, WorkflowState } from '../../shared/types/workflow'
import type { JobInputRequest } from '../../shared/types/input-request'
import { applyJobEvent as foldJobEvent, emptyPublicJob } from '#shared/job-state'

/** One tool call card's data: the server's tool call record. */
export type ToolCallView = ActiveToolCall

/** How a job failed, in the server's words. */
export type JobErrorView = JobError

/** What the UI knows about a job. */
export interface JobView {
  jobId: string
  threadId?: string
  model?: string
  status: 'connecting' | JobStatus
  content: string
  reasoning: string
  chunksReceived: number
  toolCalls: ToolCallView[]
  finishReason?: string
  error?: JobErrorView
  startedAt?: number
  completedAt?: number
  lastEventId?: string
  /** Workflow runs: every node's state. */
  workflowState?: WorkflowState
  /** Workflow runs: the workflow as it was when the run started. */
  workflow?: PublicJob['workflow']
  /** What the job asked its user (browser tools, approvals, questions), open and settled. */
  inputRequests?: JobInputRequest[]
  /** The job these fields are read from, as the events so far describe it. */
  job: PublicJob
}

/** A view before any event arrived. */
export function emptyJobView(jobId: string): JobView {
  return viewOf(emptyPublicJob(jobId), 'connecting')
}

function viewOf(job: PublicJob, status: JobView['status'], lastEventId?: string): JobView {
  return {
    jobId: job.id,
    threadId: job.threadId || undefined,
    model: job.model || undefined,
    status,
    content: job.content,
    reasoning: job.reasoning,
    chunksReceived: job.chunksReceived,
    toolCalls: job.activeToolCalls,
    finishReason: job.finishReason,
    error: job.error,
    startedAt: job.startedAt || undefined,
    completedAt: job.completedAt,
    lastEventId,
    workflowState: job.workflowState,
    workflow: job.workflow,
    inputRequests: job.inputRequests ?? [],
    job,
  }
}

/**
 * Applies one event with the one fold of job events (shared/job-state.ts). A delta that does not
 * continue the text exactly is ignored (the stream then resyncs with a snapshot on its next
 * connect). Until the first event that says so, a view stays `connecting`.
 */
export function applyJobEvent(view: JobView, event: JobStreamEvent, id?: string): JobView {
  const job = foldJobEvent(view.job, event)
  if (job === view.job && event.type === 'delta') return view
  const stillConnecting = view.status === 'connecting' && (event.type === 'tool-call' || event.type === 'input-request')
  return viewOf(job, stillConnecting ? 'connecting' : job.status, id ?? view.lastEventId)
}

/** Whether the job has ended. */
export function isFinished(view: Pick<JobView, 'status'>): boolean {
  return view.status !== 'connecting' && view.status !== 'streaming'
}

/** A sentence for an ended job that did not simply complete, with what to do; `of` says whether it is an answer or a workflow run. */
export function describeOutcome(view: Pick<JobView, 'status' | 'error' | 'finishReason'>, of: 'answer' | 'run' = 'answer'): string | undefined {
  if (view.status === 'aborted') return of === 'run' ? 'Stopped. The steps that finished before you stopped the run keep their outputs.' : 'Stopped. The answer above is what arrived before you stopped it.'
  if (view.status === 'rejected') return view.error ? [view.error.message, view.error.hint].filter(Boolean).join(' ') : 'Not approved, so the run ended there.'
  if (view.status === 'error') {
    const error = view.error
    if (!error) return 'The answer failed. Try sending it again.'
    if (error.status === 402) return `${error.message} Add credits to your OpenRouter account, or switch to the offline demo model.`
    if (error.status === 401 || error.status === 403) return `${error.message} Check the API key in Settings.`
    if (error.status === 429) return `${error.message} The model is rate-limited; wait a moment and send again, or pick another model.`
    return error.hint ? `${error.message} ${error.hint}` : error.message
  }
  if (view.finishReason === 'tool_limit') return 'The assistant reached its limit of tool rounds for one answer and answered with what it had. Ask a narrower question to go further.'
  if (view.finishReason === 'length') return 'The answer was cut off at the model\'s length limit. Ask it to continue.'
  if (view.finishReason === 'content_filter') return 'The provider\'s content filter stopped this answer.'
  return undefined
}

/** "3 ms", "0.4 s", "1.5 s", "12 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 100) return `${Math.round(ms)} ms`
  if (ms < 10_000) return `${(ms / 1000).toFixed(1)} s`
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return `${seconds} s`
  return `${Math.floor(seconds / 60)} min ${seconds % 60} s`
}

/** Tokens and, when the upstream reported one, cost: "1,234 tokens · $0.0021". */
export function formatUsage(usage: { totalTokens: number, cost: number }): string {
  const tokens = `${usage.totalTokens.toLocaleString()} tokens`
  return usage.cost > 0 ? `${tokens} · $${usage.cost.toFixed(usage.cost < 0.01 ? 4 : 2)}` : tokens
}

/** A workflow run's status in words (the run view and the runs list). */
export const RUN_STATUS_LABELS: Record<JobStatus, string> = { streaming: 'Running', complete: 'Finished', error: 'Failed', aborted: 'Stopped', rejected: 'Rejected' }

/** What a workflow step's (or a loop iteration's) status is called. */
export const STEP_STATUS_LABELS: Record<WorkflowNodeState['status'], string> = { pending: 'Waiting', running: 'Running', completed: 'Done', error: 'Failed', skipped: 'Skipped' }

/** What a step's retries came to, in words: the next try's time while it waits, else how many tries it took (nothing for one try). */
export function retryNote(step: WorkflowNodeState | undefined): string | undefined {
  if (!step?.attempts) return undefined
  if (step.status === 'running' && step.retryAt !== undefined) return `Try ${step.attempts} failed; try ${step.attempts + 1} at ${new Date(step.retryAt).toLocaleTimeString()}`
  if (step.status === 'completed') return `Done on try ${step.attempts + 1}`
  if (step.status === 'error') return `Failed after ${step.attempts + 1} tries`
  return undefined
}
