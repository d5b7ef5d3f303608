/**
 * How many jobs may run at once: the server-wide cap, each principal's role cap, and a fair share
 * of the server cap that no one user, no one client address and not all guests together can exceed,
 * so a flood of fresh sessions cannot take every slot from the people already here. A slot is
 * reserved before the first await of a start, so starts racing each other cannot overshoot a cap.
 * A job that waits for a person is parked: its slot stops counting as running (it counts against
 * the waiting caps instead), and once answered it queues, in order, for a running slot again.
 * Counts are this process's: each instance applies the caps to the jobs it runs. With several
 * instances on Convex, a person's running jobs (and all of the deployment's) are counted in the
 * store as well, when a job is created (convex/lib/jobSlots.ts, via the manager's shared caps).
 */
import type { JobPrincipal } from './principal'
import { CapacityCounter } from '../../capacity-counter'
import { CAPACITY_RETRY_AFTER_SECONDS, DomainError, type HttpAnswer } from '../../domain-error'

/** Which cap refused a start. */
export type CapacityScope = 'server' | 'user' | 'ip' | 'guests'

/** Raised when a new job would exceed a cap; answered 503 (server) or 429 (the others), with `Retry-After`. */
export class JobCapacityError extends DomainError {
  override name = 'JobCapacityError'
  constructor(readonly scope: CapacityScope, readonly limit: number, readonly retryAfterSeconds: number) {
    super(capacityMessage(scope, limit))
  }

  httpAnswer(): HttpAnswer {
    const server = this.scope === 'server'
    return { statusCode: server ? 503 : 429, statusMessage: server ? 'Server busy' : 'Too many running answers', message: this.message, i18n: { key: `capacity.${this.scope}`, params: { limit: this.limit } }, data: { scope: this.scope, limit: this.limit }, retryAfterSeconds: this.retryAfterSeconds, refusedBy: `running_jobs_${this.scope}` }
  }

  static isInstance(error: unknown): error is JobCapacityError {
    return error instanceof Error && error.name === 'JobCapacityError'
  }
}

function capacityMessage(scope: CapacityScope, limit: number): string {
  switch (scope) {
    case 'server': return `The server is already running its maximum of ${limit} jobs. Try again in a few seconds.`
    case 'user': return `You already have ${limit} answers running, the most allowed at once. Wait for one to finish or stop one, then try again.`
    case 'ip': return `This network address already has ${limit} answers running, its fair share of the server. Wait for one to finish, then try again.`
    case 'guests': return `Guests already have ${limit} answers running, their share of the server. Try again in a few seconds, or sign in.`
  }
}

/** The server-wide caps (`backgroundJobs.maxConcurrentJobs`, `limits.fairShare`, `backgroundJobs.waits`). */
export interface CapacityLimits {
  maxConcurrentJobs: number
  /** Share of `maxConcurrentJobs` one user, one address, or all guests together may hold. */
  fairShare: number
  /** Jobs parked while they wait for a person, on the server and per user (past them a waiting job keeps its slot). */
  maxWaitingJobs?: number
  maxWaitingJobsPerUser?: number
}

interface Slot {
  userId: string
  /** Waiting for a person: held against the waiting caps, not the running ones. */
  parked: boolean
  /** Gives back what the slot holds now (a running slot, or a waiting one). */
  release: () => void
}

/** Keys a running slot is counted under: its user, its client address, all guests as one. */
type RunningKeys = { user: string, ip?: string, guests?: string }

/** Counts running jobs (and reservations) against the caps. */
export class JobSlots {
  private readonly slots = new Map<string, Slot & { keys: RunningKeys }>()
  /** Running slots: in total (the server cap), per user, per address and for all guests (the fair share). */
  private readonly running: CapacityCounter<'user' | 'ip' | 'guests'>
  /** Slots parked while their jobs wait for a person: in total and per user. */
  private readonly waitingSlots: CapacityCounter<'user'>
  /** Parked jobs that were answered, in the order they asked for a running slot again. */
  private readonly queue: Array<{ key: string, start: () => void }> = []
  private closed = false

  constructor(private readonly limits: CapacityLimits) {
    const share = this.fairShare
    this.running = new CapacityCounter<'user' | 'ip' | 'guests'>({ total: limits.maxConcurrentJobs, user: share, ip: share, guests: share })
    this.waitingSlots = new CapacityCounter<'user'>({ total: limits.maxWaitingJobs ?? Infinity, user: limits.maxWaitingJobsPerUser ?? Infinity })
  }

  /** Jobs running or being created (parked ones do not count). */
  get size(): number {
    return this.running.held('total')
  }

