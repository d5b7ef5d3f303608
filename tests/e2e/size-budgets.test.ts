/**
 * Making the server hold more than a person ever would, against the built server: a workflow
 * template that repeats a 100,000-character prompt 2,000 times (once 200 M characters, 4 GB of
 * RSS and 600 MB of SQLite per run), conversations and workflows without end, and a job read
 * back whole. Each ends in a clear refusal or error, and another client is answered meanwhile.
 */
import { describe, expect, it } from 'vitest'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

const app = useBuiltApp({
  NUXT_SESSION_PASSWORD: 'a-size-budgets-test-password-long-enough',
  NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0',
  NUXT_LIMITS_THREADS_PER_USER: '3',
  NUXT_LIMITS_WORKFLOWS_PER_USER: '2',
})

const amplifier = {
  version: 1,
  name: 'Amplifier',
  nodes: [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output', template: '{{prompt}}'.repeat(2_000) }],
  edges: [{ from: 'start', to: 'out' }],
}

describe('size budgets', () => {
  it('ends a run whose template would repeat a long prompt past the step limit with an error naming the limit, while another client is answered', async () => {
    const attacker = new SessionClient(app.url)
    const bystander = new SessionClient(app.url)
    const saved = await attacker.post('/api/workflows', { definition: amplifier })
    expect(saved.status).toBe(201)
    const { id } = await saved.json()
    const started = await attacker.post(`/api/workflows/${id}/run`, { prompt: 'x'.repeat(100_000) })
    expect(started.status).toBe(202)
    const { jobId } = await started.json()
    const answered = await bystander.fetch('/api/threads')
    expect(answered.status).toBe(200)
    const job = await waitForJobEnd(attacker, jobId)
    expect(job.status).toBe('error')
    expect(job.workflowState!.nodeStates.out).toMatchObject({ status: 'error', error: expect.stringMatching(/longer than 200,000 characters/) })
    // What is kept and sent back is the prompt, not 200 M characters.
    const whole = await attacker.fetch(`/api/jobs/${jobId}`)
    expect((await whole.text()).length).toBeLessThan(1_000_000)
  })

  it('pages a job\'s text on GET /api/jobs/:id and refuses a bad page with 400', async () => {
    const client = new SessionClient(app.url)
    const jobId = await client.startJob({ model: 'or3/offline-demo', messages: [{ role: 'user', content: 'Write a short story' }] })
    const whole = await waitForJobEnd(client, jobId)
    expect(whole.content.length).toBeGreaterThan(20)
    expect(whole.textPage).toBeUndefined()
    const page = await client.json(`/api/jobs/${jobId}?offset=5&limit=10`)
    expect(page.content).toBe(whole.content.slice(5, 15))
    expect(page.textPage).toEqual({ offset: 5, limit: 10, contentLength: whole.content.length, reasoningLength: whole.reasoning.length })
    const bad = await client.fetch(`/api/jobs/${jobId}?limit=-1`)
    expect(bad.status).toBe(400)
    expect((await bad.json()).message).toMatch(/limit/)
  })

  it('refuses conversations and workflows past a user\'s quota with 409 saying what to do; other users go on', async () => {
    const hoarder = new SessionClient(app.url)
    const other = new SessionClient(app.url)
    for (let index = 0; index < 3; index++) expect((await hoarder.post('/api/threads', {})).status).toBe(201)
    const refused = await hoarder.post('/api/threads', {})
    expect(refused.status).toBe(409)
    expect((await refused.json()).message).toMatch(/3 conversations, the most kept per user\. Delete some/)
    expect((await other.post('/api/threads', {})).status).toBe(201)

    const simple = { version: 1, name: 'Echo', nodes: [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'out' }] }
    expect((await hoarder.post('/api/workflows', { definition: simple })).status).toBe(201)
    expect((await hoarder.post('/api/workflows', { definition: simple })).status).toBe(201)
    const full = await hoarder.post('/api/workflows', { definition: simple })
    expect(full.status).toBe(409)
    expect(await full.json()).toMatchObject({ message: expect.stringMatching(/2 saved workflows/), data: { quota: 'workflows', limit: 2 } })
  })
})
