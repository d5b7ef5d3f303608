/**
 * Owns the jobs this server process runs: starts them within the concurrency caps, aborts them,
 * fails the ones that stop making progress, deletes expired ones, resumes the ones a restart
 * interrupted, and on shutdown stops every run at its checkpoint.
 */
import { resolveChatEndpoint } from '../../utils/chat/chat-endpoint'
import type { ServerConfig } from '../config/server-config'
import type { SecretBox } from '../security/secret-box'
import type { BackgroundJobProvider } from '../../utils/background-jobs/providers/provider'
import type { BackgroundJob, ChatJobRequest } from '../../utils/background-jobs/types'
import type { JobLeaseStore } from '../../utils/background-jobs/providers/convex'
import { runChatJob, type JobLogger, type JobStopReason } from './chat-job-runner'
import { runWorkflowJob } from './workflow-job-runner'
import type { WorkflowDefinition } from '../workflows/workflow-schema'
import type { ChatEndpoint } from '../../utils/openrouter/chat-client'
import type { JobLiveHub } from './live-hub'
import { startRemoteJobRelay } from './remote-job-relay'
import { planResume, type ResumePlan } from './resume-plan'

/** Raised when a new job would exceed a cap; the route answers 503 (server) or 429 (user). */
export class JobCapacityError extends Error {
  override name = 'JobCapacityError'
  constructor(readonly scope: 'server' | 'user', readonly limit: number, readonly retryAfterSeconds: number) {
    super(scope === 'server'
      ? `The server is already running its maximum of ${limit} jobs. Try again in a few seconds.`
      : `You already have ${limit} answers running, the most allowed at once. Wait for one to finish or stop one, then try again.`)
  }

  static isInstance(error: unknown): error is JobCapacityError {
    return error instanceof Error && error.name === 'JobCapacityError'
  }
}

/** A new workflow run. */
export interface StartWorkflowJobInput {
  userId: string
  workflowId: string
  definition: WorkflowDefinition
  prompt: string
  userApiKey?: string
}

/** A new chat job. */
export interface StartChatJobInput {
  userId: string
  threadId?: string
  messageId?: string
  request: ChatJobRequest
  /** The user's own OpenRouter key; stored only encrypted, and only while the job runs. */
  userApiKey?: string
}

interface RunningJob {
  userId: string
  controller: AbortController
  done: Promise<unknown>
  lastActivityAt: number
  toolsRunning: number
  leaseTimer?: ReturnType<typeof setInterval>
}

/** Whether the store is shared by several instances (it leases jobs). */
function isLeaseStore(provider: BackgroundJobProvider): provider is BackgroundJobProvider & JobLeaseStore {
  return typeof (provider as Partial<JobLeaseStore>).claimJob === 'function'
}

/** What the manager needs. */
export interface JobManagerOptions {
  provider: BackgroundJobProvider
  hub: JobLiveHub
  config: ServerConfig
  secretBox: SecretBox
  logger?: JobLogger & { info?: (message: string) => void }
  /** Called with the stored record once a job has ended (complete, error or aborted). */
  onJobFinished?: (job: BackgroundJob) => Promise<void> | void
}

/** Seconds a refused client is asked to wait. */
const RETRY_AFTER_SECONDS = 5
/** Longest a graceful shutdown waits for runs to reach their checkpoint. */
const SHUTDOWN_WAIT_MS = 10_000

/** The job runtime of one server process. */
export class BackgroundJobManager {
  private readonly running = new Map<string, RunningJob>()
  private readonly relays = new Map<string, Promise<{ stop: () => void }>>()
  private readonly leases: (BackgroundJobProvider & JobLeaseStore) | undefined
  private sweeper: ReturnType<typeof setInterval> | undefined
  private lastCleanupAt = 0
  private lastOrphanScanAt = 0
  private closing = false

  constructor(private readonly options: JobManagerOptions) {
    this.leases = isLeaseStore(options.provider) ? options.provider : undefined
  }

  get provider(): BackgroundJobProvider {
    return this.options.provider
  }

  get hub(): JobLiveHub {
    return this.options.hub
  }

  /** Jobs running in this process. */
  get runningCount(): number {
    return this.running.size
  }

  /** Whether `jobId` runs in this process. */
  isRunning(jobId: string): boolean {
    return this.running.has(jobId)
  }

