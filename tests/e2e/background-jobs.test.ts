import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { describe, expect, it } from 'vitest'
import { roleChunk } from '../../server/lib/openrouter/chunks'
import { fakeChunkMeta, textReply, toolCallReply, useFakeOpenRouter, type FakeReply } from '../support/fake-openrouter'
import { JobView, SessionClient, consumeEvents, waitForJobEnd, watchJob } from '../support/job-stream-client'
import { useAppServers, useBuiltApp, useDataDirs } from '../support/built-app'

const MODEL = 'openai/gpt-4o-mini'
const ANSWER = 'Background jobs keep streaming on the server after the tab is gone. '.repeat(6).trim()
const question = (content = 'Tell me about background jobs') => ({ model: MODEL, messages: [{ role: 'user', content }] })
/** A reply that streams for a while (about 1.3 s). */
const slowAnswer = (): FakeReply => textReply(ANSWER, { pieceSize: 4, delayMs: 12 })
/** A reply that opens and then never sends another byte. */
const stalledReply = (): FakeReply => ({ type: 'stream', steps: [{ chunk: roleChunk(fakeChunkMeta) }, { stall: true }] })

const fake = useFakeOpenRouter()
const dataDirs = useDataDirs('or3-jobs-e2e-')
const servers = useAppServers()

function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NUXT_OPENROUTER_BASE_URL: fake.url,
    NUXT_OPENROUTER_API_KEY: 'sk-or-v1-server-test-key',
    NUXT_OPENROUTER_RETRY_BASE_DELAY_MS: '10',
    NUXT_DATA_DIR: dataDirs.fresh(),
    NUXT_SESSION_PASSWORD: 'a-test-session-password-that-is-long-enough',
    ...extra,
  }
}

