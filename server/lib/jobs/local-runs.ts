/**
 * The jobs this server process runs: each launched in its job's context (its trace, its ids on
 * every log line), its lease kept renewed, its budget metered and recorded however it ends, its
 * slot freed after; and what follows a job's end (the workflow run history, the `onJobFinished`
 * listeners), whether its run ended it here or it ended without one (stopped elsewhere, failed on
 * recovery). The manager (manager.ts) admits and starts jobs; this holds them while they run.
 */
import type { OutputFileAccess } from '../workflows/output-files'
import type { ServerConfig } from '../config/server-config'
import type { ToolAccessCheck } from '../tools/policy/tool-policy'
import type { ToolCredentials } from '../tools/tool-types'
import type { RunTools } from '../tools/run-tools'
import { resolveChatEndpoint } from '../models/chat-endpoint'
import type { ChatEndpoint } from '../openrouter/chat-client'
import type { StoredAttachmentContent } from '../attachments/attachments'
import type { JobStore } from '../stores/jobs/job-store'
import type { JobAdmission, RoleLimitSource } from './admission/gate'
import type { RunBudget } from './admission/budget-pool'
import type { JobLeases } from './leases'
import type { JobLiveHub } from './live-hub'
import type { RelaunchPlan } from './recovery'
import type { JobObserver } from './job-observer'
import { runChatJob, type RunSteering } from './run/chat'
import type { JobRunOutcome, JobStopReason } from './run/end'
import { inJobContext } from '../tracing'
import type { JobLogger } from './run/harness'
import { runWorkflowJob } from './run/workflow'
import type { SweptRun } from './sweeper'
import type { WorkflowRunHistory } from './workflow-runs'
import type { JobInputs } from './waits/job-inputs'
import type { SavedWorkflow } from '../../../shared/types/workflow'
import type { Role } from '../../../shared/types/account'
import type { BackgroundJob, JobError } from '../../../shared/types/job'

/** A job running in this process. */
interface RunningJob extends SweptRun {
  userId: string
  done: Promise<unknown>
}

/** What a run goes with: its budget and its user's role (metrics count model use by role). */
export interface RunAdmission {
  budget: RunBudget
  role: Role
}

/**
 * Told of the stored record once a job has ended (complete, error or aborted), and for a chat job
 * this process ran, of the endpoint it used (with its key, which the record no longer holds).
 */
export type JobFinishedListener = (job: BackgroundJob, endpoint?: ChatEndpoint) => Promise<void> | void

/** What runs meet the world with: the store, the live hub, the config, and each user's tools, credentials and files. */
export interface RunServices {
  store: JobStore
  hub: JobLiveHub
  config: ServerConfig
  logger?: JobLogger & { info?: (message: string) => void }
  /** A stored file by id with its owner, for the model requests of that owner's jobs (none: files are left out). */
  readAttachment?: (attachmentId: string) => Promise<(StoredAttachmentContent & { userId: string }) | null>
  /** The tool policy for a job's user, read before each model request and tool node (none: every tool allowed). */
  toolAccess?: (userId: string, threadId?: string) => Promise<ToolAccessCheck>
  /** The credentials a job's user's tool calls may use (none: no credentials). */
  credentialsFor?: (userId: string) => Promise<ToolCredentials>
  /** Where runs report tool calls and their ends for monitoring (none: nowhere). */
  observer?: JobObserver
  /** A saved workflow by id, for workflow steps that run another (none: such steps fail). */
  loadWorkflow?: (workflowId: string) => Promise<SavedWorkflow | null>
  /** A workflow run's workspace, for the step outputs too long for its record (none: kept in the record). */
  runOutputs?: (jobId: string, userId: string) => OutputFileAccess
  /** The tool registry runs read and run tools through (the process's: `processTools`). */
  tools: RunTools
  /** Where a chat job (or a workflow's agent step `nodeId`) reads the messages its person sends it while it runs (none: it takes none). */
  steeringFor?: (job: BackgroundJob, nodeId?: string) => RunSteering | undefined
}

/** What the runs need besides the services: the manager's collaborators. */
export interface LocalRunsOptions extends RunServices {
  admission: JobAdmission
  roleLimits: RoleLimitSource
  leases?: JobLeases
  inputs: JobInputs
  workflowRuns: WorkflowRunHistory
  /** The role of a job's user now (a job resumed after a restart runs with it). */
  roleOf: (userId: string) => Promise<Role>
}

/** The runs of this process (see the module comment). */
export class LocalRuns {
  private readonly running = new Map<string, RunningJob>()
  private readonly finishedListeners = new Set<JobFinishedListener>()