  /** Resolves when the run of `jobId` (if any) has ended. */
  async settled(jobId: string): Promise<void> {
    await this.running.get(jobId)?.done
  }

  /**
   * Creates a chat job and starts it. Throws `JobCapacityError` over a cap and
   * `MissingApiKeyError` when the model needs a key nobody gave.
   */
  async startChatJob(input: StartChatJobInput): Promise<BackgroundJob> {
    this.checkCapacity(input.userId)
    const endpoint = resolveChatEndpoint(input.request.model, this.options.config, input.userApiKey)
    const controller = new AbortController()
    const job = await this.createWithinCaps(input.userId, controller, () => this.provider.createJob({
      userId: input.userId,
      threadId: input.threadId ?? crypto.randomUUID(),
      messageId: input.messageId ?? crypto.randomUUID(),
      type: 'chat',
      model: input.request.model,
      request: input.request,
      apiKeyCiphertext: input.userApiKey ? this.options.secretBox.seal(input.userApiKey) : undefined,
    }))
    this.launch(job, controller, { endpoint })
    return job
  }

  /**
   * Creates a workflow job and starts it. Throws `JobCapacityError` over a cap and
   * `MissingApiKeyError` when one of its models needs a key nobody gave.
   */
  async startWorkflowJob(input: StartWorkflowJobInput): Promise<BackgroundJob> {
    this.checkCapacity(input.userId)
    const models = new Set(input.definition.nodes.flatMap(node => node.kind === 'agent' || (node.kind === 'router' && node.mode === 'model') ? [node.model ?? input.definition.defaultModel] : []))
    for (const model of models) resolveChatEndpoint(model, this.options.config, input.userApiKey)
    const controller = new AbortController()
    const job = await this.createWithinCaps(input.userId, controller, () => this.provider.createJob({
      userId: input.userId,
      threadId: `workflow:${input.workflowId}`,
      messageId: crypto.randomUUID(),
      type: 'workflow',
      model: 'workflow',
      request: { model: input.definition.defaultModel, messages: [{ role: 'user', content: input.prompt }], fields: {}, workflow: { workflowId: input.workflowId, prompt: input.prompt, definition: input.definition } },
      apiKeyCiphertext: input.userApiKey ? this.options.secretBox.seal(input.userApiKey) : undefined,
    }))
    this.launch(job, controller, { userKey: input.userApiKey })
    return job
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
    if (this.leases && await this.leases.requestAbort(jobId)) {
      // Another instance runs it: it sees the request at its next lease renewal. If it does not
      // stop in time (it died), end the job here; its late writes will be refused.
      const deadline = Date.now() + this.leaseRenewEveryMs() * 2 + 500
      while (Date.now() < deadline) {
        const job = await this.provider.getJob(jobId)
        if (!job || job.status !== 'streaming') return true
        await new Promise(resolve => setTimeout(resolve, 50))
      }
    }
    const aborted = await this.provider.abortJob(jobId)
    if (aborted) await this.reportFinished(jobId)
    return aborted
  }

  /**
   * Makes sure a job another instance runs is live in this instance's hub (fed by polling the
   * shared store), so viewers here see it like a local one. No-op for local or finished jobs.
   */
  async followRemoteJob(job: BackgroundJob): Promise<void> {
    if (!this.leases || job.status !== 'streaming' || this.running.has(job.id) || this.hub.has(job.id)) return
    let relay = this.relays.get(job.id)
    if (!relay) {
      const leases = this.leases
      relay = startRemoteJobRelay({ jobId: job.id, hub: this.hub, watch: id => leases.watchJob(id), onError: error => this.options.logger?.warn(`Following job ${job.id} failed`, error) })
      this.relays.set(job.id, relay)
      void relay.finally(() => setTimeout(() => this.relays.delete(job.id), 0))
    }
    await relay
  }

