/**
 * How many jobs may run at once: the server-wide cap, each principal's role cap, and a fair share
 * of the server cap that no one user, no one client address and not all guests together can exceed,
 * so a flood of fresh sessions cannot take every slot from the people already here. A slot is
 * reserved before the first await of a start, so starts racing each other cannot overshoot a cap.
 * Counts are this process's: each instance applies the caps to the jobs it runs.
 */
import type { JobPrincipal } from './principal'

/** Which cap refused a start. */
export type CapacityScope = 'server' | 'user' | 'ip' | 'guests'

/** Raised when a new job would exceed a cap; answered 503 (server) or 429 (the others), with `Retry-After`. */
export class JobCapacityError extends Error {
  override name = 'JobCapacityError'
  constructor(readonly scope: CapacityScope, readonly limit: number, readonly retryAfterSeconds: number) {
    super(capacityMessage(scope, limit))
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

/** The server-wide caps (`backgroundJobs.maxConcurrentJobs`, `limits.fairShare`). */
export interface CapacityLimits {
  maxConcurrentJobs: number
  /** Share of `maxConcurrentJobs` one user, one address, or all guests together may hold. */
  fairShare: number
}

/** Seconds a refused client is asked to wait. */
const RETRY_AFTER_SECONDS = 5

interface Slot {
  userId: string
  ip?: string
  guest: boolean
}

/** Counts running jobs (and reservations) against the caps. */
export class JobSlots {
  private readonly slots = new Map<string, Slot>()
  private closed = false

  constructor(private readonly limits: CapacityLimits) {}

  /** Jobs running or being created. */
  get size(): number {
    return this.slots.size
  }

  /** Slots one user, one address, or all guests may hold. */
  get fairShare(): number {
    return Math.max(1, Math.ceil(this.limits.maxConcurrentJobs * this.limits.fairShare))
  }

  /** Throws `JobCapacityError` when `principal`, whose role runs `jobsAtOnce` at most, may not start another job now. */
  check(principal: JobPrincipal, jobsAtOnce: number): void {
    const { maxConcurrentJobs } = this.limits
    if (this.closed || this.slots.size >= maxConcurrentJobs) throw new JobCapacityError('server', maxConcurrentJobs, RETRY_AFTER_SECONDS)
    const share = this.fairShare
    let mine = 0
    let sameAddress = 0
    let guests = 0
    for (const slot of this.slots.values()) {
      if (slot.userId === principal.userId) mine++
      if (principal.ip !== undefined && slot.ip === principal.ip) sameAddress++
      if (slot.guest) guests++
    }
    const userCap = Math.min(jobsAtOnce, share)
    if (mine >= userCap) throw new JobCapacityError('user', userCap, RETRY_AFTER_SECONDS)
    if (sameAddress >= share) throw new JobCapacityError('ip', share, RETRY_AFTER_SECONDS)
    if (principal.role === 'guest' && guests >= share) throw new JobCapacityError('guests', share, RETRY_AFTER_SECONDS)
  }

  /** Checks the caps and takes a slot under `key` (a job id, or a reservation while it is created). */
  admit(key: string, principal: JobPrincipal, jobsAtOnce: number): void {
    this.check(principal, jobsAtOnce)
    this.take(key, principal)
  }

  /** Takes a slot without checking (a job resumed after a restart was admitted before, or a reservation becoming its job). */
  take(key: string, principal: Pick<JobPrincipal, 'userId'> & Partial<JobPrincipal>): void {
    this.slots.set(key, { userId: principal.userId, ip: principal.ip, guest: principal.role === 'guest' })
  }

  /** Frees the slot `key`. */
  release(key: string): void {
    this.slots.delete(key)
  }

  /** Refuses every new job from now on (shutdown). */
  close(): void {
    this.closed = true
  }
}
