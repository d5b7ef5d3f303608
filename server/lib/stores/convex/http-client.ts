/**
 * The Convex client every store of one instance shares: Convex's `ConvexHttpClient` with a time
 * limit on every call (one hung connection ends in an error after `timeoutMs` instead of stalling
 * whatever waits on it), and mutations sent as they come rather than one at a time through the
 * client's queue (its default), so a lease or a sign-in never waits behind another job's write.
 * Writes of one job keep their order because their writer awaits each one (jobs/writer.ts).
 */
import { ConvexHttpClient } from 'convex/browser'
import type { ConvexFunctionClient } from '../jobs/convex'

/** Options of the instance's Convex client. */
export interface ConvexClientOptions {
  url: string
  /** How long one call may take before it fails. */
  timeoutMs: number
}

/** Thrown when the deployment did not answer within the time limit. */
export class ConvexTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`The Convex deployment did not answer within ${timeoutMs} ms.`)
    this.name = 'ConvexTimeoutError'
  }
}

/** The instance's Convex client (see the file's comment). */
export function createConvexHttpClient(options: ConvexClientOptions): ConvexFunctionClient {
  const limitedFetch: typeof fetch = async (input, init = {}) => {
    const signal = AbortSignal.timeout(options.timeoutMs)
    try {
      return await fetch(input, { ...init, signal: init.signal ? AbortSignal.any([init.signal, signal]) : signal })
    } catch (error) {
      if (signal.aborted) throw new ConvexTimeoutError(options.timeoutMs)
      throw error
    }
  }
  const client = new ConvexHttpClient(options.url, { fetch: limitedFetch })
  return {
    query: (query, ...args) => client.query(query, ...args),
    mutation: (mutation, ...args) => client.mutation(mutation, args[0] as never, { skipQueue: true }),
    action: (action, ...args) => client.action(action, ...args),
  }
}
