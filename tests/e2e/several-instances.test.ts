/**
 * Several instances for real (issue 34): two built servers on one Convex deployment, the
 * project's own `convex/` functions served over Convex's HTTP API by `convex-test` with Convex's
 * transaction limits on (tests/support/convex-http-backend.ts), so every store call crosses a
 * process boundary. A session works on both; a viewer on B follows A's job whole; an abort on B
 * stops A's job; a kill -9 of A is taken over by B with the answer stored once; caps on running
 * answers hold across the two; a job watched to its end from B files no "answer is ready"; many
 * answers at once with a 50 ms round trip to the store all end whole. With OR3_TEST_CONVEX_URL and
 * OR3_TEST_CONVEX_SECRET set, the same runs against a real deployment (README, "Testing several instances").
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { gatedTextReply, textReply, useFakeOpenRouter } from '../support/fake-openrouter'
import { JobView, registerAccount, SessionClient, waitForJobEnd, watchJob } from '../support/job-stream-client'
import { ask, citedLinks, encode, indexed, passageAt, upload } from '../support/knowledge-client'
import type { KnowledgeBaseView, KnowledgeDocumentView } from '../../shared/types/knowledge'
import { useAppServers, type RunningApp } from '../support/built-app'
import { startTestDeployment, type ConvexHttpBackend } from '../support/convex-http-backend'

const MODEL = 'openai/gpt-4o-mini'
const fake = useFakeOpenRouter()
let convex: ConvexHttpBackend

beforeAll(async () => {
  convex = await startTestDeployment()
})
afterAll(async () => {
  await convex?.close()
})

const servers = useAppServers(() => ({
  NUXT_OPENROUTER_BASE_URL: fake.url,
  NUXT_OPENROUTER_API_KEY: 'sk-or-v1-several-instances-key',
  NUXT_OPENROUTER_RETRY_BASE_DELAY_MS: '10',
  NUXT_SESSION_PASSWORD: 'a-several-instances-session-password-long-enough',
  NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER: 'convex',
  NUXT_CONVEX_URL: convex.url,
  NUXT_CONVEX_SERVER_SECRET: convex.secret,
  NUXT_LIMITS_ROLES_GUEST_JOBS_AT_ONCE: '10',
  NUXT_THREADS_GENERATE_TITLES: 'false',
  // Knowledge bases searched by meaning too: the fake upstream's embeddings, vectors in Convex's vector index.
  NUXT_KNOWLEDGE_EMBEDDINGS_MODEL: 'fake/embed',
}))

const question = (text = 'Tell me a story') => ({ model: MODEL, messages: [{ role: 'user', content: text }] })

/** A client signed in on `first` that carries the same session to `second`. */
function sameSession(first: RunningApp, second: RunningApp): [SessionClient, SessionClient] {
  const a = new SessionClient(first.url)
  const b = new SessionClient(second.url)
  Object.defineProperty(b, 'cookie', { get: () => a.cookie, set: (value: string) => { a.cookie = value } })
  return [a, b]
}

