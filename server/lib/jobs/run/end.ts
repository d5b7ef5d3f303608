/**
 * How every job run ends, chat or workflow: stopped for shutdown or a lost lease (no terminal
 * write, the job resumes elsewhere or later), or written as complete, error, rejected or aborted, announced
 * to viewers, and noted for its owner when nobody watched.
 */
import { isLeaseStore, type JobStore } from '../../stores/jobs/job-store'
import type { BackgroundJob, JobError } from '../../../../shared/types/job'
import type { Usage } from '../../openrouter/types'
import type { JobTerminal } from '../live-hub'
import type { JobRunEvents } from './run-events'
import { notifyUnwatchedJob } from '../notifications'
import type { JobInputs } from '../waits/job-inputs'

/** Why a job's signal was aborted. `lease-lost`: another instance took the job over. */
export type JobStopReason = 'user' | 'timeout' | 'shutdown' | 'lease-lost'

/** How a run ended. `interrupted`: stopped by shutdown or a lost lease, left to resume. */
export type JobRunOutcome = 'complete' | 'error' | 'aborted' | 'rejected' | 'interrupted'

/** What the run itself produced, before stop reasons are taken into account. */
export type RunResult = { status: 'complete', finishReason: string } | { status: 'error', error: JobError } | { status: 'rejected', error: JobError } | { status: 'aborted' }

/** What a runner says about how its run went. */
export interface RunEnding {
  result: RunResult
  final: { content: string, reasoning: string, chunksReceived: number, usage?: Usage }
  /** The error recorded when the inactivity timeout stopped the run. */
  timeoutError: JobError
  /** Send the final text to viewers as a last delta (workflows stream node text elsewhere). */
  streamFinalContent?: boolean
}

/** Ends a run: see the module comment. */
export async function endJobRun(options: RunEnding & {
  job: BackgroundJob
  store: JobStore
  events: JobRunEvents
  signal: AbortSignal
  inputs?: JobInputs
  logger: { warn: (message: string, ...details: unknown[]) => void }
}): Promise<JobRunOutcome> {
  const { job, store, events, result } = options
  const reason = options.signal.aborted ? (options.signal.reason as JobStopReason | undefined) : undefined
  if (reason === 'shutdown' || reason === 'lease-lost') {
    // Shutdown keeps what streamed (the checkpoint says where to resume); a lost lease writes
    // nothing, the new owner's writes win.
    await events.interrupted(reason === 'shutdown')
    return 'interrupted'
  }
  await events.drained()

  const now = Date.now()
  const final = { ...options.final, now }
  const usage = options.final.usage
  let terminal: JobTerminal
  if (reason === 'timeout') {
    await store.endJob(job.id, { status: 'error', error: options.timeoutError, final: { ...final, finishReason: 'timeout' } })
    terminal = { status: 'error', error: options.timeoutError, finishReason: 'timeout', usage, completedAt: now }
  } else if (reason === 'user' || result.status === 'aborted') {
    await store.endJob(job.id, { status: 'aborted', final })
    terminal = { status: 'aborted', finishReason: 'aborted', usage, completedAt: now }
  } else if (result.status === 'error') {
    await store.endJob(job.id, { status: 'error', error: result.error, final: { ...final, finishReason: 'error' } })
    terminal = { status: 'error', error: result.error, finishReason: 'error', usage, completedAt: now }
  } else if (result.status === 'rejected') {
    await store.endJob(job.id, { status: 'rejected', error: result.error, final: { ...final, finishReason: 'rejected' } })
    terminal = { status: 'rejected', error: result.error, finishReason: 'rejected', usage, completedAt: now }
  } else {
    await store.endJob(job.id, { status: 'complete', final: { ...final, finishReason: result.finishReason } })
    terminal = { status: 'complete', finishReason: result.finishReason, usage, completedAt: now }
  }
  // Nothing waits any more: what the job had asked is closed before viewers hear it ended.
  await options.inputs?.closeAllOf(job.id).catch(error => options.logger.warn(`Job ${job.id}: its open requests could not be closed`, error))
  const watchers = events.ended(terminal, options.streamFinalContent ? final : undefined)
  // A subagent's end is its parent's tool result, not news for its owner.
  if (watchers === 0 && reason !== 'user' && !job.request?.subagent && !(await watchedElsewhere(store, job.id, options.logger))) {
    await notifyUnwatchedJob(store, job, terminal, final.content).catch(error => options.logger.warn(`Job ${job.id}: could not record its notification`, error))
  }
  return terminal.status
}

/** Whether someone watched the job to its end from another instance (several instances on one store). */
async function watchedElsewhere(store: JobStore, jobId: string, logger: { warn: (message: string, ...details: unknown[]) => void }): Promise<boolean> {
  if (!isLeaseStore(store)) return false
  try {
    return await store.countRemoteViewers(jobId) > 0
  } catch (error) {
    logger.warn(`Job ${jobId}: could not count its viewers on other instances`, error)
    return false
  }
}
