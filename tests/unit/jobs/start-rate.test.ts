import { describe, expect, it } from 'vitest'
import { JobStartRate, RateLimitError } from '../../../server/lib/jobs/admission/start-rate'

const guest = (userId: string, ip: string) => ({ userId, role: 'guest' as const, ip })

describe('job start rate', () => {
  it('refuses a principal past its starts per minute with a wait, while another goes on', async () => {
    const rate = new JobStartRate(100)
    for (let index = 0; index < 3; index++) await rate.consume(guest('alice', '10.0.0.1'), 3)
    const error = await rate.consume(guest('alice', '10.0.0.1'), 3).then(() => undefined, (caught: unknown) => caught as RateLimitError)
    expect(RateLimitError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ scope: 'user', limit: 3, message: expect.stringMatching(/started 3 answers in the last minute/) })
    expect(error!.retryAfterSeconds).toBeGreaterThanOrEqual(1)
    expect(error!.retryAfterSeconds).toBeLessThanOrEqual(60)
    await expect(rate.consume(guest('bob', '10.0.0.1'), 3)).resolves.toBeUndefined()
  })

  it('counts every session of one address together, so fresh sessions do not get around it', async () => {
    const rate = new JobStartRate(2)
    await rate.consume(guest('s1', '10.0.0.2'), 100)
    await rate.consume(guest('s2', '10.0.0.2'), 100)
    await expect(rate.consume(guest('s3', '10.0.0.2'), 100)).rejects.toMatchObject({ scope: 'ip', limit: 2 })
    await expect(rate.consume(guest('s4', '10.0.0.3'), 100)).resolves.toBeUndefined()
  })

  it('applies the rate a role has now: an admin raising it lets the principal go on', async () => {
    const rate = new JobStartRate(100)
    await rate.consume(guest('carol', '10.0.0.4'), 1)
    await expect(rate.consume(guest('carol', '10.0.0.4'), 1)).rejects.toMatchObject({ scope: 'user', limit: 1 })
    await expect(rate.consume(guest('carol', '10.0.0.4'), 5)).resolves.toBeUndefined()
  })
})