describe('background jobs on one server', () => {
  // Fixed-interval batching, so the batching assertion below holds on an idle test server (the
  // default batches only under load; tests/unit/jobs/live-hub.test.ts pins both).
  const app = useBuiltApp(() => serverEnv({ NUXT_LIMITS_ROLES_GUEST_JOBS_AT_ONCE: '2', NUXT_BACKGROUND_JOBS_MAX_CONCURRENT_JOBS: '3', NUXT_BACKGROUND_JOBS_SSE_BATCHING_ADAPTIVE: 'false' }))
  let alice: SessionClient
  let bob: SessionClient

  const newClients = () => {
    alice = new SessionClient(app.url)
    bob = new SessionClient(app.url)
  }

  it('answers a background start at once and finishes the job with nobody watching, then leaves a notification', async () => {
    newClients()
    fake.script(() => slowAnswer())
    const thread = await (await alice.post('/api/threads', {})).json() as { id: string }
    // Another person's conversation is as unknown as an id never made.
    expect((await bob.post('/api/openrouter/stream', { ...question(), _background: true, _threadId: thread.id })).status).toBe(404)
    const started = await alice.post('/api/openrouter/stream', { ...question(), _background: true, _threadId: thread.id, _messageId: 'message-1' })
    expect(started.status).toBe(202)
    const { jobId, status } = await started.json() as { jobId: string, status: string }
    expect(status).toBe('streaming')

    const job = await waitForJobEnd(alice, jobId)
    expect(job).toMatchObject({ status: 'complete', content: ANSWER, finishReason: 'stop', threadId: thread.id, messageId: 'message-1', model: MODEL })
    expect(job).not.toHaveProperty('request')
    expect(job).not.toHaveProperty('checkpoint')

    const { notifications } = await alice.json('/api/notifications?unread=true')
    expect(notifications).toEqual([expect.objectContaining({ jobId, kind: 'job-complete', threadId: thread.id, title: 'Your answer is ready' })])
    expect(notifications[0].body).toContain('Background jobs keep streaming')
    expect(await alice.json('/api/notifications/read', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ids: [notifications[0].id] }) })).toEqual({ marked: 1 })
    expect((await alice.json('/api/notifications?unread=true')).notifications).toEqual([])
    expect((await bob.json('/api/notifications')).notifications).toEqual([])

    const { jobs } = await alice.json('/api/jobs')
    // Named in the list by what was asked (its first line), not only by the model.
    expect(jobs[0]).toMatchObject({ id: jobId, status: 'complete', contentLength: ANSWER.length, prompt: 'Tell me about background jobs' })
    expect(jobs[0]).not.toHaveProperty('content')
  })

  it('keeps running when the viewer that started watching disconnects mid-stream', async () => {
    newClients()
    fake.script(() => slowAnswer())
    const jobId = await alice.startJob(question())
    const view = new JobView()
    await watchJob(alice, jobId, view, { until: seen => seen.content.length > 40 })
    expect(view.status).toBe('streaming')
    const job = await waitForJobEnd(alice, jobId)
    expect(job.status).toBe('complete')
    expect(job.content).toBe(ANSWER)
  })

  it('shows two viewers the same text, in the same events', async () => {
    newClients()
    fake.script(() => slowAnswer())
    const jobId = await alice.startJob(question())
    const first = new JobView()
    const second = new JobView()
    await Promise.all([watchJob(alice, jobId, first), watchJob(alice, jobId, second)])
    for (const view of [first, second]) {
      expect(view.status).toBe('complete')
      expect(view.content).toBe(ANSWER)
      expect(view.events.at(-1)).toMatchObject({ event: 'status', data: { status: 'complete', contentLength: ANSWER.length } })
    }
    // Both got the same batched deltas (fan-out, not two separate streams).
    const deltaIds = (view: JobView) => view.events.filter(event => event.event === 'delta').map(event => event.id)
    const shared = deltaIds(first).filter(id => deltaIds(second).includes(id))
    expect(shared.length).toBeGreaterThan(3)
    // Batching: far fewer delta events than upstream chunks.
    expect(deltaIds(first).length).toBeLessThan(Math.ceil(ANSWER.length / 4))
  })

  it('continues a stream after a reconnect with Last-Event-ID without a gap or a duplicate', async () => {
    newClients()
    fake.script(() => slowAnswer())
    const jobId = await alice.startJob(question())
    const view = new JobView()
    await watchJob(alice, jobId, view, { until: seen => seen.content.length > 60 })
    const seenBefore = view.content
    // `<seq>.<attempt>`: the event's number in the job's run log, and the run that wrote it.
    expect(view.lastEventId).toMatch(/^\d+\.0$/)
    await new Promise(resolve => setTimeout(resolve, 150))
    await watchJob(alice, jobId, view)
    expect(view.content).toBe(ANSWER)
    expect(view.content.startsWith(seenBefore)).toBe(true)
    expect(view.snapshots).toBe(1)
    expect(view.status).toBe('complete')

    // Reconnecting after the end replays nothing new: just the end of the stream.
    const again = new JobView()
    await watchJob(alice, jobId, again)
    expect(again.content).toBe(ANSWER)
    expect(again.events.map(event => event.event)).toEqual(['snapshot', 'status'])
  })

  it('reconnects with ?lastEventId= too, and an unknown id gets a fresh snapshot', async () => {
    newClients()
    fake.script(() => slowAnswer())
    const jobId = await alice.startJob(question())
    const view = new JobView()
    await watchJob(alice, jobId, view, { until: seen => seen.content.length > 30 })
    const response = await alice.fetch(`/api/jobs/${jobId}/stream?lastEventId=${view.lastEventId}`)
    await consumeEvents(response, view)
    expect(view.content).toBe(ANSWER)
    expect(view.snapshots).toBe(1)

    const stale = new JobView()
    stale.lastEventId = 'deadbeef0000-3'
    await watchJob(alice, jobId, stale)
    expect(stale.events[0]!.event).toBe('snapshot')
    expect(stale.content).toBe(ANSWER)

    // An id no run of this job numbered (a view that diverged) is told so with its snapshot.
    const diverged = new JobView()
    diverged.lastEventId = '999999.0'
    fake.script(() => slowAnswer())
    const running = await alice.startJob(question())
    await watchJob(alice, running, diverged)
    expect(diverged.events[0]).toMatchObject({ event: 'snapshot', data: { reason: 'diverged' } })
    expect(diverged.content).toBe(ANSWER)
  })

  it('aborts a job: the upstream request stops, the viewers are told, and a second abort changes nothing', async () => {
    newClients()
    fake.script(() => stalledReply())
    const before = fake.requests.length
    const jobId = await alice.startJob(question())
    const view = new JobView()
    const watching = watchJob(alice, jobId, view)
    await new Promise(resolve => setTimeout(resolve, 200))

    expect(await alice.json(`/api/jobs/${jobId}/abort`, { method: 'POST' })).toEqual({ jobId, aborted: true, status: 'aborted' })
    await watching
    expect(view.status).toBe('aborted')
    expect(await fake.settled(before)).toMatchObject({ clientDisconnected: true })
    expect(await alice.json(`/api/jobs/${jobId}/abort`, { method: 'POST' })).toEqual({ jobId, aborted: false, status: 'aborted' })
    expect(await alice.json(`/api/jobs/${jobId}`)).toMatchObject({ status: 'aborted', finishReason: 'aborted' })
    // The user stopped it themselves: no notification.
    expect((await alice.json('/api/notifications')).notifications).toEqual([])
  })

  it('aborts a foreground answer when its response is closed', async () => {
    newClients()
    fake.script(() => slowAnswer())
    const controller = new AbortController()
    const response = await alice.post('/api/openrouter/stream', question())
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const view = new JobView()
    await consumeEvents(response, view, controller, seen => seen.content.length > 20)
    const jobId = view.job!.id
    const job = await waitForJobEnd(alice, jobId)
    expect(job.status).toBe('aborted')
    expect(job.content.length).toBeLessThan(ANSWER.length)
  })

  it('hides a job from everyone but its owner: 404 on every route, like an unknown id', async () => {
    newClients()
    fake.script(() => slowAnswer())
    const jobId = await alice.startJob(question())
    const unknown = await bob.fetch('/api/jobs/00000000-0000-0000-0000-000000000000')
    expect(unknown.status).toBe(404)
    const unknownMessage = (await unknown.json()).message
    for (const [path, method] of [[`/api/jobs/${jobId}`, 'GET'], [`/api/jobs/${jobId}/stream`, 'GET'], [`/api/jobs/${jobId}/abort`, 'POST']] as const) {
      const response = await bob.fetch(path, { method })
      expect(response.status, `${method} ${path}`).toBe(404)
      expect((await response.json()).message).toBe(unknownMessage)
    }
    expect((await bob.json('/api/jobs')).jobs).toEqual([])
    const job = await waitForJobEnd(alice, jobId)
    expect(job.status).toBe('complete')
  })

  it('caps running jobs per user (429) and per server (503), with Retry-After and a clear message', async () => {
    newClients()
    const carol = new SessionClient(app.url)
    fake.script(() => stalledReply())
    const running = [await alice.startJob(question()), await alice.startJob(question())]
    const refused = await alice.post('/api/openrouter/stream', { ...question(), _background: true })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toBe('5')
    expect((await refused.json()).message).toMatch(/You already have 2 answers running.*stop one/)

    running.push(await bob.startJob(question()))
    const full = await carol.post('/api/openrouter/stream', { ...question(), _background: true })
    expect(full.status).toBe(503)
    expect(full.headers.get('retry-after')).toBe('5')
    expect((await full.json()).message).toMatch(/maximum of 3 jobs/)

    await Promise.all(running.slice(0, 2).map(id => alice.json(`/api/jobs/${id}/abort`, { method: 'POST' })))
    await bob.json(`/api/jobs/${running[2]}/abort`, { method: 'POST' })
    fake.script(() => slowAnswer())
    expect(await carol.startJob(question())).toBeTypeOf('string')
  })

  it('answers bad requests with 4xx and a message that says what to fix', async () => {
    newClients()
    const cases: Array<[string, RequestInit, number, RegExp]> = [
      ['/api/openrouter/stream', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": ' }, 400, /not valid JSON/],
      ['/api/openrouter/stream', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }) }, 400, /model/],
      ['/api/openrouter/stream', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [] }) }, 400, /send at least one message/],
      ['/api/openrouter/stream', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: MODEL, messages: [{ role: 'wizard', content: 'hi' }] }) }, 400, /messages/],
      ['/api/openrouter/stream', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...question(), _tools: 'calculate' }) }, 400, /_tools/],
      ['/api/openrouter/stream', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...question(), _background: 'yes' }) }, 400, /_background/],
      ['/api/openrouter/stream', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...question('x'.repeat(1_100_000)) }) }, 413, /KiB/],
      ['/api/jobs?limit=lots', {}, 400, /limit/],
      ['/api/jobs?status=finished', {}, 400, /status/],
      ['/api/notifications/read', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ids: 'all' }) }, 400, /ids/],
      ['/api/jobs/..%2F..%2Fetc/stream', {}, 404, /No such job/],
    ]
    for (const [path, init, status, message] of cases) {
      const response = await alice.fetch(path, init)
      expect(response.status, `${init.method ?? 'GET'} ${path}`).toBe(status)
      expect((await response.json()).message, path).toMatch(message)
    }
  })
})

