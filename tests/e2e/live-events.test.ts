/**
 * The browser's one live connection against the built server (`GET /api/events`, `POST
 * /api/events/:streamId`): many jobs on one connection (counted as one stream), each exactly from
 * the id the browser has, someone else's jobs and connections refused like unknown ones, bad
 * changes answered 4xx naming what to fix, and another person answered meanwhile.
 */
import { createParser } from 'eventsource-parser'
import { MAX_WATCHED_JOBS } from '../../server/lib/http/live-events'
import { describe, expect, it } from 'vitest'
import { gatedTextReply, textReply, useFakeOpenRouter } from '../support/fake-openrouter'
import { JobView, SessionClient, watchJob } from '../support/job-stream-client'
import { useBuiltApp, useDataDirs } from '../support/built-app'

const MODEL = 'openai/gpt-4o-mini'
const fake = useFakeOpenRouter()
const dataDirs = useDataDirs('or3-live-events-e2e-')

const app = useBuiltApp(() => ({
  NUXT_OPENROUTER_BASE_URL: fake.url,
  NUXT_OPENROUTER_API_KEY: 'sk-or-v1-live-events-key',
  NUXT_OPENROUTER_RETRY_BASE_DELAY_MS: '10',
  NUXT_DATA_DIR: dataDirs.fresh(),
  NUXT_SESSION_PASSWORD: 'a-live-events-session-password-long-enough',
  // Two streams per person: one shared connection carries all their jobs anyway.
  NUXT_BACKGROUND_JOBS_STREAMS_PER_USER: '2',
  // Up to a full connection's worth of answers running at once (the bound test).
  NUXT_LIMITS_ROLES_GUEST_JOBS_AT_ONCE: '205',
  NUXT_BACKGROUND_JOBS_MAX_CONCURRENT_JOBS: '220',
}))

const question = (text = 'Tell me a story') => ({ model: MODEL, messages: [{ role: 'user', content: text }] })

/** An open `GET /api/events`: its frames as they come, and views of the jobs it carries. */
class LiveConnection {
  streamId = ''
  readonly frames: Array<{ event: string, data: any }> = []
  readonly views = new Map<string, JobView>()
  private readonly controller = new AbortController()
  private waiters: Array<() => void> = []

  static async open(client: SessionClient): Promise<LiveConnection> {
    const connection = new LiveConnection()
    const response = await client.fetch('/api/events', { headers: { accept: 'text/event-stream' }, signal: connection.controller.signal })
    expect(response.status).toBe(200)
    void connection.read(response)
    await connection.until(() => connection.streamId !== '')
    return connection
  }

  private async read(response: Response): Promise<void> {
    const parser = createParser({
      onEvent: (message) => {
        const data = JSON.parse(message.data)
        this.frames.push({ event: message.event ?? 'message', data })
        if (message.event === 'ready') this.streamId = data.streamId
        if (message.event === 'job') {
          const view = this.views.get(data.jobId) ?? new JobView()
          this.views.set(data.jobId, view)
          view.apply({ id: data.id, event: data.event.type, data: data.event })
        }
        for (const wake of this.waiters.splice(0)) wake()
      },
    })
    const decoder = new TextDecoder()
    try {
      for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }))
    } catch {
      // Closed by the test.
    }
  }

  /** Resolves once `condition` holds (checked on every frame). */
  until(condition: () => boolean): Promise<void> {
    return expect.poll(condition, { timeout: 30_000 }).toBe(true) as unknown as Promise<void>
  }

  close(): void {
    this.controller.abort()
  }
}

