/**
 * What every job run has, chat or workflow: the throttled writer into the store, the count of
 * running tools behind the inactivity timeout, the viewers' form of a tool call, and the ending
 * (end.ts). The runners (chat.ts, workflow.ts) add only what differs.
 */
import type { JobInputs } from '../waits/job-inputs'
import type { StoredAttachmentContent } from '../../attachments/attachments'
import { toPublicJob } from '../public-job'
import type { ServerConfig } from '../../config/server-config'
import type { ToolAccessCheck } from '../../tools/policy/tool-policy'
import type { ToolCredentials } from '../../tools/tool-types'
import type { RunTools } from '../../tools/run-tools'
import type { JobStore } from '../../stores/jobs/job-store'
import type { JobLiveHub } from '../live-hub'
import { ThrottledJobWriter } from '../writer'
import type { RunBudget } from '../admission/budget-pool'
import { endJobRun, type JobRunOutcome, type RunEnding } from './end'
import { JobRunEvents } from './run-events'
import { attemptOfEvent } from '../resume-from-log'
import type { Role } from '../../../../shared/types/account'
import { UNOBSERVED, type JobObserver } from '../job-observer'
import type { ToolCallStatus } from '../../tools/run-tool-calls'
import type { BackgroundJob } from '../../../../shared/types/job'

/** Where log lines go (consola in the server, silent in tests). */
export interface JobLogger {
  warn: (message: string, ...details: unknown[]) => void
  /** A run's start and end (the server's log: one line each, with the job's ids in JSON form). */
  info?: (message: string) => void
  /** The same logger with `defaults` on every line (consola's): a run's logger carries its job's ids. */
  withDefaults?: (defaults: Record<string, unknown>) => JobLogger
}

/** What the manager gives every run. */
export interface JobRunOptions {
  job: BackgroundJob
  store: JobStore
  hub: JobLiveHub
  config: ServerConfig
  signal: AbortSignal
  /** Called on every sign of life (text, tool start and finish), for the inactivity timeout. */
  onActivity?: (toolsRunning: number) => void
  /** Called when the store refuses a progress write: the job is no longer this run's to write. */
  onWriteRefused?: () => void
  /** The run's share of its user's daily budget: its requests reserve and count against it (none: no budget). */
  budget?: RunBudget
  /** The role of the job's user (default `user`): the metrics count model use by role. */
  role?: Role
  /** The tool policy for the job's user, read again before every model request and tool node. */
  toolAccess?: () => Promise<ToolAccessCheck>
  /** The credentials of the job's user, read again before every tool round and tool node. */
  credentials?: () => Promise<ToolCredentials>
  /** Where the job asks its user (browser tools, approvals, questions); without it those are refused. */
  inputs?: JobInputs
  /** A file the job's conversation names (its user's only), for the model requests; without it files are left out. */
  readAttachment?: (attachmentId: string) => Promise<StoredAttachmentContent | null>
  logger?: JobLogger
  /** Where the run reports tool calls and its end for monitoring (none: nowhere). */
  observer?: JobObserver
  /** The tool registry the run reads and runs tools through. */
  tools: RunTools
}

/** The shared parts of one run. */
export class JobRunHarness {
  readonly writer: ThrottledJobWriter
  readonly logger: JobLogger
  readonly observer: JobObserver
  readonly role: Role
  /** Model requests the run made (for monitoring: rounds per answer). */
  modelRounds = 0
  private toolsRunning = 0
  private sink: JobRunEvents | undefined

  constructor(private readonly options: JobRunOptions) {
    const { job, store, config } = options
    this.logger = options.logger ?? { warn: () => {} }
    this.observer = options.observer ?? UNOBSERVED
    this.role = options.role ?? 'user'
    this.writer = new ThrottledJobWriter(store, job.id, config.backgroundJobs.flush, error => this.logger.warn(`Job ${job.id}: a progress write failed`, error), job, () => options.onWriteRefused?.())
  }

  /** A sign of life (resets the inactivity timeout). */
  activity(): void {
    this.options.onActivity?.(this.toolsRunning)
  }

  /** A tool started (the inactivity timeout waits while tools run). */
  toolStarted(): void {
    this.toolsRunning++
    this.activity()
  }

  /** A tool ended. */
  toolFinished(): void {
    this.toolsRunning = Math.max(0, this.toolsRunning - 1)
    this.activity()
  }

  /** A tool call began executing (a wait for a person is `toolStarted` alone: it runs no tool). */
  toolCallStarted(tool: string): void {
    this.toolStarted()
    this.observer.toolStarted(tool)
  }

  /** That call ended. */
  toolCallFinished(tool: string, status: ToolCallStatus, durationMs: number): void {
    this.toolFinished()
    this.observer.toolEnded(tool, status, durationMs)
  }

  /** The agent run's tool callbacks (agent-run.ts `tools`). */
  agentTools(): { started: (tool: string) => void, finished: (record: { name: string, status: ToolCallStatus, executionTimeMs: number }) => void } {
    return {
      started: tool => this.toolCallStarted(tool),
      finished: record => this.toolCallFinished(record.name, record.status, record.executionTimeMs),
    }
  }

  /** The error recorded when the inactivity timeout stopped the run. */
  timeoutMessage(what: string): string {
    return `${what} stopped after ${Math.round(this.options.config.backgroundJobs.jobTimeoutMs / 1000)} s with no progress.`
  }

  /** Where the run's events go (hub and store together); there once `openLive` has run. */
  get events(): JobRunEvents {
    if (!this.sink) throw new Error('openLive() first')
    return this.sink
  }

  /**
   * Opens the job's live view and its event sink from `state`. A resumed run shows again what the
   * job had asked its user before the restart, and gets those requests back (open ones are waited on again).
   */
  async openLive(state: BackgroundJob, resumed: boolean): Promise<void> {
    const { inputs, hub, store } = this.options
    const requests = resumed && inputs ? await inputs.ofJob(state.id).catch(() => []) : []
    // The run that wrote the last event kept: a viewer holding its id resumes from memory.
    const baseAttempt = state.eventSeq ? await attemptOfEvent(store, state.id, state.eventSeq).catch(() => undefined) : undefined
    this.sink = new JobRunEvents(state.id, hub, this.writer, store, state)
    this.sink.open({ ...toPublicJob(state), ...(requests.length > 0 ? { inputRequests: requests } : {}) }, { attempt: state.resumeCount, resumed, ...(baseAttempt === undefined ? {} : { baseAttempt }) })
    this.observer.runStarted(state.type, resumed)
    this.logger.info?.(`Job ${state.id} (${state.type}) ${resumed ? 'resumed' : 'started'}.`)
  }

  /** Ends the run (see end.ts): terminal write, viewers told, owner notified when nobody watched. */
  async end(ending: RunEnding): Promise<JobRunOutcome> {
    const { job, store, signal, inputs } = this.options
    const outcome = await endJobRun({ job, store, events: this.events, signal, inputs, logger: this.logger, ...ending })
    this.observer.runEnded(job.type, outcome, this.modelRounds)
    this.logger.info?.(`Job ${job.id} (${job.type}) ${outcome === 'interrupted' ? 'stopped to resume after the restart' : `ended: ${outcome}`} after ${this.modelRounds} model request${this.modelRounds === 1 ? '' : 's'}.`)
    return outcome
  }
}
