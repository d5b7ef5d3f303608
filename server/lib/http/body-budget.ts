/**
 * Request bodies are memory while they are read and parsed (a message with files is up to ~22
 * MiB), so the bytes being read at once are counted: per client address and for the whole
 * server. A client that opens many large uploads at once (or trickles them in slowly) gets a 429
 * telling it to wait for its others, and the server a 503 before it would run out of memory;
 * nobody else's request waits behind them. The per-IP start rate only counts a request once its
 * body is read, which is why this sits in front of it.
 */
import { CapacityCounter } from '../capacity-counter'
import { OverCapacityError } from './over-capacity'

/** The caps, from `limits.bodyBytesInFlightPerIp` and `limits.bodyBytesInFlight` in the runtime config. */
export interface BodyBudgetLimits {
  /** Bytes of bodies one client address may have in flight at once. */
  perClientBytes: number
  /** Bytes of bodies the server reads at once, all clients together. */
  totalBytes: number
}

/** Counts the bytes of request bodies in flight, and refuses one that would pass a cap. */
export class BodyBudget {
  private readonly counter: CapacityCounter<'client'>

  constructor(limits: BodyBudgetLimits) {
    this.counter = new CapacityCounter<'client'>({ total: limits.totalBytes, client: limits.perClientBytes })
  }

  /** Bytes reserved now, all clients together. */
  get inFlight(): number {
    return this.counter.held('total')
  }

  /**
   * Reserves `bytes` for a body `client` is sending (its declared length, or the route's limit
   * when it did not declare one). Returns the release, idempotent; throws an OverCapacityError (`bodies`) when
   * a cap would be passed (nothing is reserved then).
   */
  reserve(client: string, bytes: number): () => void {
    const size = Math.max(0, Math.ceil(bytes))
    const refused = this.counter.wouldPass(size, { client }, ['client', 'total'])
    if (refused === 'client') {
      throw new OverCapacityError('bodies', 429, `This client is already sending ${mebibytes(this.counter.held('client', client))} of requests; wait for them to finish, then send this one again.`)
    }
    if (refused === 'total') throw new OverCapacityError('bodies', 503, 'The server is receiving too much at once; send this again in a few seconds.')
    return this.counter.hold(size, { client })
  }
}

function mebibytes(bytes: number): string {
  return `${Math.max(1, Math.round(bytes / (1024 * 1024)))} MiB`
}