describe('one live connection per browser', () => {
  it('carries many jobs on one connection, counted as one stream, each whole and in order', async () => {
    const alice = new SessionClient(app.url)
    const live = await LiveConnection.open(alice)
    fake.script(() => textReply('Streamed over the shared connection. '.repeat(5).trim(), { pieceSize: 6, delayMs: 5 }))
    const jobs = await Promise.all(Array.from({ length: 8 }, (_, index) => alice.startJob(question(`story ${index}`))))
    const answer = await alice.post(`/api/events/${live.streamId}`, { watch: jobs.map(jobId => ({ jobId })) })
    expect(answer.status).toBe(200)
    expect(await answer.json()).toEqual({ watching: expect.any(Number) })
    await live.until(() => jobs.every(jobId => live.views.get(jobId)?.status === 'complete'))
    for (const jobId of jobs) expect(live.views.get(jobId)!.content).toBe('Streamed over the shared connection. '.repeat(5).trim())
    // A second person is answered meanwhile, and this person still has a stream to spare (one used).
    const other = new JobView()
    const spare = await watchJob(alice, jobs[0]!, other)
    expect(spare.status).toBe(200)
    live.close()
  })

  it('starts a job from the id the browser has: exactly the events after it', async () => {
    const alice = new SessionClient(app.url)
    const gated = gatedTextReply(['First part. ', 'Second part. ', 'The end.'])
    fake.script(() => gated.reply)
    const jobId = await alice.startJob(question())
    const first = await LiveConnection.open(alice)
    await alice.post(`/api/events/${first.streamId}`, { watch: [{ jobId }] })
    await first.until(() => first.views.get(jobId)?.content.includes('First part.') === true)
    const view = first.views.get(jobId)!
    const held = view.lastEventId!
    first.close()
    gated.open()
    // A new connection (a dropped one, in the browser) asks for the job from the id it had.
    const second = await LiveConnection.open(alice)
    second.views.set(jobId, view)
    const before = view.events.length
    await alice.post(`/api/events/${second.streamId}`, { watch: [{ jobId, lastEventId: held }] })
    await second.until(() => view.content.includes('Second part.'))
    gated.open()
    await second.until(() => view.status === 'complete')
    const seqs = view.events.slice(before).map(event => Number(event.id!.split('.')[0]))
    expect(seqs).toEqual(seqs.map((_, index) => Number(held.split('.')[0]) + 1 + index))
    expect(view.snapshots).toBe(1)
    expect(view.content).toBe('First part. Second part. The end.')
    second.close()
  })

  it('refuses someone else\'s job (job-gone) and connection (404), and bad changes with 400 saying what to fix', async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    fake.script(() => textReply('Private.'))
    const alicesJob = await alice.startJob(question())
    const bobs = await LiveConnection.open(bob)
    await bob.post(`/api/events/${bobs.streamId}`, { watch: [{ jobId: alicesJob }, { jobId: 'no-such-job' }] })
    await bobs.until(() => bobs.frames.filter(frame => frame.event === 'job-gone').length === 2)
    expect(bobs.frames.filter(frame => frame.event === 'job')).toEqual([])
    // Alice cannot change Bob's connection.
    const stolen = await alice.post(`/api/events/${bobs.streamId}`, { watch: [{ jobId: alicesJob }] })
    expect(stolen.status).toBe(404)
    expect((await stolen.json()).message).toMatch(/GET \/api\/events/)
    const tooMany = await bob.post(`/api/events/${bobs.streamId}`, { watch: Array.from({ length: 51 }, (_, index) => ({ jobId: `job-${index}` })) })
    expect(tooMany.status).toBe(400)
    expect((await tooMany.json()).message).toMatch(/watch/)
    const unknownField = await bob.post(`/api/events/${bobs.streamId}`, { subscribe: ['x'] })
    expect(unknownField.status).toBe(400)
    bobs.close()
  })

  it(`carries a full connection (${MAX_WATCHED_JOBS} running jobs), refuses one more with 409, and answers another person meanwhile`, async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    const gates: Array<ReturnType<typeof gatedTextReply>> = []
    fake.script((record) => {
      const asked = String(record.body.messages.at(-1)?.content ?? '')
      if (asked.startsWith('bob')) return textReply('Answered while a connection was full.')
      const gated = gatedTextReply([`Start of ${asked}. `, `End of ${asked}.`])
      gates.push(gated)
      return gated.reply
    })
    const live = await LiveConnection.open(alice)
    const jobs: string[] = []
    for (let index = 0; index < MAX_WATCHED_JOBS; index += 20) {
      jobs.push(...await Promise.all(Array.from({ length: 20 }, (_, offset) => alice.startJob(question(`story ${index + offset}`)))))
    }
    for (let index = 0; index < jobs.length; index += 50) {
      const answer = await alice.post(`/api/events/${live.streamId}`, { watch: jobs.slice(index, index + 50).map(jobId => ({ jobId })) })
      expect(answer.status).toBe(200)
    }
    const one = await alice.startJob(question('story one too many'))
    const full = await alice.post(`/api/events/${live.streamId}`, { watch: [{ jobId: one }] })
    expect(full.status).toBe(409)
    expect((await full.json()).message).toMatch(new RegExp(`at most ${MAX_WATCHED_JOBS} jobs; stop watching some first`))
    await live.until(() => jobs.every(jobId => live.views.get(jobId)?.content.startsWith('Start of')))

    // Another person starts an answer and reads it to its end while the connection is full.
    const bobsJob = await bob.startJob(question('bob asks'))
    const bobsView = new JobView()
    await watchJob(bob, bobsJob, bobsView)
    expect(bobsView.status).toBe('complete')
    expect(bobsView.content).toBe('Answered while a connection was full.')

    for (const gate of gates) gate.openAll()
    await live.until(() => jobs.every(jobId => live.views.get(jobId)?.status === 'complete'))
    jobs.forEach((jobId, index) => expect(live.views.get(jobId)!.content).toBe(`Start of story ${index}. End of story ${index}.`))
    live.close()
  })
})
