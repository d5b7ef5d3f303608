import { getFunctionName } from 'convex/server'
import { convexTest } from 'convex-test'
import { beforeEach, describe, expect, it, vi } from 'vitest'
import schema from '../../../convex/schema'
import { BackgroundJobManager } from '../../../server/lib/jobs/manager'
import { JobLiveHub } from '../../../server/lib/jobs/live-hub'
import type { SequencedJobEvent } from '../../../server/lib/jobs/stream-events'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { createConvexJobStore, type ConvexFunctionClient } from '../../../server/lib/stores/jobs/convex'
import { textReply, toolCallReply, useFakeOpenRouter, type FakeReply } from '../../support/fake-openrouter'
import { registerBuiltinToolsOnly } from '../../support/upstream'
import { registerServerTool } from '../../../server/lib/tools/registry'
import { testServerConfig } from '../../support/server-config'
import { processTools } from '../../../server/lib/tools/run-tools'

// Two job layers ("instances") sharing one convex-test backend, as two Nitro servers share one
// Convex deployment: a job started on one is watched, aborted and, once its lease expires,
// resumed from the other.

const secret = 'a-convex-test-server-secret-of-enough-length'
const LEASE_MS = 600
const ANSWER = 'Resumed on the other instance, from the checkpoint after the tool round. '.repeat(4).trim()
const request = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'What is 6*7?' }], fields: {} }

const fake = useFakeOpenRouter()

beforeEach(() => {
  process.env.OR3_SERVER_SECRET = secret
  registerBuiltinToolsOnly()
})

function instances() {
  const backend = convexTest({ schema, modules: import.meta.glob('../../../convex/**/*.ts'), transactionLimits: true }) as unknown as ConvexFunctionClient
  const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-shared', retryBaseDelayMs: 5 } })
  // Waits poll the store only every minute: an answer given on B reaches A through A's heartbeat.
  config.backgroundJobs.waits = { ...config.backgroundJobs.waits, timeoutMs: 120_000, claimMs: 10_000, pollMs: 60_000 }
  const make = (instanceId: string, client: ConvexFunctionClient = backend) => {
    const store = createConvexJobStore({ client, secret, instanceId, leaseMs: LEASE_MS })
    const hub = new JobLiveHub({ graceMs: 50, batchIntervalMs: 20 })
    return { store, hub, manager: new BackgroundJobManager({ tools: processTools, store, hub, config, secretBox: createSecretBox('a shared secret box key long enough!!') }) }
  }
  return { backend, make }
}

/** Collects what a viewer attached to `hub` sees. */
function viewer(hub: JobLiveHub, jobId: string) {
  const seen = { content: '', status: undefined as string | undefined, timeline: [] as Array<{ length: number, at: number }>, events: [] as SequencedJobEvent[] }
  const listener = (event: SequencedJobEvent) => {
    seen.events.push(event)
    if (event.event.type === 'snapshot') seen.content = event.event.job.content
    if (event.event.type === 'delta') seen.content += event.event.content ?? ''
    if (event.event.type === 'status') seen.status = event.event.status
    seen.timeline.push({ length: seen.content.length, at: performance.now() })
  }
  const subscription = hub.subscribe(jobId, listener)!
  listener(subscription.snapshot())
  return { seen, dispose: subscription.dispose }
}