  /** Resumes every job a previous process left `streaming`; returns how many were picked up. */
  async recoverInterruptedJobs(): Promise<number> {
    // Alone, every streaming job was ours; shared, only jobs whose owner's lease expired, once claimed.
    const interrupted = this.leases ? await this.leases.listOrphanedJobs() : await this.provider.listStreamingJobs()
    let resumed = 0
    for (const job of interrupted) {
      if (this.running.has(job.id)) continue
      if (this.leases && !(await this.leases.claimJob(job.id))) continue
      if (job.type === 'workflow' && job.request?.workflow) {
        const userKey = job.apiKeyCiphertext ? this.options.secretBox.open(job.apiKeyCiphertext) : undefined
        this.options.logger?.info?.(`Resuming workflow job ${job.id} after a restart.`)
        this.launch(job, new AbortController(), { userKey })
        resumed++
        continue
      }
      const plan = planResume(job)
      if ('error' in plan) {
        await this.provider.failJob(job.id, { kind: 'interrupted', message: `The answer could not continue: ${plan.error}.`, hint: 'Send the message again.' })
        await this.reportFinished(job.id)
        continue
      }
      let userKey: string | undefined
      if (job.apiKeyCiphertext) {
        userKey = this.options.secretBox.open(job.apiKeyCiphertext)
        if (userKey === undefined) {
          await this.provider.failJob(job.id, { kind: 'interrupted', message: 'The answer was interrupted by a server restart and its API key could not be recovered (the server secret changed).', hint: 'Send the message again.' })
          await this.reportFinished(job.id)
          continue
        }
      }
      let endpoint
      try {
        endpoint = resolveChatEndpoint(job.request!.model, this.options.config, userKey)
      } catch (error) {
        await this.provider.failJob(job.id, { kind: 'interrupted', message: `The answer was interrupted by a server restart and cannot continue: ${(error as Error).message}` })
        await this.reportFinished(job.id)
        continue
      }
      this.options.logger?.info?.(`Resuming job ${job.id} after a restart (from tool round ${plan.toolRounds}).`)
      this.launch(job, new AbortController(), { endpoint, resume: plan })
      resumed++
    }
    return resumed
  }

  /** Fails runs idle for `jobTimeoutMs` and deletes jobs past their retention. */
  async sweep(now = Date.now()): Promise<void> {
    const { jobTimeoutMs, completedJobRetentionMs } = this.options.config.backgroundJobs
    for (const run of this.running.values()) {
      if (run.toolsRunning === 0 && now - run.lastActivityAt >= jobTimeoutMs) run.controller.abort('timeout' satisfies JobStopReason)
    }
    if (now - this.lastCleanupAt >= Math.min(completedJobRetentionMs, 60_000)) {
      this.lastCleanupAt = now
      await this.provider.cleanupExpired(now - completedJobRetentionMs)
    }
    if (this.leases && !this.closing && now - this.lastOrphanScanAt >= this.leases.leaseMs / 2) {
      this.lastOrphanScanAt = now
      await this.recoverInterruptedJobs()
    }
  }

  /** Starts the periodic sweep (timer `unref`'d, stopped by `shutdown`). */
  startSweeper(): void {
    if (this.sweeper) return
    const { jobTimeoutMs } = this.options.config.backgroundJobs
    let everyMs = Math.max(250, Math.min(Math.floor(jobTimeoutMs / 4), 15_000))
    if (this.leases) everyMs = Math.min(everyMs, Math.max(250, this.leases.leaseMs / 2))
    this.sweeper = setInterval(() => {
      this.sweep().catch(error => this.options.logger?.warn('Job sweep failed', error))
    }, everyMs)
    this.sweeper.unref?.()
  }

  /**
   * Stops accepting jobs, stops every run at its checkpoint (left `streaming`, resumed by the next
   * start) and stops the sweeper. Safe to call more than once.
   */
  async shutdown(): Promise<void> {
    this.closing = true
    if (this.sweeper) clearInterval(this.sweeper)
    this.sweeper = undefined
    for (const relay of this.relays.values()) void relay.then(handle => handle.stop())
    const runs = [...this.running.entries()]
    for (const [, run] of runs) run.controller.abort('shutdown' satisfies JobStopReason)
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([
      Promise.allSettled(runs.map(([, run]) => run.done)),
      new Promise<void>(resolve => (timer = setTimeout(resolve, SHUTDOWN_WAIT_MS))),
    ])
    clearTimeout(timer)
    // Hand the stopped jobs over at once instead of making other instances wait for the lease.
    if (this.leases) await Promise.allSettled(runs.map(([jobId]) => this.leases!.releaseLease(jobId)))
  }

