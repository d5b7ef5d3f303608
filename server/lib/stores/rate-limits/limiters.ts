/**
 * Where rate-limit counters live. Every limiter of the app (job starts, sign-in attempts, new
 * guest sessions) is a rate-limiter-flexible limiter made by a `LimiterFactory`: in this process's
 * memory for sqlite and memory storage (one server), in Convex when several instances share
 * users, so a client cannot multiply its rate by the number of instances.
 */
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible'

/** Makes a limiter of `points` per `duration` seconds whose keys start with `keyPrefix`. */
export type LimiterFactory = (options: { keyPrefix: string, points: number, duration: number }) => RateLimiterAbstract

/** Counters in this process's memory. */
export const memoryLimiters: LimiterFactory = options => new RateLimiterMemory(options)

/**
 * Counts one for `key`: undefined when that was allowed, else the whole seconds (at least 1)
 * until it would be. A failure of the counters' store is thrown, never taken for a refusal.
 */
export async function takePoint(limiter: RateLimiterAbstract, key: string): Promise<number | undefined> {
  try {
    await limiter.consume(key)
    return undefined
  } catch (refusal) {
    if (!(refusal instanceof RateLimiterRes)) throw refusal
    return Math.max(1, Math.ceil(refusal.msBeforeNext / 1000))
  }
}
