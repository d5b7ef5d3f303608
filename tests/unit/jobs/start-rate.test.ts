import { describe, expect, it } from 'vitest'
import { JobStartRate, RateLimitError } from '../../../server/lib/jobs/start-rate'

describe('job start rate', () => {
  it('refuses a user past their starts per minute with a wait, while another user goes on', async () => {
    const rate = new JobStartRate({ jobStartsPerUserPerMinute: 3, jobStartsPerIpPerMinute: 100 })
    for (let index = 0; index < 3; index++) await rate.consume('alice', '10.0.0.1')
    const error = await rate.consume('alice', '10.0.0.1').catch(caught => caught)
    expect(RateLimitError.isInstance(error)).toBe(true)
    expect(error).toMatchObject({ scope: 'user', limit: 3, message: expect.stringMatching(/started 3 answers in the last minute/) })
    expect(error.retryAfterSeconds).toBeGreaterThanOrEqual(1)
    expect(error.retryAfterSeconds).toBeLessThanOrEqual(60)
    await expect(rate.consume('bob', '10.0.0.1')).resolves.toBeUndefined()
  })

  it('counts every session of one address together, so fresh sessions do not get around it', async () => {
    const rate = new JobStartRate({ jobStartsPerUserPerMinute: 100, jobStartsPerIpPerMinute: 2 })
    await rate.consume('s1', '10.0.0.2')
    await rate.consume('s2', '10.0.0.2')
    await expect(rate.consume('s3', '10.0.0.2')).rejects.toMatchObject({ scope: 'ip', limit: 2 })
    await expect(rate.consume('s4', '10.0.0.3')).resolves.toBeUndefined()
  })
})
