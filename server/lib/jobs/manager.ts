/**
 * Owns the jobs this server process runs: admits them (admission/gate.ts), starts them, aborts
 * them, and on shutdown stops every run at its checkpoint. Resuming interrupted jobs
 * (recovery.ts), the periodic sweep (sweeper.ts) and multi-instance leases (leases.ts) are its
 * collaborators.
 */
import type { ServerConfig } from '../config/server-config'
import type { ToolAccessCheck } from '../tools/policy/tool-policy'
import type { ToolCredentials } from '../tools/tool-types'
import { resolveChatEndpoint } from '../models/chat-endpoint'
import type { ChatEndpoint } from '../openrouter/chat-client'
import type { StoredAttachmentContent } from '../attachments/attachments'
import type { SecretBox } from '../security/secret-box'
import { isLeaseStore, RunningCapError, type JobStore } from '../stores/jobs/job-store'
import { JobCapacityError } from './admission/caps'
import { CAPACITY_RETRY_AFTER_SECONDS } from '../domain-error'
import { clampOutputTokens, JobAdmission, type Admission, type RoleLimitSource } from './admission/gate'
import type { Allowance, SpentBudget, UsageLedger } from './admission/budget'
import type { RunBudget } from './admission/budget-pool'
import type { LimiterFactory } from '../stores/rate-limits/limiters'
import type { JobPrincipal } from './admission/principal'
import { runWithDeadline } from '../tools/run-with-deadline'
import { JobLeases } from './leases'
import type { JobLiveHub } from './live-hub'
import { recoverInterruptedJobs, type RelaunchPlan } from './recovery'
import type { JobObserver } from './job-observer'
import { runChatJob } from './run/chat'
import type { JobRunOutcome, JobStopReason } from './run/end'
import { inJobContext } from '../tracing'
import type { JobLogger } from './run/harness'
import { runWorkflowJob } from './run/workflow'
import { newChatJob, newWorkflowJob, type StartChatJobInput, type StartWorkflowJobInput } from './new-job'
import { workflowModels } from '../workflows/model-calls'
import { JobSweeper } from './sweeper'
import { WorkflowRunHistory } from './workflow-runs'
import type { WorkflowRunStore } from '../stores/workflows/run-store'
import type { SavedWorkflow } from '../../../shared/types/workflow'
import { createMemoryWorkflowRunStore } from '../stores/workflows/runs-memory'
import { JobInputs } from './waits/job-inputs'
import { assertClientToolsFree } from '../tools/client-tools'
import type { JobsHealth } from '../../../shared/types/health'
import type { Role } from '../../../shared/types/account'
import type { BackgroundJob, JobError } from '../../../shared/types/job'

export { JobCapacityError } from './admission/caps'
export type { Admission } from './admission/gate'
export type { JobPrincipal } from './admission/principal'
export type { StartChatJobInput, StartWorkflowJobInput } from './new-job'

interface RunningJob {
  userId: string
  controller: AbortController
  done: Promise<unknown>
  lastActivityAt: number
  toolsRunning: number
}


/** What a run goes with: its budget and its user's role (metrics count model use by role). */
interface RunAdmission {
  budget: RunBudget
  role: Role
}
/**
 * Told of the stored record once a job has ended (complete, error or aborted), and for a chat job
 * this process ran, of the endpoint it used (with its key, which the record no longer holds).
 */
export type JobFinishedListener = (job: BackgroundJob, endpoint?: ChatEndpoint) => Promise<void> | void

/** What the manager needs. */
export interface JobManagerOptions {
  store: JobStore
  hub: JobLiveHub
  config: ServerConfig
  secretBox: SecretBox
  logger?: JobLogger & { info?: (message: string) => void }
  /** A stored file by id with its owner, for the model requests of that owner's jobs (none: files are left out). */
  readAttachment?: (attachmentId: string) => Promise<(StoredAttachmentContent & { userId: string }) | null>
  /** Each role's limits (default: `limits.roles` of the config, without the admin's changes). */
  roleLimits?: RoleLimitSource
  /** Where each principal's daily usage is counted; without one, budgets are not enforced. */
  usage?: UsageLedger
  /** The role of a job's user, for the budget of a job resumed after a restart (default `user`). */
  roleOf?: (userId: string) => Promise<Role>
  /** Where start-rate counters live (default: this process's memory). */
  limiterFor?: LimiterFactory
  /** The tool policy for a job's user, read before each model request and tool node (none: every tool allowed). */
  toolAccess?: (userId: string) => Promise<ToolAccessCheck>
  /** The credentials a job's user's tool calls may use (none: no credentials). */
  credentialsFor?: (userId: string) => Promise<ToolCredentials>
  /** Where runs report tool calls and their ends for monitoring (none: nowhere). */
  observer?: JobObserver
  /** Where workflow runs are kept after their jobs (default: this process's memory). */
  workflowRuns?: WorkflowRunStore
  /** A saved workflow by id, for workflow steps that run another (none: such steps fail). */
  loadWorkflow?: (workflowId: string) => Promise<SavedWorkflow | null>
}