describe('a job that stops making progress', () => {
  it('is failed with a timeout error after jobTimeoutMs of silence, and its upstream request is stopped', async () => {
    const app = await servers.start(serverEnv({ NUXT_BACKGROUND_JOBS_JOB_TIMEOUT_MS: '1000' }))
    try {
      const client = new SessionClient(app.url)
      fake.script(() => stalledReply())
      const before = fake.requests.length
      const jobId = await client.startJob(question())
      const job = await waitForJobEnd(client, jobId)
      expect(job).toMatchObject({ status: 'error', finishReason: 'timeout', error: { kind: 'timeout', message: expect.stringMatching(/no progress/) } })
      expect(await fake.settled(before)).toMatchObject({ clientDisconnected: true })
      const { notifications } = await client.json('/api/notifications')
      expect(notifications).toEqual([expect.objectContaining({ jobId, kind: 'job-error' })])
    } finally {
      await app.stop()
    }
  })
})

describe('restart recovery', () => {
  const CALC_RESULT = '{"expression":"6*7","result":42}'
  const TOOL_ANSWER = 'Six times seven is 42, as the calculator confirmed. '.repeat(5).trim()

  /** Round 1 asks for `calculate`; any later request answers slowly with the final text. */
  function toolThenSlowAnswer(): void {
    fake.script(request => request.body.messages.some(message => message.role === 'tool')
      ? textReply(TOOL_ANSWER, { pieceSize: 3, delayMs: 15 })
      : toolCallReply([{ id: 'call_calc_1', name: 'calculate', arguments: '{"expression":"6*7"}' }]))
  }

  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`finishes a job with the complete answer after ${signal} mid-answer and a restart, without re-running its tool round`, async () => {
      const env = serverEnv()
      const first = await servers.start(env)
      const client = new SessionClient(first.url)
      toolThenSlowAnswer()
      const before = fake.requests.length
      const jobId = await client.startJob(question('What is 6*7?'))
      const view = new JobView()
      await watchJob(client, jobId, view, { until: seen => seen.content.length > 30 })
      await first.stop(signal)
      if (signal === 'SIGKILL') expect(first.process.signalCode).toBe('SIGKILL')
      else expect(await first.exited).toBe(0)

      const second = await servers.start(env)
      try {
        const resumed = new SessionClient(second.url)
        resumed.cookie = client.cookie
        const job = await waitForJobEnd(resumed, jobId)
        expect(job).toMatchObject({ status: 'complete', content: TOOL_ANSWER, resumeCount: 1 })
        expect(job.toolRounds).toEqual([{ round: 1, toolCalls: [expect.objectContaining({ id: 'call_calc_1', name: 'calculate', result: CALC_RESULT })] }])

        const requests = fake.requests.slice(before).filter(request => request.path.endsWith('/chat/completions'))
        // Round 1 (tool call), round 2 (interrupted), round 2 again after the restart: never round 1 again.
        expect(requests).toHaveLength(3)
        const resumedRequest = requests[2]!.body
        expect(resumedRequest.messages.map(message => message.role)).toEqual(['user', 'assistant', 'tool'])
        expect(resumedRequest.messages[2]).toMatchObject({ role: 'tool', tool_call_id: 'call_calc_1', content: CALC_RESULT })

        // A viewer that reconnects after the job ended gets the whole answer.
        await watchJob(resumed, jobId, view)
        expect(view.content).toBe(TOOL_ANSWER)
        expect(view.status).toBe('complete')
      } finally {
        await second.stop()
      }
    })
  }

  it('answers one question with two models side by side, each its own job: both finish across kill -9, and the conversation goes on from the one chosen', async () => {
    const OTHER = 'anthropic/claude-sonnet-4'
    const env = serverEnv()
    const first = await servers.start(env)
    const client = new SessionClient(first.url)
    // Each model answers in words of its own, slowly enough to be killed mid-answer.
    const answerOf = (model: string) => `${model} says: ${'learn the bowline first, then the clove hitch. '.repeat(8).trim()}`
    fake.script(request => textReply(answerOf(String(request.body.model)), { pieceSize: 4, delayMs: 12 }))
    const before = fake.requests.length
    const thread = await (await client.post('/api/threads', {})).json() as { id: string }

    // Refused before anything is stored: the same model twice, or more than four in all.
    expect((await client.post(`/api/threads/${thread.id}/messages`, { content: 'Which knot?', model: MODEL, compareWith: [MODEL] })).status).toBe(400)
    const many = await client.post(`/api/threads/${thread.id}/messages`, { content: 'Which knot?', model: MODEL, compareWith: ['a/1', 'b/2', 'c/3', 'd/4'] })
    expect(many.status).toBe(400)
    expect((await many.json()).message).toMatch(/at most 3 more models/)
    expect((await client.json(`/api/threads/${thread.id}`)).messages).toEqual([])

    const sent = await client.post(`/api/threads/${thread.id}/messages`, { content: 'Which knot should I learn first?', model: MODEL, compareWith: [OTHER] })
    expect(sent.status).toBe(202)
    const body = await sent.json() as { jobId: string, assistantMessage: { id: string }, alternatives: Array<{ jobId: string, assistantMessage: { id: string, model: string } }> }
    expect(body.alternatives).toEqual([expect.objectContaining({ jobId: expect.any(String), assistantMessage: expect.objectContaining({ model: OTHER }) })])
    const jobIds = [body.jobId, body.alternatives[0]!.jobId]
    const answerIds = [body.assistantMessage.id, body.alternatives[0]!.assistantMessage.id]
    // Each model's request reached the upstream, with the same question.
    const requests = () => fake.requests.slice(before).filter(request => request.path.endsWith('/chat/completions'))
    await expect.poll(() => requests().map(request => request.body.model).sort()).toEqual([OTHER, MODEL].sort())
    for (const request of requests()) expect(request.body.messages.at(-1)).toEqual({ role: 'user', content: 'Which knot should I learn first?' })
    const view = new JobView()
    await watchJob(client, jobIds[1]!, view, { until: seen => seen.content.length > 30 })
    await first.stop('SIGKILL')

    const second = await servers.start(env)
    try {
      const resumed = new SessionClient(second.url)
      resumed.cookie = client.cookie
      for (const [index, model] of [MODEL, OTHER].entries()) {
        expect(await waitForJobEnd(resumed, jobIds[index]!), model).toMatchObject({ status: 'complete', content: answerOf(model), model })
      }
      // The conversation shows both answers side by side, the first model's on view.
      const shown = await resumed.json(`/api/threads/${thread.id}`)
      const last = shown.messages.at(-1)
      expect(last.id).toBe(answerIds[0])
      expect(last.sideBySide.map((answer: { id: string, model: string, content: string }) => [answer.id, answer.model, answer.content])).toEqual([[answerIds[0], MODEL, answerOf(MODEL)], [answerIds[1], OTHER, answerOf(OTHER)]])

      // Continue with the other model's answer: the next question is asked with it as the history.
      const chosen = await resumed.fetch(`/api/threads/${thread.id}/branch`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messageId: answerIds[1] }) })
      expect(chosen.status).toBe(200)
      expect((await chosen.json()).messages.at(-1)).toMatchObject({ id: answerIds[1], sideBySide: expect.any(Array) })
      const next = await (await resumed.post(`/api/threads/${thread.id}/messages`, { content: 'And after that?', model: MODEL })).json() as { jobId: string }
      await waitForJobEnd(resumed, next.jobId)
      const followUp = requests().filter(request => request.body.messages.at(-1)?.content === 'And after that?')
      expect(followUp).toHaveLength(1)
      expect(followUp[0]!.body.messages.map(message => [message.role, message.content])).toEqual([['user', 'Which knot should I learn first?'], ['assistant', answerOf(OTHER)], ['user', 'And after that?']])
      // The turn now reads as the chosen answer (the other a version of it), the new answer last and alone.
      const after = await resumed.json(`/api/threads/${thread.id}`)
      expect(after.messages.map((message: { id: string }) => message.id).slice(0, 2)).toEqual([expect.any(String), answerIds[1]])
      expect(after.messages[1].versions).toEqual({ ids: answerIds, index: 1 })
      expect(after.messages.at(-1).sideBySide).toBeUndefined()
    } finally {
      await second.stop()
    }
  })

  it('resumes a viewer exactly across kill -9: the events after its id, numbered on, the restart\'s rewind among them', async () => {
    const env = serverEnv()
    const first = await servers.start(env)
    const client = new SessionClient(first.url)
    toolThenSlowAnswer()
    const jobId = await client.startJob(question('What is 6*7?'))
    const view = new JobView()
    await watchJob(client, jobId, view, { until: seen => seen.content.length > 30 })
    const held = view.lastEventId!
    const heldSeq = Number(held.split('.')[0])
    // Once the store has kept the event the viewer last got, the server dies.
    const db = new BetterSqlite3(join(env.NUXT_DATA_DIR!, 'or3.sqlite'), { readonly: true })
    const storedSeq = () => (db.prepare('SELECT event_seq FROM background_jobs WHERE id = ?').get(jobId) as { event_seq: number }).event_seq
    try {
      while (storedSeq() < heldSeq) await new Promise(resolve => setTimeout(resolve, 20))
    } finally {
      db.close()
    }
    await first.stop('SIGKILL')

    const second = await servers.start(env)
    try {
      const resumed = new SessionClient(second.url)
      resumed.cookie = client.cookie
      const before = view.events.length
      // As EventSource does: reconnect with the last id until the job ends (before the job is
      // resumed here, a stream gives what the store kept and asks to come back).
      for (let attempt = 0; attempt < 50 && view.status !== 'complete'; attempt++) await watchJob(resumed, jobId, view)
      const after = view.events.slice(before)
      // No substitute snapshot, no gap, no repeat: every id after the held one, in order.
      const seqs = after.map(event => Number(event.id!.split('.')[0]))
      expect(seqs).toEqual(seqs.map((_, index) => heldSeq + 1 + index))
      // The resumed run (attempt 1) starts with its snapshot, in the log like any event.
      const restart = after.find(event => event.id!.endsWith('.1'))!
      expect(restart).toMatchObject({ event: 'snapshot', data: { reason: 'resumed' } })
      expect(view.content).toBe(TOOL_ANSWER)
      expect(view.status).toBe('complete')
      expect(await waitForJobEnd(resumed, jobId)).toMatchObject({ status: 'complete', content: TOOL_ANSWER, resumeCount: 1 })
    } finally {
      await second.stop()
    }
  })
})
