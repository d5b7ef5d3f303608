import { describe, expect, it } from 'vitest'
import { BodyBudget } from '../../../server/lib/http/body-budget'
import { OverCapacityError } from '../../../server/lib/http/over-capacity'

const MiB = 1024 * 1024

describe('BodyBudget', () => {
  it('lets one address send up to its bytes at once, then refuses with a 429 saying to wait; others go on', () => {
    const budget = new BodyBudget({ perClientBytes: 48 * MiB, totalBytes: 512 * MiB })
    budget.reserve('203.0.113.5', 20 * MiB)
    budget.reserve('203.0.113.5', 20 * MiB)
    const refusal = (() => {
      try {
        budget.reserve('203.0.113.5', 20 * MiB)
      } catch (error) {
        return error
      }
    })()
    expect(OverCapacityError.isInstance(refusal, 'bodies')).toBe(true)
    expect(refusal).toMatchObject({ statusCode: 429, retryAfterSeconds: 5, message: expect.stringMatching(/already sending 40 MiB/) })
    // A small body of the same address still fits; another address is not affected.
    expect(() => budget.reserve('203.0.113.5', 2_000)).not.toThrow()
    expect(() => budget.reserve('198.51.100.7', 20 * MiB)).not.toThrow()
    expect(budget.inFlight).toBe(60 * MiB + 2_000)
  })

  it('refuses with a 503 once the server as a whole would pass its bytes, and a refusal reserves nothing', () => {
    const budget = new BodyBudget({ perClientBytes: 48 * MiB, totalBytes: 64 * MiB })
    budget.reserve('a', 30 * MiB)
    budget.reserve('b', 30 * MiB)
    expect(() => budget.reserve('c', 10 * MiB)).toThrow(expect.objectContaining({ statusCode: 503 }))
    expect(budget.inFlight).toBe(60 * MiB)
  })

  it('gives the bytes back on release, once however often it is called', () => {
    const budget = new BodyBudget({ perClientBytes: 48 * MiB, totalBytes: 512 * MiB })
    const release = budget.reserve('a', 40 * MiB)
    const other = budget.reserve('a', 8 * MiB)
    release()
    release()
    expect(budget.inFlight).toBe(8 * MiB)
    expect(() => budget.reserve('a', 40 * MiB)).not.toThrow()
    other()
    expect(budget.inFlight).toBe(40 * MiB)
  })
})