/** Longest the health check waits for the store. */
const HEALTH_PROBE_MS = 3_000

/** Longest a graceful shutdown waits for runs to reach their checkpoint. */
const SHUTDOWN_WAIT_MS = 10_000

/** The job runtime of one server process. */
export class BackgroundJobManager {
  private readonly running = new Map<string, RunningJob>()
  private readonly finishedListeners = new Set<JobFinishedListener>()
  private readonly admission: JobAdmission
  private readonly leases: JobLeases | undefined
  private readonly sweeper: JobSweeper
  /** Where running jobs ask their users (browser tools, approvals, questions) and answers arrive. */
  readonly inputs: JobInputs
  /** Workflow runs, kept for days after their jobs: recorded as they start and end. */
  readonly workflowRuns: WorkflowRunHistory
  private closing = false

  /** Each role's limits, as admission reads them. */
  private readonly roleLimits: RoleLimitSource

  constructor(private readonly options: JobManagerOptions) {
    const { limits, backgroundJobs } = options.config
    this.roleLimits = options.roleLimits ?? { forRole: async role => limits.roles[role] }
    this.admission = new JobAdmission({
      maxConcurrentJobs: backgroundJobs.maxConcurrentJobs,
      fairShare: limits.fairShare,
      maxWaitingJobs: backgroundJobs.waits.maxWaitingJobs,
      maxWaitingJobsPerUser: backgroundJobs.waits.maxWaitingJobsPerUser,
      jobStartsPerIpPerMinute: limits.jobStartsPerIpPerMinute,
      roleLimits: this.roleLimits,
      usage: options.usage,
      limiterFor: options.limiterFor,
    })
    this.leases = isLeaseStore(options.store) ? new JobLeases(options.store, options.hub, options.logger) : undefined
    // With several instances, a job waiting for a person stops counting as running on all of them.
    const parking = this.leases ? this.leases.parkingFor(this.admission.slots) : this.admission.slots
    const leases = this.leases
    this.inputs = new JobInputs({
      store: options.store,
      hub: options.hub,
      settings: options.config.backgroundJobs.waits,
      logger: options.logger,
      parking,
      settledElsewhere: leases ? (jobId, requestId, onSettled) => leases.watchRequest(jobId, requestId, onSettled) : undefined,
      observer: options.observer,
    })
    this.workflowRuns = new WorkflowRunHistory({ runs: options.workflowRuns ?? createMemoryWorkflowRunStore(), jobs: options.store, retentionDays: options.config.workflows.runRetentionDays, logger: options.logger })
    this.sweeper = new JobSweeper({
      store: options.store,
      leases: this.leases,
      config: options.config,
      runs: () => this.running.values(),
      recover: () => this.recoverInterruptedJobs(),
      beforeCleanup: now => this.workflowRuns.sweep(now),
      isClosing: () => this.closing,
      logger: options.logger,
    })
  }

  get store(): JobStore {
    return this.options.store
  }

  get hub(): JobLiveHub {
    return this.options.hub
  }

  /** Jobs running in this process. */
  get runningCount(): number {
    return this.running.size
  }

  /** The store's state (a write probe, bounded by `HEALTH_PROBE_MS`) and the job counts, for `GET /api/health`. */
  async health(): Promise<JobsHealth> {
    const started = performance.now()
    const probe = await runWithDeadline(() => this.store.ping(), { timeoutMs: HEALTH_PROBE_MS })
    const error = probe.status === 'fulfilled'
      ? undefined
      : probe.status === 'rejected' ? (probe.error instanceof Error ? probe.error.message : String(probe.error)) : `no answer within ${HEALTH_PROBE_MS} ms`
    const store = { provider: this.store.name, ok: error === undefined, latencyMs: Math.round(performance.now() - started), ...(error === undefined ? {} : { error }) }
    const { waiting, queued } = this.admission.slots
    return { store, jobs: { running: this.running.size - waiting, waiting: waiting - queued, queued, max: this.options.config.backgroundJobs.maxConcurrentJobs, accepting: !this.closing } }
  }