  /** Hands the ended job to `onJobFinished` (errors are logged, never thrown). */
  private async reportFinished(jobId: string): Promise<void> {
    if (!this.options.onJobFinished) return
    try {
      const job = await this.provider.getJob(jobId)
      if (job && job.status !== 'streaming') await this.options.onJobFinished(job)
    } catch (error) {
      this.options.logger?.warn(`After job ${jobId} ended, its follow-up failed`, error)
    }
  }

  /** How often a running job's lease is renewed (and abort requests noticed). */
  private leaseRenewEveryMs(): number {
    return Math.max(100, Math.floor((this.leases?.leaseMs ?? 30_000) / 3))
  }

  /**
   * Creates a job while holding its slot: the slot is taken before the first await, so starts
   * running at the same time cannot overshoot the caps.
   */
  private async createWithinCaps(userId: string, controller: AbortController, create: () => Promise<BackgroundJob>): Promise<BackgroundJob> {
    const reservation = `pending:${crypto.randomUUID()}`
    let release!: () => void
    this.running.set(reservation, { userId, controller, done: new Promise<void>(resolve => (release = resolve)), lastActivityAt: Date.now(), toolsRunning: 0 })
    try {
      return await create()
    } finally {
      this.running.delete(reservation)
      release()
    }
  }

  /** Throws `JobCapacityError` when `userId` may not start another job now. */
  checkCapacity(userId: string): void {
    if (this.closing) throw new JobCapacityError('server', this.options.config.backgroundJobs.maxConcurrentJobs, RETRY_AFTER_SECONDS)
    const { maxConcurrentJobs, maxJobsPerUser } = this.options.config.backgroundJobs
    if (this.running.size >= maxConcurrentJobs) throw new JobCapacityError('server', maxConcurrentJobs, RETRY_AFTER_SECONDS)
    let mine = 0
    for (const run of this.running.values()) if (run.userId === userId) mine++
    if (mine >= maxJobsPerUser) throw new JobCapacityError('user', maxJobsPerUser, RETRY_AFTER_SECONDS)
  }

  private launch(job: BackgroundJob, controller: AbortController, how: { endpoint?: ChatEndpoint, resume?: ResumePlan, userKey?: string }): void {
    const run: RunningJob = { userId: job.userId, controller, done: Promise.resolve(), lastActivityAt: Date.now(), toolsRunning: 0 }
    this.running.set(job.id, run)
    if (this.leases) {
      const leases = this.leases
      run.leaseTimer = setInterval(() => {
        leases.renewLease(job.id).then(({ owned, abortRequested }) => {
          if (!owned) controller.abort('lease-lost' satisfies JobStopReason)
          else if (abortRequested) controller.abort('user' satisfies JobStopReason)
        }).catch(error => this.options.logger?.warn(`Renewing the lease of job ${job.id} failed`, error))
      }, this.leaseRenewEveryMs())
      run.leaseTimer.unref?.()
    }
    const common = {
      job,
      provider: this.provider,
      hub: this.hub,
      config: this.options.config,
      signal: controller.signal,
      logger: this.options.logger,
      onActivity: (toolsRunning: number) => {
        run.lastActivityAt = Date.now()
        run.toolsRunning = toolsRunning
      },
      // On a shared store a refused write means another instance took the job over: stop here.
      onWriteRefused: () => {
        if (this.leases && !controller.signal.aborted) controller.abort('lease-lost' satisfies JobStopReason)
      },
    }
    run.done = (job.type === 'workflow'
      ? runWorkflowJob({ ...common, endpointFor: model => resolveChatEndpoint(model, this.options.config, how.userKey) })
      : runChatJob({ ...common, endpoint: how.endpoint!, resume: how.resume })
    ).catch(async (error) => {
      // runChatJob is written not to throw; if it does, the job still must not stay `streaming`.
      this.options.logger?.warn(`Job ${job.id} crashed`, error)
      await this.provider.failJob(job.id, { kind: 'internal', message: 'The job failed unexpectedly on the server.' }).catch(() => {})
      this.hub.finish(job.id, { status: 'error', error: { kind: 'internal', message: 'The job failed unexpectedly on the server.' }, completedAt: Date.now() })
    }).then(async (outcome) => {
      if (outcome !== 'interrupted') await this.reportFinished(job.id)
    }).finally(() => {
      if (run.leaseTimer) clearInterval(run.leaseTimer)
      this.running.delete(job.id)
    })
  }
}