describe('two instances on one Convex deployment', () => {
  let a: RunningApp
  let b: RunningApp

  beforeAll(async () => {
    [a, b] = await Promise.all([servers.start(), servers.start()])
  })

  it('a viewer on B follows a job A runs, whole and in order', async () => {
    const [onA, onB] = sameSession(a, b)
    const gated = gatedTextReply(['First part. ', 'Second part. ', 'The end.'])
    fake.script(() => gated.reply)
    const jobId = await onA.startJob(question())
    const view = new JobView()
    const watching = watchJob(onB, jobId, view)
    await expect.poll(() => view.content).toContain('First part.')
    gated.open()
    await expect.poll(() => view.content).toContain('Second part.')
    gated.open()
    await watching
    expect(view.status).toBe('complete')
    expect(view.content).toBe('First part. Second part. The end.')
    expect((await waitForJobEnd(onB, jobId)).content).toBe('First part. Second part. The end.')
    expect(convex.calls.failures).toEqual([])
  })

  it('a viewer that watched on A resumes on B from the id it got there: exactly the events after it', async () => {
    const [onA, onB] = sameSession(a, b)
    const gated = gatedTextReply(['First part. ', 'Second part. ', 'The end.'])
    fake.script(() => gated.reply)
    const jobId = await onA.startJob(question())
    const view = new JobView()
    await watchJob(onA, jobId, view, { until: seen => seen.content.includes('First part.') })
    const held = Number(view.lastEventId!.split('.')[0])
    // B reads the store: once it has kept that event, the viewer moves over.
    await expect.poll(async () => (await onB.json(`/api/jobs/${jobId}`)).eventSeq ?? 0).toBeGreaterThanOrEqual(held)
    gated.open()
    const before = view.events.length
    const watching = watchJob(onB, jobId, view)
    await expect.poll(() => view.content).toContain('Second part.')
    gated.open()
    await watching
    const after = view.events.slice(before)
    expect(after[0]!.event).not.toBe('snapshot')
    expect(after.map(event => Number(event.id!.split('.')[0]))).toEqual(after.map((_, index) => held + 1 + index))
    expect(view.snapshots).toBe(1)
    expect(view.content).toBe('First part. Second part. The end.')
    expect(view.status).toBe('complete')
    expect(convex.calls.failures).toEqual([])
  })

  it('an abort on B stops the job A runs', async () => {
    const [onA, onB] = sameSession(a, b)
    const gated = gatedTextReply(['Started. ', 'Never sent.'])
    fake.script(() => gated.reply)
    const jobId = await onA.startJob(question())
    await expect.poll(async () => (await onA.json(`/api/jobs/${jobId}`)).content).toContain('Started.')
    expect(await onB.json(`/api/jobs/${jobId}/abort`, { method: 'POST' })).toEqual({ jobId, aborted: true, status: 'aborted' })
    const job = await waitForJobEnd(onA, jobId)
    expect(job).toMatchObject({ status: 'aborted', content: 'Started. ' })
    gated.openAll()
  })

  it('many answers at once on A with a 50 ms round trip to the store all end whole, and a viewer on B sees one whole', async () => {
    const [onA, onB] = sameSession(a, b)
    await onA.json('/api/jobs')
    const answer = 'A long enough answer, streamed in many small pieces so that progress is written often. '.repeat(4)
    fake.script(() => textReply(answer, { pieceSize: 8, delayMs: 5 }))
    convex.setDelay(50)
    try {
      const pulsesBefore = convex.calls.mutation.get('jobs:pulse') ?? 0
      const ids = await Promise.all(Array.from({ length: 8 }, () => onA.startJob(question())))
      const view = new JobView()
      await watchJob(onB, ids[0]!, view)
      const jobs = await Promise.all(ids.map(id => waitForJobEnd(onA, id, 120_000)))
      expect(jobs.map(job => job.content)).toEqual(ids.map(() => answer))
      expect(view.content).toBe(answer)
      // Progress went in heartbeats of several jobs each, not one write per job per flush.
      if (!convex.remote) {
        expect((convex.calls.mutation.get('jobs:pulse') ?? 0) - pulsesBefore).toBeGreaterThan(0)
        expect(convex.calls.mutation.get('jobs:appendProgress') ?? 0).toBe(0)
      }
    } finally {
      convex.setDelay(0)
    }
  })

  it('files "your answer is ready" only for a job nobody watched, on any instance', async () => {
    const [onA, onB] = sameSession(a, b)
    await onA.json('/api/jobs')
    const gated = gatedTextReply(['Watched from ', 'the other instance.'])
    fake.script(() => gated.reply)
    const watched = await onA.startJob(question())
    const view = new JobView()
    const watching = watchJob(onB, watched, view)
    // B has told the store someone watches there before the answer goes on to its end.
    await expect.poll(() => convex.query('jobs:remoteViewers', { jobId: watched, owner: 'nobody' })).toBe(1)
    gated.open()
    await watching
    expect(view.status).toBe('complete')
    fake.script(() => textReply('Nobody watched this one.', { pieceSize: 4 }))
    const unwatched = await onA.startJob(question())
    await waitForJobEnd(onA, unwatched)
    await expect.poll(async () => (await onB.json('/api/notifications')).notifications.map((note: { jobId: string }) => note.jobId)).toContain(unwatched)
    expect((await onB.json('/api/notifications')).notifications.map((note: { jobId: string }) => note.jobId)).not.toContain(watched)
  })

  it('keeps knowledge bases on Convex: a document added on A is indexed once, found on B by meaning and by words, replaced, and deleted', async () => {
    const kim = await registerAccount(a.url, 'Kim')
    const kimOnB = new SessionClient(b.url)
    kimOnB.cookie = kim.cookie
    const created = await kim.post('/api/knowledge', { name: 'Fleet' })
    expect(created.status).toBe(201)
    const base: KnowledgeBaseView = await created.json()
    const fleet = (cars: string) => encode(`# Fleet\n\n## Cars\n\n${cars}\n\n## Pay\n\nSalaries are paid on the last day of the month.`)
    expect((await upload(kim, base.id, 'fleet.md', fleet('Company cars are returned with a full tank.'))).status).toBe(202)
    const [document] = await indexed(kimOnB, base.id, 1)
    expect(document).toMatchObject({ name: 'fleet.md', status: 'ready', passages: 2 })

    // No word of this question is in the passage: only its vector (car = automobile) finds it.
    const byMeaning = await ask(kimOnB, 'What do I do with the automobile?', [base.id])
    expect((await passageAt(kim, citedLinks(byMeaning.content)[0]!)).passage.text).toContain('Company cars are returned with a full tank.')
    const byWords = await ask(kimOnB, 'When are salaries paid?', [base.id])
    expect((await passageAt(kimOnB, citedLinks(byWords.content)[0]!)).passage.text).toContain('last day of the month')

    // A changed file is a new version: its passages replace the old ones, on both instances.
    expect((await upload(kimOnB, base.id, 'fleet.md', fleet('Pool cars are booked online.'))).status).toBe(202)
    await expect.poll(async () => (await kim.json<KnowledgeDocumentView>(`/api/knowledge/${base.id}/documents/${document!.id}`)).passages.map(passage => passage.text).join(' '), { timeout: 60_000 }).toContain('Pool cars are booked online.')
    const replaced = await ask(kim, 'What do I do with the automobile?', [base.id])
    expect(replaced.content).not.toContain('full tank')
    expect((await passageAt(kim, citedLinks(replaced.content)[0]!)).passage.text).toContain('Pool cars are booked online.')

    expect((await kim.fetch(`/api/knowledge/${base.id}`, { method: 'DELETE' })).status).toBe(204)
    expect((await kimOnB.fetch(`/api/knowledge/${base.id}`)).status).toBe(404)
  }, 120_000)

  it('stays within Convex\'s limits in every call', () => {
    expect(convex.calls.failures).toEqual([])
  })
})

