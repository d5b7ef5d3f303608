/**
 * Who may start a job now: the server-wide and per-user concurrency caps. A slot is reserved
 * before the first await of a start, so starts racing each other cannot overshoot a cap.
 * (Rate limits and budgets join here.)
 */

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

/** The caps, from `backgroundJobs` in the runtime config. */
export interface AdmissionLimits {
  maxConcurrentJobs: number
  maxJobsPerUser: number
}

/** Seconds a refused client is asked to wait. */
const RETRY_AFTER_SECONDS = 5

/** Counts running jobs (and reservations) per user against the caps. */
export class JobAdmission {
  private readonly slots = new Map<string, string>()
  private closed = false

  constructor(private readonly limits: AdmissionLimits) {}

  /** Jobs running or being created. */
  get size(): number {
    return this.slots.size
  }

  /** Throws `JobCapacityError` when `userId` may not start another job now. */
  check(userId: string): void {
    const { maxConcurrentJobs, maxJobsPerUser } = this.limits
    if (this.closed || this.slots.size >= maxConcurrentJobs) throw new JobCapacityError('server', maxConcurrentJobs, RETRY_AFTER_SECONDS)
    let mine = 0
    for (const owner of this.slots.values()) if (owner === userId) mine++
    if (mine >= maxJobsPerUser) throw new JobCapacityError('user', maxJobsPerUser, RETRY_AFTER_SECONDS)
  }

  /** Checks the caps and takes a slot under `key` (a job id, or a reservation while it is created). */
  admit(key: string, userId: string): void {
    this.check(userId)
    this.slots.set(key, userId)
  }

  /** Takes a slot without checking (a job resumed after a restart was admitted before). */
  occupy(key: string, userId: string): void {
    this.slots.set(key, userId)
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
