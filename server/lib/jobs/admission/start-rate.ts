/**
 * How often jobs may start: per principal (at its role's `jobStartsPerMinute`) and per client
 * address, per minute (rate-limiter-flexible). The concurrency caps (caps.ts) bound how many run at
 * once; this bounds how fast a client can start them, so one session or one address cannot fire
 * hundreds of billed upstream calls in seconds, or mint sessions to get around its per-user rate.
 * The counters live where `limiterFor` puts them (stores/rate-limits): this process's memory by
 * default, Convex when several instances serve the same users.
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import { memoryLimiters, takePoint, type LimiterFactory } from '../../stores/rate-limits/limiters'
import type { JobPrincipal } from './principal'
import { DomainError, type HttpAnswer } from '../../domain-error'

/** Raised when a client starts jobs faster than allowed; answered 429 with `Retry-After`. */
export class RateLimitError extends DomainError {
  override name = 'RateLimitError'
  constructor(readonly scope: 'user' | 'ip', readonly limit: number, readonly retryAfterSeconds: number) {
    super(scope === 'user'
      ? `You started ${limit} answers in the last minute, the most allowed. Try again in ${retryAfterSeconds} s.`
      : `This network address started ${limit} answers in the last minute, the most allowed. Try again in ${retryAfterSeconds} s.`)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: 429, statusMessage: 'Too many starts', message: this.message, i18n: { key: `starts.${this.scope}`, params: { limit: this.limit, seconds: this.retryAfterSeconds } }, data: { scope: this.scope, limit: this.limit }, retryAfterSeconds: this.retryAfterSeconds, refusedBy: `job_starts_${this.scope}` }
  }

  static isInstance(error: unknown): error is RateLimitError {
    return error instanceof Error && error.name === 'RateLimitError'
  }
}

/** Counts job starts per principal and per address over a minute. */
export class JobStartRate {
  /** One limiter per rate in use (a role's rate may be changed by the admin while the server runs). */
  private readonly perUser = new Map<number, RateLimiterAbstract>()
  private readonly perIp: RateLimiterAbstract

  constructor(private readonly perIpPerMinute: number, private readonly limiterFor: LimiterFactory = memoryLimiters) {
    this.perIp = limiterFor({ keyPrefix: 'job-start-ip', points: perIpPerMinute, duration: 60 })
  }

  /** Counts one start of `principal`, allowed `perMinute`; throws `RateLimitError` when it or its address is over its rate. */
  async consume(principal: JobPrincipal, perMinute: number): Promise<void> {
    let limiter = this.perUser.get(perMinute)
    if (!limiter) this.perUser.set(perMinute, limiter = this.limiterFor({ keyPrefix: `job-start-user-${perMinute}`, points: perMinute, duration: 60 }))
    await take(limiter, principal.userId, 'user', perMinute)
    if (principal.ip) await take(this.perIp, principal.ip, 'ip', this.perIpPerMinute)
  }
}

async function take(limiter: RateLimiterAbstract, key: string, scope: 'user' | 'ip', limit: number): Promise<void> {
  const seconds = await takePoint(limiter, key)
  if (seconds !== undefined) throw new RateLimitError(scope, limit, seconds)
}
