/**
 * Open live streams (job streams, tool-change feeds) are connections (file descriptors, buffers),
 * so they are counted: per user, per job, per client address and for the whole server. One client
 * holding thousands of streams, or a crowd of fresh guest sessions from one address, must get a 429
 * telling it to close some, not take every connection the server has (the others got ECONNRESET,
 * or 503 for the admin's own answer).
 */
import { OverCapacityError } from './over-capacity'

/** The caps, from `backgroundJobs.streams` in the runtime config. */
export interface StreamLimits {
  perUser: number
  perJob: number
  /** Streams one client address may hold (all its users and guests together). */
  perAddress: number
  /** Streams open on this server at most. */
  max: number
}

/** A stream over a cap: 429 (this user or job) or 503 (the server), with the words to show. */
export class StreamLimitError extends OverCapacityError {
  override name = 'StreamLimitError'

  static isInstance(error: unknown): error is StreamLimitError {
    return error instanceof Error && error.name === 'StreamLimitError'
  }
}

/** Counts open streams and refuses one over a cap. */
export class StreamSlots {
  private total = 0
  private readonly byUser = new Map<string, number>()
  private readonly byJob = new Map<string, number>()
  private readonly byAddress = new Map<string, number>()

  constructor(private readonly limits: StreamLimits) {}

  /** Open streams now. */
  get open(): number {
    return this.total
  }

  /**
   * Takes a slot for a stream of `jobId` watched by `userId` from `address` (none known: not
   * counted per address), or throws a `StreamLimitError`. Returns the idempotent release.
   */
  acquire(userId: string, jobId: string, address?: string): () => void {
    const refuse = (statusCode: 429 | 503, message: string) => new StreamLimitError(statusCode, message)
    if (this.total >= this.limits.max) throw refuse(503, `The server has its maximum of ${this.limits.max} live streams open. Try again in a few seconds.`)
    if ((this.byUser.get(userId) ?? 0) >= this.limits.perUser) throw refuse(429, `You have ${this.limits.perUser} live streams open, the most allowed at once. Close some tabs and try again.`)
    if ((this.byJob.get(jobId) ?? 0) >= this.limits.perJob) throw refuse(429, `This answer already has ${this.limits.perJob} live viewers, the most allowed at once. Close some tabs and try again.`)
    if (address !== undefined && (this.byAddress.get(address) ?? 0) >= this.limits.perAddress) throw refuse(429, `Your network address has ${this.limits.perAddress} live streams open, the most allowed at once. Close some tabs and try again.`)
    this.total++
    increment(this.byUser, userId, 1)
    increment(this.byJob, jobId, 1)
    if (address !== undefined) increment(this.byAddress, address, 1)
    let released = false
    return () => {
      if (released) return
      released = true
      this.total--
      increment(this.byUser, userId, -1)
      increment(this.byJob, jobId, -1)
      if (address !== undefined) increment(this.byAddress, address, -1)
    }
  }
}

function increment(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by
  if (next <= 0) counts.delete(key)
  else counts.set(key, next)
}
