/**
 * rate-limiter-flexible's store interface on Convex (convex/rateLimits.ts): counters every
 * instance shares, their windows on the store's clock (each answer says how long is left, so an
 * instance whose clock is off still answers the right Retry-After). A refusal is the library's
 * own `RateLimiterRes`, as with the memory limiter.
 */
import { RateLimiterRes } from 'rate-limiter-flexible'
import RateLimiterStoreAbstract from 'rate-limiter-flexible/lib/RateLimiterStoreAbstract.js'
import { api } from '../../../../convex/_generated/api'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { LimiterFactory } from './limiters'

interface StoredCounter {
  points: number
  expire: number | null
  /** Milliseconds left in the window by the store's clock (-1: none). */
  msLeft: number
}

interface ConvexLimiterOptions {
  keyPrefix: string
  points: number
  duration: number
  client: ConvexFunctionClient
  secret: string
}

/** A rate-limiter-flexible limiter whose counters are in Convex. */
export class RateLimiterConvex extends RateLimiterStoreAbstract {
  private readonly convex: ConvexFunctionClient
  private readonly secret: string

  constructor(options: ConvexLimiterOptions) {
    super({ keyPrefix: options.keyPrefix, points: options.points, duration: options.duration, storeClient: options.client })
    this.convex = options.client
    this.secret = options.secret
  }

  _getRateLimiterRes(_key: string, changedPoints: number, stored: StoredCounter): RateLimiterRes {
    const isFirstInDuration = changedPoints === stored.points
    const consumedPoints = isFirstInDuration ? changedPoints : stored.points
    const msBeforeNext = stored.msLeft
    return new RateLimiterRes(Math.max(this.points - consumedPoints, 0), msBeforeNext, consumedPoints, isFirstInDuration)
  }

  _upsert(key: string, points: number, msDuration: number, forceExpire = false): Promise<StoredCounter> {
    return this.convex.mutation(api.rateLimits.upsert, { secret: this.secret, key, points, msDuration, forceExpire })
  }

  _get(key: string): Promise<StoredCounter | null> {
    return this.convex.query(api.rateLimits.get, { secret: this.secret, key })
  }

  _delete(key: string): Promise<boolean> {
    return this.convex.mutation(api.rateLimits.remove, { secret: this.secret, key })
  }
}

/** Limiters whose counters live in the Convex deployment. */
export function convexLimiters(client: ConvexFunctionClient, secret: string): LimiterFactory {
  return options => new RateLimiterConvex({ ...options, client, secret })
}