describe('two instances with a short lease', () => {
  let a: RunningApp
  let b: RunningApp

  beforeAll(async () => {
    // Guests may run two answers at once, counted across both instances.
    const env = { NUXT_CONVEX_LEASE_MS: '2000', NUXT_LIMITS_ROLES_GUEST_JOBS_AT_ONCE: '2' }
    ;[a, b] = await Promise.all([servers.start(env), servers.start(env)])
  })

  it('holds a user\'s cap on running answers across instances', async () => {
    const [onA, onB] = sameSession(a, b)
    await onA.json('/api/jobs')
    const gated = gatedTextReply(['Holding a slot. ', 'Done.'])
    fake.script(() => gated.reply)
    const first = await onA.startJob(question())
    const second = await onB.startJob(question())
    const refused = await onA.post('/api/openrouter/stream', { ...question(), _background: true })
    expect(refused.status).toBe(429)
    expect(await refused.json()).toMatchObject({ data: { scope: 'user', limit: 2 } })
    expect((await onB.post('/api/openrouter/stream', { ...question(), _background: true })).status).toBe(429)
    gated.openAll()
    await Promise.all([waitForJobEnd(onA, first), waitForJobEnd(onB, second)])
    fake.script(() => textReply('A slot was free again.'))
    expect((await waitForJobEnd(onB, await onB.startJob(question()))).content).toBe('A slot was free again.')
  })

  it('resumes on B a job whose instance was killed (kill -9), with the whole answer once', async () => {
    const [onA, onB] = sameSession(a, b)
    await onA.json('/api/jobs')
    const answer = 'The answer, written whole by the instance that took the job over.'
    let calls = 0
    const gated = gatedTextReply(['Half an answer from A, ', 'never finished.'])
    fake.script(() => calls++ === 0 ? gated.reply : textReply(answer, { pieceSize: 6 }))
    const jobId = await onA.startJob(question())
    await expect.poll(async () => (await onB.json(`/api/jobs/${jobId}`)).content).toContain('Half an answer')
    await a.stop('SIGKILL')
    const job = await waitForJobEnd(onB, jobId, 60_000)
    expect(job).toMatchObject({ status: 'complete', content: answer, resumeCount: 1 })
    expect(calls).toBe(2)
    gated.openAll()
  })
})
