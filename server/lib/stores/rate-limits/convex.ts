/**
 * rate-limiter-flexible's store interface on Convex (convex/rateLimits.ts): counters every
 * instance shares. A refusal is the library's own `RateLimiterRes`, as with the memory limiter.
 */
import { RateLimiterRes } from 'rate-limiter-flexible'
import RateLimiterStoreAbstract from 'rate-limiter-flexible/lib/RateLimiterStoreAbstract.js'
import { api } from '../../../../convex/_generated/api'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { LimiterFactory } from './limiters'

interface StoredCounter {
  points: number
  expire: number | null
}

interface ConvexLimiterOptions {
  keyPrefix: string
  points: number
  duration: number
  client: ConvexFunctionClient
  secret: string
  now?: () => number
}

/** A rate-limiter-flexible limiter whose counters are in Convex. */
export class RateLimiterConvex extends RateLimiterStoreAbstract {
  private readonly convex: ConvexFunctionClient
  private readonly secret: string
  private readonly now: () => number

  constructor(options: ConvexLimiterOptions) {
    super({ keyPrefix: options.keyPrefix, points: options.points, duration: options.duration, storeClient: options.client })
    this.convex = options.client
    this.secret = options.secret
    this.now = options.now ?? Date.now
  }

  _getRateLimiterRes(_key: string, changedPoints: number, stored: StoredCounter): RateLimiterRes {
    const isFirstInDuration = changedPoints === stored.points
    const consumedPoints = isFirstInDuration ? changedPoints : stored.points
    const msBeforeNext = stored.expire === null ? -1 : Math.max(stored.expire - this.now(), 0)
    return new RateLimiterRes(Math.max(this.points - consumedPoints, 0), msBeforeNext, consumedPoints, isFirstInDuration)
  }

  _upsert(key: string, points: number, msDuration: number, forceExpire = false): Promise<StoredCounter> {
    return this.convex.mutation(api.rateLimits.upsert, { secret: this.secret, key, points, msDuration, forceExpire, now: this.now() })
  }

  _get(key: string): Promise<StoredCounter | null> {
    return this.convex.query(api.rateLimits.get, { secret: this.secret, key, now: this.now() })
  }

  _delete(key: string): Promise<boolean> {
    return this.convex.mutation(api.rateLimits.remove, { secret: this.secret, key })
  }
}

/** Limiters whose counters live in the Convex deployment. */
export function convexLimiters(client: ConvexFunctionClient, secret: string, now?: () => number): LimiterFactory {
  return options => new RateLimiterConvex({ ...options, client, secret, now })
}
