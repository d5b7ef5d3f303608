/**
 * How fast a client may try passwords and mint sessions (rate-limiter-flexible, counters where
 * `limiterFor` keeps them: memory, or Convex shared by every instance): sign-in attempts per
 * client address, failed sign-ins per account name, and new guest sessions per address. A refusal
 * is an `AuthError('too-many-attempts')` with `Retry-After`.
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import { memoryLimiters, takePoint, type LimiterFactory } from '../stores/rate-limits/limiters'
import { AuthError } from './auth-errors'

/** The limits, from `auth` in the runtime config. */
export interface AttemptLimitSettings {
  signInAttemptsPerIpPerMinute: number
  signInFailuresPerAccount: number
  sessionsPerIpPerMinute: number
  /** Sign-up attempts per address per hour (default 10). */
  signupsPerIpPerHour?: number
  /** Where the counters live (default: this process's memory). */
  limiterFor?: LimiterFactory
}

/** Window over which an account's failed sign-ins count. */
const FAILURE_WINDOW_SECONDS = 15 * 60

/** The sign-in and session-minting limiters of one process. */
export class AttemptLimits {
  private readonly signInsPerIp: RateLimiterAbstract
  private readonly failuresPerAccount: RateLimiterAbstract
  private readonly sessionsPerIp: RateLimiterAbstract
  private readonly signupsPerIp: RateLimiterAbstract

  constructor(settings: AttemptLimitSettings) {
    const limiterFor = settings.limiterFor ?? memoryLimiters
    this.signInsPerIp = limiterFor({ keyPrefix: 'sign-in-ip', points: settings.signInAttemptsPerIpPerMinute, duration: 60 })
    this.failuresPerAccount = limiterFor({ keyPrefix: 'sign-in-account', points: settings.signInFailuresPerAccount, duration: FAILURE_WINDOW_SECONDS })
    this.sessionsPerIp = limiterFor({ keyPrefix: 'session-ip', points: settings.sessionsPerIpPerMinute, duration: 60 })
    this.signupsPerIp = limiterFor({ keyPrefix: 'sign-up-ip', points: settings.signupsPerIpPerHour ?? 10, duration: 3_600 })
  }

  /** Counts a sign-up attempt from `ip` (refused or not, before anything is looked up or hashed). */
  async beforeSignUp(ip: string | undefined): Promise<void> {
    if (ip) await consumeOrRefuse(this.signupsPerIp, ip, seconds => `Too many sign-ups from this network address. Try again in ${seconds} s, or ask the admin to create your account.`)
  }

  /**
   * Counts a sign-in attempt from `ip`, and one against the account name before its password is
   * checked (so guesses sent at once are counted at once: past the limit they are refused without
   * a check); a sign-in that succeeds takes its count back (`signInSucceeded`).
   */
  async beforeSignIn(ip: string | undefined, nameKey: string): Promise<void> {
    if (ip) await consumeOrRefuse(this.signInsPerIp, ip, seconds => `Too many sign-in attempts from this network address. Try again in ${seconds} s.`)
    await consumeOrRefuse(this.failuresPerAccount, nameKey, seconds => `Too many failed sign-ins for this account. Try again in ${seconds} s, or ask the admin to reset the password.`)
  }

  /** Counts a sign-in through an identity provider from `ip` (its callback: each one asks the provider). */
  async beforeProviderSignIn(ip: string | undefined): Promise<void> {
    if (ip) await consumeOrRefuse(this.signInsPerIp, ip, seconds => `Too many sign-in attempts from this network address. Try again in ${seconds} s.`)
  }

  /** Forgets an account's failures after it signs in. */
  async signInSucceeded(nameKey: string): Promise<void> {
    await this.failuresPerAccount.delete(nameKey)
  }

  /** Counts a new guest session from `ip`. */
  async newSession(ip: string | undefined): Promise<void> {
    if (ip) await consumeOrRefuse(this.sessionsPerIp, ip, seconds => `Too many new sessions from this network address. Keep the session cookie between requests, or try again in ${seconds} s.`)
  }
}

/** Takes a point from `limiter` for `key`, or refuses with `message` (given the seconds to wait) and `Retry-After`. */
async function consumeOrRefuse(limiter: RateLimiterAbstract, key: string, message: (seconds: number) => string): Promise<void> {
  const seconds = await takePoint(limiter, key)
  if (seconds !== undefined) throw new AuthError('too-many-attempts', message(seconds), seconds)
}
