/**
 * Starting answers as fast as a script can, against the built server: past the per-user rate the
 * client gets 429 with Retry-After and words to show; fresh sessions from the same address stop at
 * the per-address rate; another user, from another address, still starts answers meanwhile.
 */
import { describe, expect, it } from 'vitest'
import { SessionClient } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

const app = useBuiltApp({
  NUXT_SESSION_PASSWORD: 'a-start-limits-test-password-long-enough',
  NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0',
  NUXT_LIMITS_ROLES_GUEST_JOB_STARTS_PER_MINUTE: '3',
  NUXT_LIMITS_JOB_STARTS_PER_IP_PER_MINUTE: '5',
  // The test speaks as several addresses through X-Forwarded-For, as a proxy would set it.
  NUXT_LIMITS_TRUST_PROXY: 'true',
})

const hello = { model: 'or3/offline-demo', messages: [{ role: 'user', content: 'Hello' }], _background: true }
const from = (address: string) => ({ 'x-forwarded-for': address })

describe('job start rates', () => {
  it('refuses a user past its starts per minute and an address past its own, while others start', async () => {
    const alice = new SessionClient(app.url)
    for (let index = 0; index < 3; index++) expect((await alice.post('/api/openrouter/stream', hello, from('10.1.0.1'))).status).toBe(202)
    const refused = await alice.post('/api/openrouter/stream', hello, from('10.1.0.1'))
    expect(refused.status).toBe(429)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await refused.json()).toMatchObject({ message: expect.stringMatching(/started 3 answers in the last minute/), data: { scope: 'user', limit: 3 } })

    // New sessions from the same address: its rate counts them all (3 used by alice, 1 refused).
    const fresh = [new SessionClient(app.url), new SessionClient(app.url), new SessionClient(app.url)]
    const statuses = []
    for (const client of fresh) statuses.push((await client.post('/api/openrouter/stream', hello, from('10.1.0.1'))).status)
    expect(statuses).toEqual([202, 202, 429])

    // Someone else, elsewhere, is not affected; a thread message counts the same way.
    const bob = new SessionClient(app.url)
    expect((await bob.post('/api/openrouter/stream', hello, from('10.2.0.2'))).status).toBe(202)
    const thread = await (await bob.post('/api/threads', {}, from('10.2.0.2'))).json()
    expect((await bob.post(`/api/threads/${thread.id}/messages`, { content: 'Hi', model: 'or3/offline-demo' }, from('10.2.0.2'))).status).toBe(202)
  })
})
