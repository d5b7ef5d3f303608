/**
 * A job's state as the UI shows it, rebuilt from the job stream's events (shared/types/job-events:
 * snapshot, delta, tool-call, workflow-state, input-request, status) by the one fold the server uses
 * too (shared/job-state.ts). Pure functions, shared by the stream composable and its tests.
 */
import type { JobStreamEvent } from '../../shared/types/job-events'
import type { ActiveToolCall, JobError, JobStatus, PublicJob } from '../../shared/types/job'
import type { WorkflowNodeState, WorkflowState } from '../../shared/types/workflow'
import type { JobInputRequest } from '../../shared/types/input-request'
import { applyJobEvent, emptyPublicJob } from '#shared/job-state'
import { formatNumber, formatTime, tr } from './i18n'

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
 * The view after one event: the job from the one fold of job events (shared/job-state.ts), with the
 * view's connection state and event id. A delta that does not continue the text exactly is ignored
 * (the stream then resyncs with a snapshot on its next connect). Until the first event that says
 * so, a view stays `connecting`.
 */
export function viewAfterEvent(view: JobView, event: JobStreamEvent, id?: string): JobView {
  const job = applyJobEvent(view.job, event)
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
  if (view.status === 'aborted') return of === 'run' ? tr('outcome.stoppedRun') : tr('outcome.stoppedAnswer')
  if (view.status === 'rejected') return view.error ? [view.error.message, view.error.hint].filter(Boolean).join(' ') : tr('outcome.notApproved')
  if (view.status === 'error') {
    const error = view.error
    if (!error) return tr('outcome.failed')
    if (error.status === 402) return tr('outcome.credits', { message: error.message })
    if (error.status === 401 || error.status === 403) return tr('outcome.key', { message: error.message })
    if (error.status === 429) return tr('outcome.rateLimited', { message: error.message })
    return error.hint ? `${error.message} ${error.hint}` : error.message
  }
  if (view.finishReason === 'tool_limit') return tr('outcome.toolLimit')
  if (view.finishReason === 'length') return tr('outcome.length')
  if (view.finishReason === 'content_filter') return tr('outcome.contentFilter')
  return undefined
}

/** "3 ms", "0.4 s", "1.5 s", "12 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 100) return tr('duration.ms', { n: formatNumber(Math.round(ms)) })
  if (ms < 10_000) return tr('duration.seconds', { n: formatNumber(ms / 1000, { minimumFractionDigits: 1, maximumFractionDigits: 1 }) })
  const seconds = Math.round(ms / 1000)
  if (seconds < 60) return tr('duration.seconds', { n: formatNumber(seconds) })
  return tr('duration.minutes', { m: formatNumber(Math.floor(seconds / 60)), s: formatNumber(seconds % 60) })
}

/** Tokens and, when the upstream reported one, cost: "1,234 tokens · $0.0021". */
export function formatUsage(usage: { totalTokens: number, cost: number }): string {
  const tokens = tr('usage.tokens', { n: formatNumber(usage.totalTokens) })
  const digits = usage.cost < 0.01 ? 4 : 2
  return usage.cost > 0 ? tr('usage.withCost', { tokens, cost: formatNumber(usage.cost, { style: 'currency', currency: 'USD', minimumFractionDigits: digits, maximumFractionDigits: digits }) }) : tokens
}

/** A workflow run's status in words (the run view and the runs list). */
export function runStatusLabel(status: JobStatus): string {
  return tr(`runStatus.${status}`)
}

/** What a workflow step's (or a loop iteration's) status is called; `inline` within a line ("· done"). */
export function stepStatusLabel(status: WorkflowNodeState['status'], inline = false): string {
  return tr(`${inline ? 'stepStatusInline' : 'stepStatus'}.${status}`)
}

/** What a step's retries came to, in words: the next try's time while it waits, else how many tries it took (nothing for one try). */
export function retryNote(step: WorkflowNodeState | undefined): string | undefined {
  if (!step?.attempts) return undefined
  if (step.status === 'running' && step.retryAt !== undefined) return tr('retry.waiting', { n: step.attempts, next: step.attempts + 1, time: formatTime(step.retryAt, { timeStyle: 'medium' }) })
  if (step.status === 'completed') return tr('retry.doneOn', { n: step.attempts + 1 })
  if (step.status === 'error') return tr('retry.failedAfter', { n: step.attempts + 1 })
  return undefined
}
