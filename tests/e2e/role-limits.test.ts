/**
 * Limits per role against the built server: a fair share of the job slots (guests as a group, one
 * address, one person) while others still start; a daily token budget that stops a running answer
 * with its text kept and refuses the next start with 402; models checked for thread messages too;
 * a workflow whose model calls could pass the role's bound refused when saved; and the admin
 * changing a role's limits and reading everyone's usage.
 */
import { describe, expect, it } from 'vitest'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

const app = useBuiltApp({
  NUXT_SESSION_PASSWORD: 'a-role-limits-test-password-long-enough!',
  // Slow enough that the first answers are still running while the next starts are tried.
  NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '60',
  NUXT_BACKGROUND_JOBS_MAX_CONCURRENT_JOBS: '8',
  NUXT_LIMITS_FAIR_SHARE: '0.25',
  NUXT_LIMITS_TRUST_PROXY: 'true',
  NUXT_LIMITS_ROLES_GUEST_MODELS: 'or3/offline-demo',
  NUXT_LIMITS_ROLES_GUEST_JOBS_AT_ONCE: '1',
  NUXT_LIMITS_ROLES_GUEST_DAILY_TOKENS: '40',
  NUXT_LIMITS_ROLES_GUEST_WORKFLOW_MODEL_CALLS: '10',
})

const hello = { model: 'or3/offline-demo', messages: [{ role: 'user', content: 'Hello' }], _background: true }
const from = (address: string) => ({ 'x-forwarded-for': address })
const password = 'correct horse battery'

async function signedInAdmin(): Promise<SessionClient> {
  const admin = new SessionClient(app.url)
  // Created on the server itself: a first account through the proxy would need the setup code.
  const created = await admin.post('/api/auth/register', { name: 'Root', password })
  expect(created.status).toBe(201)
  return admin
}

