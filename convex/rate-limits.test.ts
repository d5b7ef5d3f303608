import { convexTest } from 'convex-test'
import { RateLimiterRes } from 'rate-limiter-flexible'
import { beforeEach, describe, expect, it } from 'vitest'
import { useConvexStoreClock } from '../tests/support/convex-store-clock'
import type { ConvexFunctionClient } from '../server/lib/stores/jobs/convex'
import { convexLimiters } from '../server/lib/stores/rate-limits/convex'
import { JobStartRate, RateLimitError } from '../server/lib/jobs/admission/start-rate'
import { AttemptLimits } from '../server/lib/auth/attempt-limits'
import schema from './schema'

const modules = import.meta.glob('./**/*.ts')
// Windows run on the store's clock (Date.now() inside the functions), set here.
const START = Date.UTC(2026, 10, 22, 12)
const { secret, at } = useConvexStoreClock(START)

let client: ConvexFunctionClient
let now: number
beforeEach(() => {
  client = convexTest({ schema, modules, transactionLimits: true }) as unknown as ConvexFunctionClient
  now = START
})

describe('rate-limit counters on Convex', () => {
  it('are shared by every instance: two servers together allow the points once, and the refusal says when to retry', async () => {
    const instanceA = convexLimiters(client, secret)({ keyPrefix: 'starts', points: 3, duration: 60 })
    const instanceB = convexLimiters(client, secret)({ keyPrefix: 'starts', points: 3, duration: 60 })
    await instanceA.consume('alice')
    await instanceB.consume('alice')
    const third = await instanceA.consume('alice')
    expect(third).toMatchObject({ consumedPoints: 3, remainingPoints: 0 })
    const refusal = await instanceB.consume('alice').catch((error: unknown) => error)
    expect(refusal).toBeInstanceOf(RateLimiterRes)
    expect(refusal).toMatchObject({ consumedPoints: 4, remainingPoints: 0, msBeforeNext: 60_000 })
    await expect(instanceB.consume('bob')).resolves.toMatchObject({ consumedPoints: 1 })
    // A minute on, the counter starts again.
    now += 60_001
    at(now)
    await expect(instanceA.consume('alice')).resolves.toMatchObject({ consumedPoints: 1, isFirstInDuration: true })
  })

  it('counts sign-in guesses before their check and deletes them on success, so lockouts hold across instances', async () => {
    const settings = { signInAttemptsPerIpPerMinute: 100, signInFailuresPerAccount: 2, sessionsPerIpPerMinute: 100, limiterFor: convexLimiters(client, secret) }
    const instanceA = new AttemptLimits(settings)
    const instanceB = new AttemptLimits(settings)
    // Two guesses (one on each instance) count before either is checked; the third is refused.
    await instanceA.beforeSignIn('10.0.0.1', 'ada')
    await instanceB.beforeSignIn('10.0.0.1', 'ada')
    await expect(instanceA.beforeSignIn('10.0.0.1', 'ada')).rejects.toMatchObject({ refusal: 'too-many-attempts', retryAfterSeconds: 900 })
    await expect(instanceB.beforeSignIn('10.0.0.1', 'bob')).resolves.toBeUndefined()
    await instanceB.signInSucceeded('ada')
    await expect(instanceA.beforeSignIn('10.0.0.1', 'ada')).resolves.toBeUndefined()
  })

  it('count job starts of one user across instances', async () => {
    const limiterFor = convexLimiters(client, secret)
    const instanceA = new JobStartRate(100, limiterFor)
    const instanceB = new JobStartRate(100, limiterFor)
    const principal = { userId: 'u1', role: 'user' as const, ip: '10.0.0.9' }
    await instanceA.consume(principal, 2)
    await instanceB.consume(principal, 2)
    const refusal = await instanceA.consume(principal, 2).catch((error: unknown) => error)
    expect(RateLimitError.isInstance(refusal)).toBe(true)
    expect(refusal).toMatchObject({ scope: 'user', limit: 2, retryAfterSeconds: 60 })
  })
})
