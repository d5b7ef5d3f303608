/**
 * Open live streams (job streams, tool-change feeds) are connections (file descriptors, buffers),
 * so they are counted: per user, per job, per client address and for the whole server. One client
 * holding thousands of streams, or a crowd of fresh guest sessions from one address, must get a 429
 * telling it to close some, not take every connection the server has (the others got ECONNRESET,
 * or 503 for the admin's own answer).
 */
import { CapacityCounter } from '../capacity-counter'
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

const REFUSALS: Record<'total' | 'user' | 'job' | 'address', (limits: StreamLimits) => OverCapacityError> = {
  total: limits => new OverCapacityError('streams', 503, `The server has its maximum of ${limits.max} live streams open. Try again in a few seconds.`),
  user: limits => new OverCapacityError('streams', 429, `You have ${limits.perUser} live streams open, the most allowed at once. Close some tabs and try again.`),
  job: limits => new OverCapacityError('streams', 429, `This answer already has ${limits.perJob} live viewers, the most allowed at once. Close some tabs and try again.`),
  address: limits => new OverCapacityError('streams', 429, `Your network address has ${limits.perAddress} live streams open, the most allowed at once. Close some tabs and try again.`),
}

/** Counts open streams and refuses one over a cap. */
export class StreamSlots {
  private readonly counter: CapacityCounter<'user' | 'job' | 'address'>

  constructor(private readonly limits: StreamLimits) {
    this.counter = new CapacityCounter<'user' | 'job' | 'address'>({ total: limits.max, user: limits.perUser, job: limits.perJob, address: limits.perAddress })
  }

  /** Open streams now. */
  get open(): number {
    return this.counter.held('total')
  }

  /**
   * Takes a slot for a stream of `jobId` watched by `userId` from `address` (none known: not
   * counted per address), or throws an `OverCapacityError` (`streams`). Returns the idempotent release.
   */
  acquire(userId: string, jobId: string, address?: string): () => void {
    const keys = { user: userId, job: jobId, address }
    const refused = this.counter.wouldPass(1, keys, ['total', 'user', 'job', 'address'])
    if (refused) throw REFUSALS[refused](this.limits)
    return this.counter.hold(1, keys)
  }
}