  /** Jobs parked while they wait for a person (answered ones queued for a running slot too). */
  get waiting(): number {
    return this.waitingSlots.held('total')
  }

  /** Parked jobs that were answered and wait, in order, for a running slot. */
  get queued(): number {
    return this.queue.length
  }

  /** Slots one user, one address, or all guests may hold. */
  get fairShare(): number {
    return Math.max(1, Math.ceil(this.limits.maxConcurrentJobs * this.limits.fairShare))
  }

  /**
   * Throws `JobCapacityError` when `principal`, whose role runs `jobsAtOnce` at most, may not start
   * `count` more jobs now (several models answering one question start together, or none does).
   */
  check(principal: JobPrincipal, jobsAtOnce: number, count = 1): void {
    const { maxConcurrentJobs } = this.limits
    // Answered jobs queued for a slot go first.
    if (this.closed || this.size + this.queue.length + count > maxConcurrentJobs) throw new JobCapacityError('server', maxConcurrentJobs, CAPACITY_RETRY_AFTER_SECONDS)
    const share = this.fairShare
    // The role's own cap is below the fair share or at it.
    const userCap = Math.min(jobsAtOnce, share)
    if (this.running.held('user', principal.userId) + count > userCap) throw new JobCapacityError('user', userCap, CAPACITY_RETRY_AFTER_SECONDS)
    const refused = this.running.wouldPass(count, runningKeys(principal), ['ip', 'guests'])
    if (refused === 'ip' || refused === 'guests') throw new JobCapacityError(refused, share, CAPACITY_RETRY_AFTER_SECONDS)
  }

  /** Checks the caps and takes a slot under `key` (a job id, or a reservation while it is created). */
  admit(key: string, principal: JobPrincipal, jobsAtOnce: number): void {
    this.check(principal, jobsAtOnce)
    this.take(key, principal)
  }

  /** Takes a slot without checking (a job resumed after a restart was admitted before, or a reservation becoming its job). */
  take(key: string, principal: Pick<JobPrincipal, 'userId'> & Partial<JobPrincipal>): void {
    this.slots.get(key)?.release()
    const keys = runningKeys(principal)
    this.slots.set(key, { userId: principal.userId, keys, parked: false, release: this.running.hold(1, keys) })
  }

  /** Frees the slot `key` (a parked or queued job's too). */
  release(key: string): void {
    this.slots.get(key)?.release()
    this.slots.delete(key)
    const queued = this.queue.findIndex(entry => entry.key === key)
    if (queued >= 0) this.queue.splice(queued, 1)[0]!.start()
    this.startQueued()
  }

  /**
   * Job `key` starts waiting for a person: its slot stops counting as running, unless the waiting
   * caps are full (then it keeps it: `false`).
   */
  park(key: string): boolean {
    const slot = this.slots.get(key)
    if (!slot || slot.parked) return false
    if (this.waitingSlots.wouldPass(1, { user: slot.userId }, ['total', 'user'])) return false
    slot.release()
    slot.release = this.waitingSlots.hold(1, { user: slot.userId })
    slot.parked = true
    this.startQueued()
    return true
  }

  /** Parked job `key` has its answer: resolves once it holds a running slot again (queued in order), or `signal` aborts. */
  unpark(key: string, signal?: AbortSignal): Promise<void> {
    const slot = this.slots.get(key)
    if (!slot?.parked) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener('abort', giveUp)
        resolve()
      }
      const giveUp = () => {
        const at = this.queue.findIndex(entry => entry.key === key)
        if (at >= 0) this.queue.splice(at, 1)
        done()
      }
      this.queue.push({ key, start: done })
      signal?.addEventListener('abort', giveUp, { once: true })
      this.startQueued()
    })
  }

  /** Gives queued jobs running slots, in order, while the server and their fair share have room. */
  private startQueued(): void {
    for (let index = 0; index < this.queue.length && this.size < this.limits.maxConcurrentJobs;) {
      const entry = this.queue[index]!
      const slot = this.slots.get(entry.key)
      if (slot && this.running.held('user', slot.userId) >= this.fairShare) {
        index++
        continue
      }
      this.queue.splice(index, 1)
      if (slot?.parked) {
        slot.release()
        slot.release = this.running.hold(1, slot.keys)
        slot.parked = false
      }
      entry.start()
    }
  }

  /** Refuses every new job from now on (shutdown). */
  close(): void {
    this.closed = true
  }
}

function runningKeys(principal: Pick<JobPrincipal, 'userId'> & Partial<JobPrincipal>): RunningKeys {
  return { user: principal.userId, ip: principal.ip, guests: principal.role === 'guest' ? 'all' : undefined }
}
