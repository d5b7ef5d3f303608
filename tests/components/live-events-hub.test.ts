/**
 * The shared worker's hub (app/utils/live-events-hub.ts): one connection for every tab, each job
 * carried once however many tabs watch it, late tabs served from the worker's fold, and every job
 * asked for again from its last id on a new connection (no gap, no repeat in any tab).
 */
import { describe, expect, it } from 'vitest'
import { LiveEventsHub, MAX_UNREAD_PER_TAB, READ_EVERY, type HubMessage, type TabMessage, type TabPort } from '../../app/utils/live-events-hub'
import { LiveEventsClient } from '../../app/utils/live-events'
import { applyJobEvent } from '../../shared/job-state'
import type { PublicJob } from '../../shared/types/job'
import type { LiveEventsChange } from '../../shared/types/live-events'
import type { JobStreamEvent } from '../../shared/types/job-events'
import { emptyPublicJob } from '../../shared/job-state'

/** An EventSource the test drives. */
class FakeSource {
  readyState = 0
  closed = false
  private readonly listeners = new Map<string, Array<(event: MessageEvent<string>) => void>>()
  constructor(readonly url: string) {}
  addEventListener(type: string, listener: (event: MessageEvent<string>) => void) {
    this.listeners.set(type, [...this.listeners.get(type) ?? [], listener])
  }

  close() {
    this.closed = true
    this.readyState = 2
  }

  emit(type: string, data: unknown) {
    for (const listener of this.listeners.get(type) ?? []) listener({ data: JSON.stringify(data) } as MessageEvent<string>)
  }

  fail(gaveUp: boolean) {
    this.readyState = gaveUp ? 2 : 0
    for (const listener of this.listeners.get('error') ?? []) listener({} as MessageEvent<string>)
  }
}

function setup() {
  const sources: FakeSource[] = []
  const posts: Array<{ url: string, body: LiveEventsChange }> = []
  let status = 200
  const hub = new LiveEventsHub({
    createEventSource: (url) => {
      const source = new FakeSource(url)
      sources.push(source)
      return source as unknown as EventSource
    },
    post: async (url, body) => {
      posts.push({ url, body })
      return { status }
    },
    retryMs: 0,
  })
  const tab = () => {
    // The messages as a tab reads them, without the hub's numbering (tested on its own below).
    const got: HubMessage[] = []
    const port: TabPort = { postMessage: ({ n: _n, ...message }) => got.push(message as HubMessage) }
    return { port, got, jobEvents: () => got.filter(message => message.type === 'job') }
  }
  const settle = () => new Promise(resolve => setTimeout(resolve, 0))
  return { hub, sources, posts, tab, settle, answer: (code: number) => (status = code) }
}

const job = { ...emptyPublicJob('job-1'), content: 'Hel' }
const delta = (content: string, offset: number): JobStreamEvent => ({ type: 'delta', content, contentOffset: offset, reasoningOffset: 0, chunksReceived: offset + 1 })