  /** Whether `jobId` runs in this process. */
  isRunning(jobId: string): boolean {
    return this.running.has(jobId)
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

  /** The person's own OpenRouter key `job` runs with (kept sealed in it while it runs), for a job started on their behalf. */
  apiKeyOf(job: BackgroundJob): string | undefined {
    return job.apiKeyCiphertext ? this.options.secretBox.open(job.apiKeyCiphertext) : undefined
  }

  /**
   * Admits a start by `principal` (admission/gate.ts): the role's models and workflow cost, the
   * caps, the start rate and the daily budget; throws the first refusal. Callers that must refuse
   * before they store anything admit first and pass the admission to the start.
   */
  admit(principal: JobPrincipal, request: Parameters<JobAdmission['admit']>[1]): Promise<Admission> {
    return this.admission.admit(principal, request)
  }

  /**
   * Creates a chat job and starts it, admitting it first unless `admission` is given. Throws
   * admission's refusals and `MissingApiKeyError` when the model needs a key nobody gave.
   */
  async startChatJob(input: StartChatJobInput, admission?: Admission): Promise<BackgroundJob> {
    try {
      assertClientToolsFree(input.request.clientTools)
    } catch (error) {
      admission?.budget.close()
      throw error
    }
    const admitted = admission ?? await this.admit(input.principal, { models: [input.request.model], firstRequest: { messages: input.request.messages, max_tokens: input.request.fields.max_tokens } })
    return this.launchAdmitted(admitted, async () => {
      const endpoint = resolveChatEndpoint(input.request.model, this.options.config, input.userApiKey)
      const request = { ...input.request, fields: clampOutputTokens(input.request.fields, admitted.limits.maxOutputTokens) }
      return { job: await this.store.createJob({ ...newChatJob({ ...input, request }, this.options.secretBox), caps: this.sharedCaps(admitted) }), how: { endpoint } }
    })
  }

  /**
   * Creates a workflow job and starts it, admitting it first. Throws admission's refusals and
   * `MissingApiKeyError` when one of its models needs a key nobody gave.
   */
  async startWorkflowJob(input: StartWorkflowJobInput): Promise<BackgroundJob> {
    const admitted = await this.admit(input.principal, { models: workflowModels(input.definition), workflow: input.definition, firstRequest: { messages: [{ role: 'user', content: input.prompt }] } })
    return this.launchAdmitted(admitted, async () => {
      for (const model of workflowModels(input.definition)) resolveChatEndpoint(model, this.options.config, input.userApiKey)
      const job = await this.store.createJob({ ...newWorkflowJob(input, this.options.secretBox, admitted.limits.maxOutputTokens), caps: this.sharedCaps(admitted) })
      // Kept before it runs, so its end (written after) is what stays.
      await this.recordRun(job)
      return { job, how: { userKey: input.userApiKey } }
    })
  }

  /**
   * Stops a job: its upstream request and running tools end, and it is stored as `aborted`.
   * Idempotent; false when the job had already finished.
   */
  async abortJob(jobId: string): Promise<boolean> {
    const run = this.running.get(jobId)
    if (run) {
      const alreadyStopping = run.controller.signal.aborted
      run.controller.abort('user' satisfies JobStopReason)
      await run.done
      return !alreadyStopping
    }
    // Another instance may run it: it sees the request at its next lease renewal. If it does not
    // stop in time (it died), end the job here; its late writes will be refused.
    if (this.leases && await this.leases.abortElsewhere(jobId)) return true
    const aborted = await this.store.abortJob(jobId)
    if (aborted) await this.endedOutsideRun(jobId)
    return aborted
  }

  /**
   * Makes sure a job another instance runs is live in this instance's hub (fed by polling the
   * shared store), so viewers here see it like a local one. No-op for local or finished jobs.
   */
  async followRemoteJob(job: BackgroundJob): Promise<void> {
    if (!this.leases || job.status !== 'streaming' || this.running.has(job.id) || this.hub.has(job.id)) return
    await this.leases.follow(job)
  }

  /** Resumes every job a previous process left `streaming`; returns how many were picked up. */
  recoverInterruptedJobs(): Promise<number> {
    return recoverInterruptedJobs({
      store: this.store,
      leases: this.leases,
      config: this.options.config,
      secretBox: this.options.secretBox,
      logger: this.options.logger,
      isRunning: jobId => this.running.has(jobId),
      relaunch: (job, plan) => this.launch(job, plan),
      fail: (jobId, error) => this.failAndReport(jobId, error),
    })
  }

  /** Fails runs idle for `jobTimeoutMs` and deletes jobs past their retention. */
  sweep(now = Date.now()): Promise<void> {
    return this.sweeper.sweep(now)
  }

  /** Starts the periodic sweep (timer `unref`'d, stopped by `shutdown`). */
  startSweeper(): void {
    this.sweeper.start()
  }

  /**
   * Stops accepting jobs, stops every run at its checkpoint (left `streaming`, resumed by the next
   * start) and stops the sweeper. Safe to call more than once.
   */
  async shutdown(): Promise<void> {
    this.closing = true
    this.admission.slots.close()
    this.sweeper.stop()
    this.leases?.stopRelays()
    const runs = [...this.running.entries()]
    for (const [, run] of runs) run.controller.abort('shutdown' satisfies JobStopReason)
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([
      Promise.allSettled(runs.map(([, run]) => run.done)),
      new Promise<void>(resolve => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS))),
    ])
    clearTimeout(timer)
    await this.leases?.release(runs.map(([jobId]) => jobId))
  }

  /**
   * Calls `listener` with every job that ends from now on (register before `recoverInterruptedJobs`
   * so resumed jobs are reported too). Returns a function that stops it.
   */
  onJobFinished(listener: JobFinishedListener): () => void {
    this.finishedListeners.add(listener)
    return () => this.finishedListeners.delete(listener)
  }

  /** Hands the ended job to each `onJobFinished` listener (errors are logged, never thrown). */
  private async reportFinished(jobId: string, endpoint?: ChatEndpoint): Promise<void> {
    try {
      const job = await this.store.getJob(jobId)
      if (!job || job.status === 'streaming') return
      if (job.type === 'workflow') await this.recordRun(job)
      for (const listener of this.finishedListeners) await listener(job, endpoint)
    } catch (error) {
      this.options.logger?.warn(`After job ${jobId} ended, its follow-up failed`, error)
    }
  }

  /** Keeps a workflow run as it is now (a failure is logged: the sweep records its end from its job). */
  private async recordRun(job: BackgroundJob): Promise<void> {
    await this.workflowRuns.record(job).catch(error => this.options.logger?.warn(`Workflow run ${job.id} could not be kept in the run history`, error))
  }

  private async failAndReport(jobId: string, error: JobError): Promise<void> {
    await this.store.failJob(jobId, error)
    await this.endedOutsideRun(jobId)
  }

  /** A job ended without its run (stopped elsewhere, not resumable): what it asked is closed (a run closes its own), then reported. */
  private async endedOutsideRun(jobId: string): Promise<void> {
    await this.inputs.closeAllOf(jobId).catch(error => this.options.logger?.warn(`Job ${jobId}: its open requests could not be closed`, error))
    await this.reportFinished(jobId)
  }

  /**
   * Creates a job while holding a slot taken before the first await, so racing starts cannot
   * overshoot the caps, and runs it. A start that fails frees its budget's reservation.
   */
  private async launchAdmitted(admitted: Admission, create: () => Promise<{ job: BackgroundJob, how: RelaunchPlan }>): Promise<BackgroundJob> {
    const reservation = `pending:${crypto.randomUUID()}`
    try {
      this.admission.slots.admit(reservation, admitted.principal, admitted.limits.jobsAtOnce)
      const { job, how } = await create()
      // The job's slot is taken before the reservation is freed, so no start slips in between.
      this.admission.slots.take(job.id, admitted.principal)
      this.launch(job, how, { budget: admitted.budget, role: admitted.principal.role })
      return job
    } catch (error) {
      admitted.budget.close()
      // The store counted every instance's running jobs and found the user's (or the deployment's) cap reached.
      if (error instanceof RunningCapError) throw new JobCapacityError(error.scope, error.limit, CAPACITY_RETRY_AFTER_SECONDS)
      throw error
    } finally {
      this.admission.slots.release(reservation)
    }
  }

  /** The caps a store shared by instances checks across all of them (none on one instance's own store). */
  private sharedCaps(admitted: Admission): { user: number, total: number } | undefined {
    if (!this.leases) return undefined
    return { user: Math.min(admitted.limits.jobsAtOnce, this.admission.slots.fairShare), total: this.options.config.convex.maxRunningJobs }
  }

  /**
   * Runs `job`. `admitted` is what its start was admitted with: its budget (its first request
   * reserved) and its user's role; a job resumed after a restart (none given) counts from what its
   * user's budget has left now, with the role they have now.
   */
  private launch(job: BackgroundJob, how: RelaunchPlan, admitted?: RunAdmission): void {
    const controller = new AbortController()
    const run: RunningJob = { userId: job.userId, controller, done: Promise.resolve(), lastActivityAt: Date.now(), toolsRunning: 0 }
    this.running.set(job.id, run)
    if (!admitted) this.admission.slots.take(job.id, { userId: job.userId })
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
    const stopRenewing = this.leases?.keepRenewed(job.id, controller)
    const common = {
      job,
      store: this.store,
      hub: this.hub,
      config: this.options.config,
      signal: controller.signal,
      logger,
      observer: this.options.observer,
      onActivity: (toolsRunning: number) => {
        run.lastActivityAt = Date.now()
        run.toolsRunning = toolsRunning
      },
      toolAccess: this.options.toolAccess ? () => this.options.toolAccess!(job.userId) : undefined,
      credentials: this.options.credentialsFor ? () => this.options.credentialsFor!(job.userId) : undefined,
      inputs: this.inputs,
      // Files only of the job's own user: a request naming another person's file gets "no longer available".
      readAttachment: this.options.readAttachment
        ? async (attachmentId: string) => {
            const file = await this.options.readAttachment!(attachmentId)
            return file && file.userId === job.userId ? file : null
          }
        : undefined,
      // On a shared store a refused write means another instance took the job over: stop here.
      onWriteRefused: () => {
        if (this.leases && !controller.signal.aborted) controller.abort('lease-lost' satisfies JobStopReason)
      },
    }
    let budget: RunBudget | undefined
    // A run resumed after a restart is kept again first (its start may not have been, before the crash).
    return meter.then(async (given) => {
      if (!admitted && job.type === 'workflow') await this.recordRun(job)
      budget = given.budget
      const { role } = given
      return job.type === 'workflow'
        ? runWorkflowJob({ ...common, budget, role, endpointFor: model => resolveChatEndpoint(model, this.options.config, how.userKey), loadWorkflow: this.options.loadWorkflow, ...await this.roleLimits.forRole(role ?? 'user').then(limits => ({ modelCallLimit: limits.workflowModelCalls, stepLimit: limits.workflowSteps })) })
        : runChatJob({ ...common, budget, role, endpoint: how.endpoint!, resume: how.resume })
    }).catch(async (error) => {
      // The runners are written not to throw; if one does, the job still must not stay `streaming`.
      logger?.warn(`Job ${job.id} crashed`, error)
      const failure: JobError = { kind: 'internal', message: 'The job failed unexpectedly on the server.' }
      await this.store.failJob(job.id, failure).catch(() => {})
      await this.inputs.closeAllOf(job.id).catch(() => {})
      this.hub.finish(job.id, { status: 'error', error: failure, completedAt: Date.now() })
    }).then(async (outcome) => {
      // What the run used counts against its user's budget however it ended (an interrupted run's
      // share too: the resumed run counts only its own).
      if (budget) await this.admission.budgets?.record(job.userId, budget.spent()).catch(error => logger?.warn(`Job ${job.id}: its usage could not be recorded`, error))
      budget?.close()
      if (outcome !== 'interrupted') await this.reportFinished(job.id, how.endpoint)
      return outcome ?? undefined
    }).finally(() => {
      stopRenewing?.()
      this.running.delete(job.id)
      this.admission.slots.release(job.id)
    })
  }

  /** The budget and role of a job resumed after a restart: it counts from what its user's budget has left now. */
  private async resumedJobAdmission(userId: string): Promise<RunAdmission> {
    const role = await this.roleOf(userId)
    return { budget: await this.admission.budgetOnResume(userId, role), role }
  }

  /** What `userId`'s daily budget has left now, their answers' reservations counted as used, for a request made outside a job (a thread's title). */
  async remainingBudget(userId: string): Promise<Allowance> {
    return this.admission.budgetLeft(userId, await this.roleOf(userId))
  }

  private async roleOf(userId: string): Promise<Role> {
    return await this.options.roleOf?.(userId).catch(() => 'user' as const) ?? 'user'
  }

  /** Counts what a model request made outside a job used against `userId`'s daily budget. */
  async recordUsage(userId: string, spent: SpentBudget): Promise<void> {
    await this.admission.budgets?.record(userId, spent)
  }
}
