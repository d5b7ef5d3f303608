/**
 * A job's state as the UI shows it, rebuilt from the job stream's events (shared/types/job-events:
 * snapshot, delta, tool-call, workflow-state, input-request, status). Pure functions, shared by the stream
 * composable and its tests.
 */
import type { JobStreamEvent } from '../../shared/types/job-events'
import type { ActiveToolCall, JobError, JobStatus, PublicJob } from '../../shared/types/job'
import type { WorkflowNodeState, WorkflowState } from '../../shared/types/workflow'
import type { JobInputRequest } from '../../shared/types/input-request'

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
}

/** A view before any event arrived. */
export function emptyJobView(jobId: string): JobView {
  return { jobId, status: 'connecting', content: '', reasoning: '', chunksReceived: 0, toolCalls: [] }
}

function upsertToolCall(calls: ToolCallView[], call: ToolCallView): ToolCallView[] {
  const index = calls.findIndex(item => item.id === call.id && item.round === call.round)
  if (index < 0) return [...calls, call]
  const next = [...calls]
  next[index] = call
  return next
}

/**
 * Applies one event. A snapshot replaces everything; a delta must continue the text exactly
 * (its offset equals what we have), otherwise it is ignored: the stream then resyncs with a
 * snapshot on its next connect.
 */
export function applyJobEvent(view: JobView, event: JobStreamEvent, id?: string): JobView {
  const next: JobView = { ...view }
  if (id) next.lastEventId = id
  switch (event.type) {
    case 'snapshot': {
      const { job } = event
      return {
        ...next,
        threadId: job.threadId,
        model: job.model,
        status: job.status,
        content: job.content,
        reasoning: job.reasoning,
        chunksReceived: job.chunksReceived,
        toolCalls: job.activeToolCalls ?? [],
        finishReason: job.finishReason,
        error: job.error,
        startedAt: job.startedAt,
        completedAt: job.completedAt,
        workflowState: job.workflowState,
        workflow: job.workflow,
        inputRequests: job.inputRequests ?? [],
      }
    }
    case 'input-request': {
      const requests = view.inputRequests ?? []
      const index = requests.findIndex(item => item.id === event.request.id)
      next.inputRequests = index < 0 ? [...requests, event.request] : requests.with(index, event.request)
      return next
    }
    case 'workflow-state':
      next.workflowState = event.workflowState
      if (next.status === 'connecting') next.status = 'streaming'
      return next
    case 'delta':
      if (event.contentOffset !== view.content.length || event.reasoningOffset !== view.reasoning.length) return view
      next.content = view.content + (event.content ?? '')
      next.reasoning = view.reasoning + (event.reasoning ?? '')
      next.chunksReceived = event.chunksReceived
      if (next.status === 'connecting') next.status = 'streaming'
      return next
    case 'tool-call':
      next.toolCalls = upsertToolCall(view.toolCalls, event.toolCall)
      return next
    case 'status':
      next.status = event.status
      next.finishReason = event.finishReason
      next.error = event.error
      next.completedAt = event.completedAt
      next.toolCalls = view.toolCalls.map(call => call.status === 'pending' || call.status === 'running' ? { ...call, status: 'error', error: 'stopped before it finished' } : call)
      return next
    default:
      return view
  }
}

/** Whether the job has ended. */
export function isFinished(view: Pick<JobView, 'status'>): boolean {
  return view.status !== 'connecting' && view.status !== 'streaming'
}

/** A sentence for an ended job that did not simply complete, with what to do. */
export function describeOutcome(view: Pick<JobView, 'status' | 'error' | 'finishReason'>): string | undefined {
  if (view.status === 'aborted') return 'Stopped. The answer above is what arrived before you stopped it.'
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