describe('two instances on one Convex backend', () => {
  it('shows a job waiting on A to a viewer on B, and an answer given on B lets A go on', async () => {
    const { make } = instances()
    const a = make('instance-a')
    const b = make('instance-b')
    let sent = 0
    registerServerTool({ type: 'function', function: { name: 'send_note', description: 'Sends a note.', parameters: { type: 'object', properties: { text: { type: 'string' } } } }, needsApproval: true }, () => {
      sent++
      return { sent: true }
    })
    fake.script(request => request.body.messages.some(message => message.role === 'tool') ? textReply('Sent.') : toolCallReply([{ id: 'call_note', name: 'send_note', arguments: '{"text":"hi"}' }]))
    const job = await a.manager.startChatJob({ principal: { userId: 'user-1', role: 'user' }, request: { ...request, messages: [{ role: 'user', content: 'send a note' }] } })

    await b.manager.followRemoteJob((await b.store.getJob(job.id))!)
    const asked: string[] = []
    const subscription = b.hub.subscribe(job.id, (event) => {
      if (event.event.type === 'input-request') asked.push(`${event.event.request.kind}:${event.event.request.status}`)
      // A job that ended before B read all its log is shown whole, its requests with it.
      if (event.event.type === 'snapshot') asked.push(...(event.event.job.inputRequests ?? []).map(request => `${request.kind}:${request.status}`))
    })!
    await vi.waitFor(() => expect(asked).toContain('approval:open'), { timeout: 30_000 })
    const [open] = await b.manager.inputs.openFor('user-1')
    expect(open).toMatchObject({ toolName: 'send_note', arguments: '{"text":"hi"}' })
    await expect(b.manager.inputs.answer({ id: job.id, userId: 'user-2', status: 'streaming' }, open!.id, { approved: true })).rejects.toMatchObject({ statusCode: 404 })
    await b.manager.inputs.answer((await b.store.getJob(job.id))!, open!.id, { approved: true })
    await a.manager.runs.settled(job.id)
    expect(await a.store.getJob(job.id)).toMatchObject({ status: 'complete', content: 'Sent.' })
    expect(sent).toBe(1)
    await vi.waitFor(() => expect(asked).toContain('approval:answered'), { timeout: 30_000 })
    subscription.dispose()
  })

  it('streams a job started on A to a viewer on B, and a stop on B ends it on A', async () => {
    const { make } = instances()
    const a = make('instance-a')
    const b = make('instance-b')
    fake.script(() => textReply(ANSWER, { pieceSize: 2, delayMs: 15 }))
    const upstreamRequest = fake.requests.length
    const job = await a.manager.startChatJob({ principal: { userId: 'user-1', role: 'user' }, request })
    const onA = viewer(a.hub, job.id)

    await b.manager.followRemoteJob((await b.store.getJob(job.id))!)
    const onB = viewer(b.hub, job.id)
    await vi.waitFor(() => expect(onB.seen.content.length).toBeGreaterThan(120), { timeout: 30_000 })
    expect(onA.seen.content.startsWith(onB.seen.content) || onB.seen.content.startsWith(onA.seen.content)).toBe(true)

    // B's viewer gets A's events under A's ids (after its first snapshot), so an id is one event everywhere.
    const byIdOnA = new Map(onA.seen.events.map(event => [event.id, event.frame]))
    const relayed = onB.seen.events.slice(1)
    expect(relayed.length).toBeGreaterThan(3)
    for (const event of relayed) expect(byIdOnA.get(event.id)).toBe(event.frame)
    // A viewer that watched on A resumes on B from the id it got there: exactly the events after it.
    const held = relayed[1]!
    const moved = b.hub.subscribe(job.id, () => {}, { seq: held.seq, attempt: held.attempt })!
    expect(moved.resume).toEqual({ kind: 'events', events: expect.any(Array) })
    const missed = moved.resume!.kind === 'events' ? moved.resume!.events : []
    expect(missed.map(event => event.id)).toEqual(relayed.slice(2, 2 + missed.length).map(event => event.id))
    moved.dispose()

    // How far behind B's viewer runs: when each length was first seen on A vs on B.
    const lags = onB.seen.timeline.flatMap(({ length, at }) => {
      const onAAt = onA.seen.timeline.find(entry => entry.length >= length)?.at
      return length > 0 && onAAt !== undefined ? [at - onAAt] : []
    }).sort((x, y) => x - y)
    console.info(`cross-instance viewer lag (polling with backoff): median ${lags[Math.floor(lags.length / 2)]?.toFixed(0)} ms over ${lags.length} updates`)

    const stopAsked = performance.now()
    expect(await b.manager.abortJob(job.id)).toBe(true)
    await a.manager.runs.settled(job.id)
    console.info(`abort from the other instance took effect after ${(performance.now() - stopAsked).toFixed(0)} ms (lease renewal every ${LEASE_MS / 3} ms)`)
    expect(a.manager.runs.has(job.id)).toBe(false)
    expect(await a.store.getJob(job.id)).toMatchObject({ status: 'aborted' })
    expect(await fake.settled(upstreamRequest)).toMatchObject({ clientDisconnected: true })
    expect(onA.seen.status).toBe('aborted')
    await vi.waitFor(() => expect(onB.seen.status).toBe('aborted'), { timeout: 30_000 })
    onA.dispose()
    onB.dispose()
  })

  it('resumes a job on B from its checkpoint once A stops renewing its lease, and refuses A\'s late writes', async () => {
    const { backend, make } = instances()
    // A's link to the backend: its heartbeat (renewals with progress) can be cut, as when A hangs or is partitioned away.
    let renewalsFail = false
    const aClient: ConvexFunctionClient = {
      query: (fn: any, ...args: any[]) => (backend.query as any)(fn, ...args),
      mutation: (fn: any, ...args: any[]) => {
        if (renewalsFail && ['leases:renew', 'jobs:pulse'].includes(getFunctionName(fn))) return Promise.reject(new Error('network down'))
        return (backend.mutation as any)(fn, ...args)
      },
    } as ConvexFunctionClient
    const a = make('instance-a', aClient)
    const b = make('instance-b')
    // A's answer holds after its first words until B has taken the job over (however slow the
    // machine, A is mid-answer then), and goes on after: its next write is a late one.
    let tookOver!: () => void
    const takenOver = new Promise<void>(resolve => (tookOver = resolve))
    let answers = 0
    fake.script((request) => {
      if (!request.body.messages.some(message => message.role === 'tool')) return toolCallReply([{ id: 'call_1', name: 'calculate', arguments: '{"expression":"6*7"}' }])
      const reply = textReply(ANSWER, { pieceSize: 2 }) as Extract<FakeReply, { type: 'stream' }>
      if (answers++ === 0) reply.steps.splice(8, 0, { until: takenOver })
      return reply
    })
    const before = fake.requests.length
    const job = await a.manager.startChatJob({ principal: { userId: 'user-1', role: 'user' }, request })
    const onA = viewer(a.hub, job.id)
    await vi.waitFor(() => expect(onA.seen.content.length).toBeGreaterThan(4), { timeout: 30_000 })
    expect(await b.manager.recoverInterruptedJobs()).toBe(0)

    // Once A's lease lapses without renewal, B takes the job.
    renewalsFail = true
    await vi.waitFor(async () => expect(await b.manager.recoverInterruptedJobs()).toBe(1), { timeout: 50 * LEASE_MS, interval: LEASE_MS / 6 })
    expect(b.manager.runs.has(job.id)).toBe(true)
    // A's link comes back: its next heartbeat hears that the lease is lost.
    renewalsFail = false
    tookOver()

    // A's next progress write is refused; A notices and stops without writing anything more.
    await vi.waitFor(() => expect(a.manager.runs.has(job.id)).toBe(false), { timeout: 30_000 })
    expect(await a.store.updateJob(job.id, { contentChunk: 'a late write from A' })).toBe(false)

    await b.manager.runs.settled(job.id)
    const done = await b.store.getJob(job.id)
    expect(done).toMatchObject({ status: 'complete', content: ANSWER, resumeCount: 1 })
    expect(done!.toolRounds).toEqual([{ round: 1, toolCalls: [expect.objectContaining({ id: 'call_1', result: '{"expression":"6*7","result":42}' })] }])
    const requests = fake.requests.slice(before)
    // The tool round was asked for once; both text requests carry its result.
    expect(requests.filter(item => !item.body.messages.some(message => message.role === 'tool'))).toHaveLength(1)
    expect(requests.at(-1)!.body.messages.map(message => message.role)).toEqual(['user', 'assistant', 'tool'])
    onA.dispose()
  })
})