describe('limits per role', () => {
  it('keeps a fair share of the job slots for guests together and for one person, while an admin still starts; a budget stops an answer and refuses the next start; the admin raises it', async () => {
    const admin = await signedInAdmin()
    const guests = ['10.0.0.1', '10.0.0.2', '10.0.0.3'].map(address => ({ client: new SessionClient(app.url), address }))
    const started: Array<{ client: SessionClient, jobId: string }> = []
    for (const guest of guests.slice(0, 2)) {
      const response = await guest.client.post('/api/openrouter/stream', hello, from(guest.address))
      expect(response.status).toBe(202)
      started.push({ client: guest.client, jobId: (await response.json()).jobId })
    }
    // Two of eight slots are the guests' share: a third guest waits, an admin elsewhere does not.
    const third = await guests[2]!.client.post('/api/openrouter/stream', hello, from(guests[2]!.address))
    expect(third.status).toBe(429)
    expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await third.json()).toMatchObject({ data: { scope: 'guests', limit: 2 }, message: expect.stringMatching(/Guests already have 2 answers running/) })
    const adminJobs = []
    for (let index = 0; index < 2; index++) {
      const response = await admin.post('/api/openrouter/stream', hello, from('10.9.0.1'))
      expect(response.status).toBe(202)
      adminJobs.push((await response.json()).jobId)
    }
    // The admin's role allows 10 at once, but one person holds at most the fair share (2 of 8).
    const more = await admin.post('/api/openrouter/stream', hello, from('10.9.0.1'))
    expect(more.status).toBe(429)
    expect(await more.json()).toMatchObject({ data: { scope: 'user', limit: 2 } })
    for (const jobId of adminJobs) await admin.json(`/api/jobs/${jobId}/abort`, { method: 'POST' })

    // The guests' 40-token budget stops their answers while they stream; the text so far is kept.
    const first = await waitForJobEnd(started[0]!.client, started[0]!.jobId)
    expect(first).toMatchObject({ status: 'error', error: { kind: 'over-budget', message: expect.stringMatching(/used your daily budget of tokens.*text so far is kept/) } })
    expect(first.content.length).toBeGreaterThan(0)
    await waitForJobEnd(started[1]!.client, started[1]!.jobId)
    const refused = await started[0]!.client.post('/api/openrouter/stream', hello, from('10.0.0.1'))
    expect(refused.status).toBe(402)
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await refused.json()).toMatchObject({ data: { budget: 'tokens', limit: 40 }, message: expect.stringMatching(/daily budget of 40 tokens/) })
    const mine = await started[0]!.client.json('/api/auth/usage')
    expect(mine).toMatchObject({ jobs: 1, limits: { dailyTokens: 40, jobsAtOnce: 1 }, resetsAt: expect.any(Number) })
    expect(mine.tokens).toBeGreaterThanOrEqual(40)

    // The admin sees the usage, and raises the guests' budget: the same guest starts again.
    const usage = await admin.json('/api/admin/usage')
    const guestRows = usage.rows.filter((row: { role: string }) => row.role === 'guest')
    expect(guestRows.length).toBeGreaterThanOrEqual(2)
    expect(guestRows[0]).toMatchObject({ name: 'Guest', tokens: expect.any(Number), jobs: 1 })
    expect(guestRows[0].tokens).toBeGreaterThanOrEqual(40)
    // By model, for the person and the admin (by model, by person, as a CSV file).
    const today = new Date().toISOString().slice(0, 10)
    const history = await started[0]!.client.json('/api/me/usage')
    expect(history.rows).toEqual([expect.objectContaining({ day: today, model: 'or3/offline-demo', jobs: 1 })])
    expect(history.rows[0].tokens).toBeGreaterThanOrEqual(40)
    const byModel = await admin.json('/api/admin/usage-report?by=model')
    expect(byModel.rows.find((row: { label: string }) => row.label === 'or3/offline-demo')).toMatchObject({ people: expect.any(Number) })
    expect(byModel.rows.find((row: { label: string }) => row.label === 'or3/offline-demo').people).toBeGreaterThanOrEqual(2)
    expect((await admin.json('/api/admin/usage-report?by=person')).rows.some((row: { label: string }) => row.label === 'Guest')).toBe(true)
    const csv = await admin.fetch(`/api/admin/usage-report?by=model&from=${today}&to=${today}&format=csv`)
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    expect(csv.headers.get('content-disposition')).toBe(`attachment; filename="usage-by-model-${today}-to-${today}.csv"`)
    expect((await csv.text()).split('\r\n')[0]).toBe('model,tokens,credits,jobs,people,from,to')
    const raised = await admin.fetch('/api/admin/limits', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ guest: { dailyTokens: 1_000_000 } }) })
    expect(raised.status).toBe(200)
    expect(await raised.json()).toMatchObject({ overrides: { guest: { dailyTokens: 1_000_000 } }, effective: { guest: { dailyTokens: 1_000_000, jobsAtOnce: 1 }, user: { dailyTokens: 2_000_000 } }, defaults: { guest: { dailyTokens: 40 } } })
    const again = await started[0]!.client.post('/api/openrouter/stream', hello, from('10.0.0.1'))
    expect(again.status).toBe(202)
    await started[0]!.client.json(`/api/jobs/${(await again.json()).jobId}/abort`, { method: 'POST' })
  }, 60_000)

  it('lets only admins change limits, and names a bad field', async () => {
    const guest = new SessionClient(app.url)
    const put = (client: SessionClient, body: unknown) => client.fetch('/api/admin/limits', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect((await put(guest, { guest: { dailyTokens: 5 } })).status).toBe(403)
    const admin = new SessionClient(app.url)
    expect((await admin.post('/api/auth/login', { name: 'Root', password })).status).toBe(200)
    for (const [body, field] of [
      [{ guest: { dailyTokens: -1 } }, /dailyTokens/],
      [{ guest: { jobsAtOnce: 0 } }, /jobsAtOnce/],
      [{ guest: { models: 'a b' } }, /models/],
      [{ guest: { unknown: 1 } }, /unknown/],
      [{ robots: {} }, /robots/],
    ] as const) {
      const response = await put(admin, body)
      expect(response.status).toBe(400)
      expect(JSON.stringify(await response.json())).toMatch(field)
    }
    expect((await admin.fetch('/api/admin/usage?day=yesterday')).status).toBe(400)
    expect((await guest.fetch('/api/admin/usage-report')).status).toBe(403)
    for (const query of ['by=team', 'from=2026-02-30', 'from=2026-01-01&to=2026-12-31', 'from=2026-11-03&to=2026-11-02']) {
      const response = await admin.fetch(`/api/admin/usage-report?${query}`)
      expect(response.status).toBe(400)
      expect((await response.json()).message).toMatch(/by must be|UTC day|at most 92|on or before/)
    }
    expect((await guest.fetch('/api/me/usage?to=tomorrow')).status).toBe(400)
  })

  it('checks a thread message\'s model against the role before storing anything, and bounds a workflow\'s model calls when it is saved', async () => {
    const guest = new SessionClient(app.url)
    const thread = await (await guest.post('/api/threads', {}, from('10.0.1.1'))).json()
    const refused = await guest.post(`/api/threads/${thread.id}/messages`, { content: 'Hi', model: 'openai/gpt-4o' }, from('10.0.1.1'))
    expect(refused.status).toBe(403)
    expect(await refused.json()).toMatchObject({ message: expect.stringMatching(/Guests may not use the model "openai\/gpt-4o"/) })
    expect((await guest.json(`/api/threads/${thread.id}`)).messages ?? []).toEqual([])

    const workflow = (maxToolRounds: number) => ({
      version: 1,
      name: 'Costly',
      nodes: [
        { id: 'start', kind: 'start' },
        { id: 'think', kind: 'agent', maxToolRounds, retries: 1 },
        { id: 'out', kind: 'output' },
      ],
      edges: [{ from: 'start', to: 'think' }, { from: 'think', to: 'out' }],
    })
    // (5 rounds + 1) × 2 attempts = 12 model calls, past the guests' 10.
    const costly = await guest.post('/api/workflows', { definition: workflow(5) }, from('10.0.1.1'))
    expect(costly.status).toBe(400)
    expect(await costly.json()).toMatchObject({ data: { modelCalls: 12, limit: 10 }, message: expect.stringMatching(/up to 12 model calls.*more than the 10 your role allows/) })
    expect((await guest.post('/api/workflows', { definition: workflow(4) }, from('10.0.1.1'))).status).toBe(201)
  })
})