describe('LiveEventsHub', () => {
  it('carries a job once for any number of tabs; a tab that comes later starts from the worker\'s snapshot', async () => {
    const { hub, sources, posts, tab, settle } = setup()
    const first = tab()
    const second = tab()
    hub.receive(first.port, { type: 'watch', jobId: 'job-1' })
    expect(sources).toHaveLength(1)
    sources[0]!.emit('ready', { streamId: 's1', tools: 0 })
    await settle()
    expect(posts).toEqual([{ url: '/api/events/s1', body: { watch: [{ jobId: 'job-1' }] } }])
    sources[0]!.emit('job', { jobId: 'job-1', id: '1.0', event: { type: 'snapshot', job } })
    sources[0]!.emit('job', { jobId: 'job-1', id: '2.0', event: delta('lo', 3) })

    hub.receive(second.port, { type: 'watch', jobId: 'job-1' })
    await settle()
    expect(posts).toHaveLength(1)
    expect(second.jobEvents()).toEqual([{ type: 'job', jobId: 'job-1', id: '2.0', event: { type: 'snapshot', job: expect.objectContaining({ content: 'Hello' }) } }])
    sources[0]!.emit('job', { jobId: 'job-1', id: '3.0', event: delta('!', 5) })
    expect(first.jobEvents().map(message => message.type === 'job' && message.id)).toEqual(['1.0', '2.0', '3.0'])
    expect(second.jobEvents().map(message => message.type === 'job' && message.id)).toEqual(['2.0', '3.0'])
    expect(sources).toHaveLength(1)
  })

  it('lets a job go when the last tab watching it does (or closes), and the connection when no tab is left', async () => {
    const { hub, sources, posts, tab, settle } = setup()
    const first = tab()
    const second = tab()
    hub.receive(first.port, { type: 'watch', jobId: 'job-1' })
    hub.receive(second.port, { type: 'watch', jobId: 'job-1' })
    hub.receive(second.port, { type: 'watch', jobId: 'job-2' })
    sources[0]!.emit('ready', { streamId: 's1', tools: 0 })
    await settle()
    expect(posts.at(-1)!.body).toEqual({ watch: [{ jobId: 'job-1' }, { jobId: 'job-2' }] })
    hub.receive(first.port, { type: 'unwatch', jobId: 'job-1' })
    await settle()
    expect(posts).toHaveLength(1)
    hub.remove(second.port)
    await settle()
    expect(posts.at(-1)!.body).toEqual({ unwatch: ['job-1', 'job-2'] })
    hub.remove(first.port)
    expect(sources[0]!.closed).toBe(true)
    expect(hub.watchedJobs).toEqual([])
  })

  it('asks a new connection for every job from the last id it has (a drop, a restart, a closed stream)', async () => {
    const { hub, sources, posts, tab, settle, answer } = setup()
    const viewer = tab()
    hub.receive(viewer.port, { type: 'watch', jobId: 'job-1' })
    sources[0]!.emit('ready', { streamId: 's1', tools: 0 })
    await settle()
    sources[0]!.emit('job', { jobId: 'job-1', id: '1.0', event: { type: 'snapshot', job } })
    sources[0]!.emit('job', { jobId: 'job-1', id: '2.0', event: delta('lo', 3) })
    // The browser reconnects by itself: a new stream, asked from 2.0.
    sources[0]!.fail(false)
    expect(viewer.got.at(-1)).toEqual({ type: 'connection', open: false })
    sources[0]!.emit('ready', { streamId: 's2', tools: 0 })
    await settle()
    expect(posts.at(-1)).toEqual({ url: '/api/events/s2', body: { watch: [{ jobId: 'job-1', lastEventId: '2.0' }] } })
    expect(viewer.got.at(-1)).toEqual({ type: 'connection', open: true })
    // A change the server does not know the stream for (it restarted): a new connection.
    answer(404)
    hub.receive(viewer.port, { type: 'watch', jobId: 'job-2' })
    await settle()
    await settle()
    expect(sources).toHaveLength(2)
    expect(sources[0]!.closed).toBe(true)
    answer(200)
    sources[1]!.emit('ready', { streamId: 's3', tools: 0 })
    await settle()
    expect(posts.at(-1)!.body).toEqual({ watch: [{ jobId: 'job-1', lastEventId: '2.0' }, { jobId: 'job-2' }] })
  })

  it('stops asking for a job after its status, and tells its tabs when it is not theirs', async () => {
    const { hub, sources, posts, tab, settle } = setup()
    const viewer = tab()
    hub.receive(viewer.port, { type: 'watch', jobId: 'job-1' })
    hub.receive(viewer.port, { type: 'watch', jobId: 'someone-elses' })
    sources[0]!.emit('ready', { streamId: 's1', tools: 0 })
    await settle()
    sources[0]!.emit('job', { jobId: 'job-1', id: '1.0', event: { type: 'status', status: 'complete', contentLength: 0 } })
    sources[0]!.emit('job-gone', { jobId: 'someone-elses', status: 404 })
    expect(viewer.got).toContainEqual({ type: 'gone', jobId: 'someone-elses' })
    sources[0]!.emit('ready', { streamId: 's2', tools: 0 })
    await settle()
    expect(posts.filter(post => post.url === '/api/events/s2')).toEqual([])
  })

  it('tells the tabs that listen when the tools change, also when a reconnect finds them changed', async () => {
    const { hub, sources, tab } = setup()
    const listening = tab()
    const other = tab()
    hub.receive(listening.port, { type: 'tools', on: true })
    hub.receive(other.port, { type: 'watch', jobId: 'job-1' })
    sources[0]!.emit('ready', { streamId: 's1', tools: 4 })
    sources[0]!.emit('tools-changed', { version: 5 })
    sources[0]!.emit('ready', { streamId: 's2', tools: 7 })
    expect(listening.got.filter(message => message.type === 'tools-changed')).toEqual([{ type: 'tools-changed', version: 5 }, { type: 'tools-changed', version: 7 }])
    expect(other.got.filter(message => message.type === 'tools-changed')).toEqual([])
  })

  it('holds a job\'s events back from a tab that stops reading, past its bound, and gives it a snapshot once it reads again; the other tabs get every event', async () => {
    const { hub, sources, settle } = setup()
    // Two tabs with the real client: one reads at once, the other is frozen (its messages queue, unread).
    const connect = (deliver: (message: HubMessage) => void) => {
      let receive: (message: HubMessage) => void = () => {}
      const port: TabPort = { postMessage: message => deliver(message) }
      const client = new LiveEventsClient({ send: (message: TabMessage) => hub.receive(port, message), listen: (handler) => { receive = handler } })
      return { client, receive: (message: HubMessage) => receive(message) }
    }
    let reader: ReturnType<typeof connect> | undefined
    reader = connect(message => reader!.receive(message))
    const frozenQueue: HubMessage[] = []
    const frozen = connect(message => frozenQueue.push(message))
    const views = { reader: undefined as PublicJob | undefined, frozen: undefined as PublicJob | undefined }
    reader.client.watchJob('job-1', { event: ({ event }) => (views.reader = applyJobEvent(views.reader ?? emptyPublicJob('job-1'), event)) })
    frozen.client.watchJob('job-1', { event: ({ event }) => (views.frozen = applyJobEvent(views.frozen ?? emptyPublicJob('job-1'), event)) })
    sources[0]!.emit('ready', { streamId: 's1', tools: 0 })
    await settle()
    sources[0]!.emit('job', { jobId: 'job-1', id: '1.0', event: { type: 'snapshot', job } })
    const deltas = 3 * MAX_UNREAD_PER_TAB
    let offset = job.content.length
    for (let index = 0; index < deltas; index++) {
      sources[0]!.emit('job', { jobId: 'job-1', id: `${index + 2}.0`, event: delta('x', offset) })
      offset += 1
    }
    // The frozen tab holds at most its bound (and the word that it fell behind), however long the answer.
    expect(frozenQueue.length).toBeLessThanOrEqual(MAX_UNREAD_PER_TAB + 2)
    expect(frozenQueue.at(-1)).toMatchObject({ type: 'lagging' })
    expect(views.reader!.content).toBe(`Hel${'x'.repeat(deltas)}`)

    // It thaws: reads what it had, says so at the `lagging`, and gets the job as the hub has it now.
    while (frozenQueue.length > 0) frozen.receive(frozenQueue.shift()!)
    while (frozenQueue.length > 0) frozen.receive(frozenQueue.shift()!)
    expect(views.frozen).toEqual(views.reader)
    // And from there on every event, like the others.
    sources[0]!.emit('job', { jobId: 'job-1', id: `${deltas + 2}.0`, event: delta('!', offset) })
    while (frozenQueue.length > 0) frozen.receive(frozenQueue.shift()!)
    expect(views.frozen!.content).toBe(`Hel${'x'.repeat(deltas)}!`)
    expect(views.frozen).toEqual(views.reader)
  })

  it('numbers its messages per tab, and takes a tab\'s word of how far it read only for numbers it sent', () => {
    const { hub, sources } = setup()
    const numbers: number[] = []
    const port: TabPort = { postMessage: message => numbers.push(message.n!) }
    hub.receive(port, { type: 'watch', jobId: 'job-1' })
    sources[0]!.emit('ready', { streamId: 's1', tools: 0 })
    for (let index = 0; index < READ_EVERY; index++) sources[0]!.emit('job', { jobId: 'job-1', id: `${index + 1}.0`, event: delta('x', index) })
    expect(numbers).toEqual(numbers.map((_, index) => index + 1))
    // A number it never sent, or a bad one, changes nothing (it would otherwise hide a lagging tab).
    hub.receive(port, { type: 'read', n: 10_000 })
    hub.receive(port, { type: 'read', n: Number.NaN })
    for (let index = 0; index < MAX_UNREAD_PER_TAB; index++) sources[0]!.emit('job', { jobId: 'job-1', id: `${index + 100}.0`, event: delta('x', index) })
    expect(numbers.length).toBeLessThanOrEqual(MAX_UNREAD_PER_TAB + 2)
  })
})