  constructor(private readonly options: LocalRunsOptions) {}

  /** Jobs running in this process. */
  get count(): number {
    return this.running.size
  }

  /** Whether `jobId` runs in this process. */
  has(jobId: string): boolean {
    return this.running.has(jobId)
  }

  /** The runs, as the sweep sees them (their activity, and their stop). */
  values(): Iterable<SweptRun> {
    return this.running.values()
  }

  /** Resolves when the run of `jobId` (if any) has ended. */
  async settled(jobId: string): Promise<void> {
    await this.running.get(jobId)?.done
  }

  /** Why the run of `jobId` here is stopping (`user`, `shutdown`…), or undefined while it runs on (or runs elsewhere). */
  stopReason(jobId: string): JobStopReason | undefined {
    const signal = this.running.get(jobId)?.controller.signal
    return signal?.aborted ? signal.reason as JobStopReason : undefined
  }

  /**
   * Stops the run of `jobId` for its user and waits for its end: true when this stopped it, false
   * when it was stopping already, undefined when it does not run here.
   */
  async stop(jobId: string): Promise<boolean | undefined> {
    const run = this.running.get(jobId)
    if (!run) return undefined
    const alreadyStopping = run.controller.signal.aborted
    run.controller.abort('user' satisfies JobStopReason)
    await run.done
    return !alreadyStopping
  }

  /** Stops every run at its checkpoint (left `streaming`, resumed by the next start), waiting at most `waitMs`; returns their jobs. */
  async stopAll(waitMs: number): Promise<string[]> {
    const runs = [...this.running.entries()]
    for (const [, run] of runs) run.controller.abort('shutdown' satisfies JobStopReason)
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([
      Promise.allSettled(runs.map(([, run]) => run.done)),
      new Promise<void>(resolve => (timer = setTimeout(resolve, waitMs))),
    ])
    clearTimeout(timer)
    return runs.map(([jobId]) => jobId)
  }

  /**
   * Calls `listener` with every job that ends from now on (register before recovery so resumed
   * jobs are reported too). Returns a function that stops it.
   */
  onJobFinished(listener: JobFinishedListener): () => void {
    this.finishedListeners.add(listener)
    return () => this.finishedListeners.delete(listener)
  }

  /**
   * Runs `job`. `admitted` is what its start was admitted with: its budget (its first request
   * reserved) and its user's role; a job resumed after a restart (none given) counts from what its
   * user's budget has left now, with the role they have now.
   */
  launch(job: BackgroundJob, how: RelaunchPlan, admitted?: RunAdmission): void {
    const controller = new AbortController()
    const run: RunningJob = { userId: job.userId, controller, done: Promise.resolve(), lastActivityAt: Date.now(), toolsRunning: 0 }
    this.running.set(job.id, run)
    if (!admitted) this.options.admission.slots.take(job.id, { userId: job.userId })
    // The run, its lease's renewals and what follows its end happen in the job's context: its
    // trace's root span, and its ids on every span and log line made meanwhile (tracing.ts).
    run.done = inJobContext(`or3.job ${job.type}`, { jobId: job.id, userId: job.userId }, { 'or3.job.type': job.type, 'or3.job.resumed': !admitted }, () => this.runLaunched(job, how, run, admitted), outcome => outcome === 'error' || outcome === undefined ? { error: outcome ?? 'crashed' } : {})
      .then(() => {}, () => {})
  }

