/**
 * How often jobs may start: per user and per client IP, per minute (rate-limiter-flexible, in
 * this process's memory). The concurrency caps (admission.ts) bound how many run at once; this
 * bounds how fast a client can start them, so one session or one address cannot fire hundreds of
 * billed upstream calls in seconds, or mint sessions to get around its per-user limit.
 */
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible'

/** The rates, from `limits` in the runtime config. */
export interface StartRateLimits {
  jobStartsPerUserPerMinute: number
  jobStartsPerIpPerMinute: number
}

/** Raised when a client starts jobs faster than allowed; answered 429 with `Retry-After`. */
export class RateLimitError extends Error {
  override name = 'RateLimitError'
  constructor(readonly scope: 'user' | 'ip', readonly limit: number, readonly retryAfterSeconds: number) {
    super(scope === 'user'
      ? `You started ${limit} answers in the last minute, the most allowed. Try again in ${retryAfterSeconds} s.`
      : `This network address started ${limit} answers in the last minute, the most allowed. Try again in ${retryAfterSeconds} s.`)
  }

  static isInstance(error: unknown): error is RateLimitError {
    return error instanceof Error && error.name === 'RateLimitError'
  }
}

/** Counts job starts per user and per IP over a sliding minute. */
export class JobStartRate {
  private readonly perUser: RateLimiterMemory
  private readonly perIp: RateLimiterMemory

  constructor(private readonly limits: StartRateLimits) {
    this.perUser = new RateLimiterMemory({ keyPrefix: 'job-start-user', points: limits.jobStartsPerUserPerMinute, duration: 60 })
    this.perIp = new RateLimiterMemory({ keyPrefix: 'job-start-ip', points: limits.jobStartsPerIpPerMinute, duration: 60 })
  }

  /** Counts one start; throws `RateLimitError` when the user or the address is over its rate. */
  async consume(userId: string, ip: string | undefined): Promise<void> {
    await this.take(this.perUser, userId, 'user', this.limits.jobStartsPerUserPerMinute)
    if (ip) await this.take(this.perIp, ip, 'ip', this.limits.jobStartsPerIpPerMinute)
  }

  private async take(limiter: RateLimiterMemory, key: string, scope: 'user' | 'ip', limit: number): Promise<void> {
    try {
      await limiter.consume(key)
    } catch (refusal) {
      if (!(refusal instanceof RateLimiterRes)) throw refusal
      throw new RateLimitError(scope, limit, Math.max(1, Math.ceil(refusal.msBeforeNext / 1000)))
    }
  }
}
