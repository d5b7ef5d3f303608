/**
 * Owns the jobs this server process runs: admits them (admission/gate.ts), starts them, aborts
 * them, and on shutdown stops every run at its checkpoint. Resuming interrupted jobs
 * (recovery.ts), the periodic sweep (sweeper.ts) and multi-instance leases (leases.ts) are its
 * collaborators.
 */
import { resolveChatEndpoint } from '../models/chat-endpoint'
import type { SecretBox } from '../security/secret-box'
import { isLeaseStore, RunningCapError, type JobStore } from '../stores/jobs/job-store'
import { JobCapacityError } from './admission/caps'
import { CAPACITY_RETRY_AFTER_SECONDS } from '../domain-error'
import { clampOutputTokens, JobAdmission, type Admission, type RoleLimitSource } from './admission/gate'
import type { Allowance, SpentBudget, UsageLedger } from './admission/budget'
import type { LimiterFactory } from '../stores/rate-limits/limiters'
import type { JobPrincipal } from './admission/principal'
import { runWithDeadline } from '../tools/run-with-deadline'
import { JobLeases } from './leases'
import type { JobLiveHub } from './live-hub'
import { recoverInterruptedJobs, type RelaunchPlan } from './recovery'
import { newChatJob, newWorkflowJob, type StartChatJobInput, type StartWorkflowJobInput } from './new-job'
import { workflowModels } from '../workflows/model-calls'
import { JobSweeper } from './sweeper'
import { LocalRuns, type RunServices } from './local-runs'
import { WorkflowRunHistory } from './workflow-runs'
import type { WorkflowRunStore } from '../stores/workflows/run-store'
import { createMemoryWorkflowRunStore } from '../stores/workflows/runs-memory'
import { JobInputs } from './waits/job-inputs'
import { assertClientToolsFree } from '../tools/client-tools'
import type { JobsHealth } from '../../../shared/types/health'
import type { Role } from '../../../shared/types/account'
import type { BackgroundJob } from '../../../shared/types/job'

export { JobCapacityError } from './admission/caps'
export type { Admission } from './admission/gate'
export type { JobPrincipal } from './admission/principal'
export type { StartChatJobInput, StartWorkflowJobInput } from './new-job'
export type { JobFinishedListener } from './local-runs'

/** What the manager needs: what runs meet the world with, and where limits, usage and run history live. */
export interface JobManagerOptions extends RunServices {
  secretBox: SecretBox
  /** Each role's limits (default: `limits.roles` of the config, without the admin's changes). */
  roleLimits?: RoleLimitSource
  /** Where each principal's daily usage is counted; without one, budgets are not enforced. */
  usage?: UsageLedger
  /** The role of a job's user, for the budget of a job resumed after a restart (default `user`). */
  roleOf?: (userId: string) => Promise<Role>
  /** Where start-rate counters live (default: this process's memory). */
  limiterFor?: LimiterFactory
  /** Where workflow runs are kept after their jobs (default: this process's memory). */
  workflowRuns?: WorkflowRunStore
}

/** Longest the health check waits for the store. */
const HEALTH_PROBE_MS = 3_000

/** Longest a graceful shutdown waits for runs to reach their checkpoint. */
const SHUTDOWN_WAIT_MS = 10_000

/** The job runtime of one server process. */
export class BackgroundJobManager {
  private readonly admission: JobAdmission
  private readonly leases: JobLeases | undefined
  private readonly sweeper: JobSweeper
  /** Where running jobs ask their users (browser tools, approvals, questions) and answers arrive. */
  readonly inputs: JobInputs
  /** Workflow runs, kept for days after their jobs: recorded as they start and end. */
  readonly workflowRuns: WorkflowRunHistory
  /** The jobs this process runs: whether one runs here, its end, why it stops, and who hears of each end. */
  readonly runs: LocalRuns
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
    this.workflowRuns = new WorkflowRunHistory({ runs: options.workflowRuns ?? createMemoryWorkflowRunStore(), jobs: options.store, retentionDays: options.config.workflows.runRetentionDays, maxBytes: { perUser: options.config.workflows.runHistoryMbPerUser * 1_000_000, perWorkflow: options.config.workflows.runHistoryMbPerWorkflow * 1_000_000 }, logger: options.logger })
    this.runs = new LocalRuns({ ...options, admission: this.admission, roleLimits: this.roleLimits, leases, inputs: this.inputs, workflowRuns: this.workflowRuns, roleOf: userId => this.roleOf(userId) })
    this.sweeper = new JobSweeper({
      store: options.store,
      leases: this.leases,
      config: options.config,
      runs: () => this.runs.values(),
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

  /** The store's state (a write probe, bounded by `HEALTH_PROBE_MS`) and the job counts, for `GET /api/health`. */
  async health(): Promise<JobsHealth> {
    const started = performance.now()
    const probe = await runWithDeadline(() => this.store.ping(), { timeoutMs: HEALTH_PROBE_MS })
    const error = probe.status === 'fulfilled'
      ? undefined
      : probe.status === 'rejected' ? (probe.error instanceof Error ? probe.error.message : String(probe.error)) : `no answer within ${HEALTH_PROBE_MS} ms`
    const store = { provider: this.store.name, ok: error === undefined, latencyMs: Math.round(performance.now() - started), ...(error === undefined ? {} : { error }) }
    const { waiting, queued } = this.admission.slots
    return { store, jobs: { running: this.runs.count - waiting, waiting: waiting - queued, queued, max: this.options.config.backgroundJobs.maxConcurrentJobs, accepting: !this.closing } }
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
      await this.runs.recordRun(job)
      return { job, how: { userKey: input.userApiKey } }
    })
  }

  /**
   * Stops a job: its upstream request and running tools end, and it is stored as `aborted`.
   * Idempotent; false when the job had already finished.
   */
  async abortJob(jobId: string): Promise<boolean> {
    const stopped = await this.runs.stop(jobId)
    if (stopped !== undefined) return stopped
    // Another instance may run it: it sees the request at its next lease renewal. If it does not
    // stop in time (it died), end the job here; its late writes will be refused.
    if (this.leases && await this.leases.abortElsewhere(jobId)) return true
    const aborted = await this.store.endJob(jobId, { status: 'aborted' })
    if (aborted) await this.runs.endedOutsideRun(jobId)
    return aborted
  }

  /**
   * Makes sure a job another instance runs is live in this instance's hub (fed by polling the
   * shared store), so viewers here see it like a local one. No-op for local or finished jobs.
   */
  async followRemoteJob(job: BackgroundJob): Promise<void> {
    if (!this.leases || job.status !== 'streaming' || this.runs.has(job.id) || this.hub.has(job.id)) return
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
      isRunning: jobId => this.runs.has(jobId),
      relaunch: (job, plan) => this.runs.launch(job, plan),
      fail: (jobId, error) => this.runs.failAndReport(jobId, error),
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
    const stopped = await this.runs.stopAll(SHUTDOWN_WAIT_MS)
    await this.leases?.release(stopped)
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
      this.runs.launch(job, how, { budget: admitted.budget, role: admitted.principal.role })
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