  /** The run of a launched job (`launch`), to its outcome (undefined: the runner crashed). */
  private runLaunched(job: BackgroundJob, how: RelaunchPlan, run: RunningJob, admitted?: RunAdmission): Promise<JobRunOutcome | undefined> {
    const { controller } = run
    // Every line the run logs says whose it is (the ids, never a name).
    const logger = this.options.logger?.withDefaults?.({ jobId: job.id, userId: job.userId }) ?? this.options.logger
    const meter = admitted ? Promise.resolve(admitted) : this.resumedJobAdmission(job.userId)
    const stopRenewing = this.options.leases?.keepRenewed(job.id, controller)
    const common = {
      job,
      store: this.options.store,
      hub: this.options.hub,
      config: this.options.config,
      signal: controller.signal,
      logger,
      observer: this.options.observer,
      onActivity: (toolsRunning: number) => {
        run.lastActivityAt = Date.now()
        run.toolsRunning = toolsRunning
      },
      toolAccess: this.options.toolAccess ? () => this.options.toolAccess!(job.userId, job.threadId) : undefined,
      credentials: this.options.credentialsFor ? () => this.options.credentialsFor!(job.userId) : undefined,
      inputs: this.options.inputs,
      tools: this.options.tools,
      // Files only of the job's own user: a request naming another person's file gets "no longer available".
      readAttachment: this.options.readAttachment
        ? async (attachmentId: string) => {
            const file = await this.options.readAttachment!(attachmentId)
            return file && file.userId === job.userId ? file : null
          }
        : undefined,
      // On a shared store a refused write means another instance took the job over: stop here.
      onWriteRefused: () => {
        if (this.options.leases && !controller.signal.aborted) controller.abort('lease-lost' satisfies JobStopReason)
      },
    }
    let budget: RunBudget | undefined
    // A run resumed after a restart is kept again first (its start may not have been, before the crash).
    return meter.then(async (given) => {
      if (!admitted && job.type === 'workflow') await this.recordRun(job)
      budget = given.budget
      const { role } = given
      return job.type === 'workflow'
        ? runWorkflowJob({ ...common, budget, role, endpointFor: model => resolveChatEndpoint(model, this.options.config, how.userKey), loadWorkflow: this.options.loadWorkflow, runOutputs: this.options.runOutputs, stepSteering: nodeId => this.options.steeringFor?.(job, nodeId), ...await this.options.roleLimits.forRole(role ?? 'user', job.userId).then(limits => ({ modelCallLimit: limits.workflowModelCalls, stepLimit: limits.workflowSteps })) })
        : runChatJob({ ...common, budget, role, endpoint: how.endpoint!, resume: how.resume, steering: this.options.steeringFor?.(job) })
    }).catch(async (error) => {
      // The runners are written not to throw; if one does, the job still must not stay `streaming`.
      logger?.warn(`Job ${job.id} crashed`, error)
      const failure: JobError = { kind: 'internal', message: 'The job failed unexpectedly on the server.' }
      await this.options.store.endJob(job.id, { status: 'error', error: failure }).catch(() => {})
      await this.options.inputs.closeAllOf(job.id).catch(() => {})
      this.options.hub.finish(job.id, { status: 'error', error: failure, completedAt: Date.now() })
    }).then(async (outcome) => {
      // What the run used counts against its user's budget however it ended (an interrupted run's
      // share too: the resumed run counts only its own).
      if (budget) await this.options.admission.budgets?.record(job.userId, budget.spentWithModels()).catch(error => logger?.warn(`Job ${job.id}: its usage could not be recorded`, error))
      budget?.close()
      if (outcome !== 'interrupted') await this.reportFinished(job.id, how.endpoint)
      return outcome ?? undefined
    }).finally(() => {
      stopRenewing?.()
      this.running.delete(job.id)
      this.options.admission.slots.release(job.id)
    })
  }

  /** The budget and role of a job resumed after a restart: it counts from what its user's budget has left now. */
  private async resumedJobAdmission(userId: string): Promise<RunAdmission> {
    const role = await this.options.roleOf(userId)
    return { budget: await this.options.admission.budgetOnResume(userId, role), role }
  }

  /** Hands the ended job to each `onJobFinished` listener (errors are logged, never thrown). */
  private async reportFinished(jobId: string, endpoint?: ChatEndpoint): Promise<void> {
    try {
      const job = await this.options.store.getJob(jobId)
      if (!job || job.status === 'streaming') return
      if (job.type === 'workflow') await this.recordRun(job)
      for (const listener of this.finishedListeners) await listener(job, endpoint)
    } catch (error) {
      this.options.logger?.warn(`After job ${jobId} ended, its follow-up failed`, error)
    }
  }

  /** Keeps a workflow run as it is now (a failure is logged: the sweep records its end from its job). */
  async recordRun(job: BackgroundJob): Promise<void> {
    await this.options.workflowRuns.record(job).catch(error => this.options.logger?.warn(`Workflow run ${job.id} could not be kept in the run history`, error))
  }

  /** Ends a job that has no run here with `error`, then closes what it asked and reports it. */
  async failAndReport(jobId: string, error: JobError): Promise<void> {
    await this.options.store.endJob(jobId, { status: 'error', error })
    await this.endedOutsideRun(jobId)
  }

  /** A job ended without its run (stopped elsewhere, not resumable): what it asked is closed (a run closes its own), then reported. */
  async endedOutsideRun(jobId: string): Promise<void> {
    await this.options.inputs.closeAllOf(jobId).catch(error => this.options.logger?.warn(`Job ${jobId}: its open requests could not be closed`, error))
    await this.reportFinished(jobId)
  }
}
