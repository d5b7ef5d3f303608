/**
 * The deployment's side of a convex-test file: its server secret in the functions' environment,
 * and the store's clock (Convex functions read `Date.now()` for leases, slots, rate windows and
 * locks) set to `startAt` before each test and back to real time after it. `at(ms)` moves it.
 */
import { afterEach, beforeEach, vi } from 'vitest'

export const CONVEX_TEST_SECRET = 'a-convex-test-server-secret-of-enough-length'

export function useConvexStoreClock(startAt: number): { secret: string, at: (now: number) => void } {
  const at = (now: number) => vi.setSystemTime(now)
  beforeEach(() => {
    process.env.OR3_SERVER_SECRET = CONVEX_TEST_SECRET
    vi.useFakeTimers({ toFake: ['Date'] })
    at(startAt)
  })
  afterEach(() => {
    vi.useRealTimers()
  })
  return { secret: CONVEX_TEST_SECRET, at }
}
