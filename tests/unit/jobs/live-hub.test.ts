import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { batchShareAt } from '../../../server/lib/jobs/event-loop-load'
import { JobLiveHub } from '../../../server/lib/jobs/live-hub'
import { frameBytes, parseEventId, type SequencedJobEvent } from '../../../server/lib/jobs/stream-events'
import type { PublicJob } from '../../../shared/types/job'

function job(id = 'job-1'): PublicJob {
  return { id, userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x', status: 'streaming', content: '', reasoning: '', chunksReceived: 0, activeToolCalls: [], toolRounds: [], startedAt: 1, updatedAt: 1, resumeCount: 0 }
}

/** Rebuilds the text a viewer sees, failing on any gap or duplicate. */
class Viewer {
  content = ''
  events: SequencedJobEvent[] = []
  listener = (event: SequencedJobEvent) => this.apply(event)
  apply(event: SequencedJobEvent) {
    this.events.push(event)
    if (event.event.type === 'snapshot') this.content = event.event.job.content
    if (event.event.type === 'delta') {
      expect(event.event.contentOffset).toBe(this.content.length)
      this.content += event.event.content ?? ''
    }
  }

  get lastId() {
    return parseEventId(this.events.at(-1)!.id)
  }
}

const terminal = { status: 'complete' as const, finishReason: 'stop', completedAt: 99 }

describe('JobLiveHub', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('batches deltas: by count, and by time for a trickle', () => {
    const hub = new JobLiveHub({ batchIntervalMs: 100, batchSize: 10, adaptive: false })
    hub.open(job())
    const viewer = new Viewer()
    const subscription = hub.subscribe('job-1', viewer.listener)!
    viewer.apply(subscription.snapshot())

    for (let index = 0; index < 25; index++) hub.appendText('job-1', { content: `${index},` }, index + 1)
    const deltas = () => viewer.events.filter(event => event.event.type === 'delta')
    // The first chunk goes out at once (nothing sent for a while), then every 10 chunks.
    expect(deltas()).toHaveLength(3)
    vi.advanceTimersByTime(99)
    expect(deltas()).toHaveLength(3)
    vi.advanceTimersByTime(1)
    expect(deltas()).toHaveLength(4)
    expect(viewer.content).toBe(Array.from({ length: 25 }, (_, index) => `${index},`).join(''))
    expect(deltas().at(-1)!.event).toMatchObject({ chunksReceived: 25 })
  })

  it('sends every chunk on its own when batching is off', () => {
    const hub = new JobLiveHub({ batchingEnabled: false })
    hub.open(job())
    const viewer = new Viewer()
    hub.subscribe('job-1', viewer.listener)
    for (let index = 0; index < 5; index++) hub.appendText('job-1', { content: 'x' }, index + 1)
    expect(viewer.events.filter(event => event.event.type === 'delta')).toHaveLength(5)
  })

  it('flushes pending text before a tool call and before the status, so order is kept', () => {
    const hub = new JobLiveHub({ batchIntervalMs: 100, batchSize: 50, adaptive: false })
    hub.open(job())
    const viewer = new Viewer()
    hub.subscribe('job-1', viewer.listener)
    hub.appendText('job-1', { content: 'first ' }, 1)
    hub.appendText('job-1', { content: 'pending ' }, 2)
    hub.updateToolCall('job-1', { id: 'c1', name: 'calculate', arguments: '{}', round: 1, status: 'running' })
    hub.appendText('job-1', { content: 'after', reasoning: 'hmm' }, 3)
    hub.appendText('job-1', { content: '!' }, 4)
    expect(hub.finish('job-1', terminal)).toBe(1)
    expect(viewer.events.map(event => event.event.type)).toEqual(['delta', 'delta', 'tool-call', 'delta', 'status'])
    expect(viewer.content).toBe('first pending after!')
    expect(viewer.events.at(-1)!.event).toMatchObject({ type: 'status', status: 'complete', contentLength: 20 })
    expect(hub.snapshot('job-1')).toMatchObject({ status: 'complete', content: 'first pending after!', reasoning: 'hmm', finishReason: 'stop', completedAt: 99 })
    // Tool calls still running when the job ended are shown as stopped.
    expect(hub.snapshot('job-1')!.activeToolCalls[0]).toMatchObject({ status: 'error', error: 'stopped before it finished' })
  })

  it('gives a new viewer a snapshot without text that is still waiting in the batch, then continues exactly', () => {
    const hub = new JobLiveHub({ batchIntervalMs: 100, batchSize: 10, adaptive: false })
    hub.open(job())
    hub.appendText('job-1', { content: 'sent ' }, 1)
    hub.appendText('job-1', { content: 'waiting' }, 2)
    const viewer = new Viewer()
    const subscription = hub.subscribe('job-1', viewer.listener)!
    expect(subscription.snapshot().event).toMatchObject({ type: 'snapshot', job: { content: 'sent ' } })
    viewer.apply(subscription.snapshot())
    vi.advanceTimersByTime(100)
    expect(viewer.content).toBe('sent waiting')
  })

  it('gives viewers arriving between two events one shared snapshot frame, and a fresh one after a change', () => {
    const hub = new JobLiveHub({ batchingEnabled: false })
    hub.open(job())
    hub.appendText('job-1', { content: 'x'.repeat(10_000) }, 1)
    const first = hub.subscribe('job-1', () => {})!.snapshot()
    const second = hub.subscribe('job-1', () => {})!.snapshot()
    expect(second).toBe(first)
    expect(frameBytes(second)).toBe(frameBytes(first))
    hub.setToolRounds('job-1', [{ round: 1, toolCalls: [] }])
    const afterRounds = hub.subscribe('job-1', () => {})!.snapshot()
    expect(afterRounds).not.toBe(first)
    expect(afterRounds.event).toMatchObject({ job: { toolRounds: [{ round: 1 }] } })
    hub.appendText('job-1', { content: 'more' }, 2)
    const afterText = hub.subscribe('job-1', () => {})!.snapshot()
    expect(afterText.event).toMatchObject({ job: { content: `${'x'.repeat(10_000)}more` } })
  })

  it('replays exactly the missed events to a viewer that reconnects with its last event id', () => {
    const hub = new JobLiveHub({ batchingEnabled: false })
    hub.open(job())
    const viewer = new Viewer()
    const first = hub.subscribe('job-1', viewer.listener)!
    viewer.apply(first.snapshot())
    hub.appendText('job-1', { content: 'one ' }, 1)
    first.dispose()
    hub.appendText('job-1', { content: 'two ' }, 2)
    hub.updateToolCall('job-1', { id: 'c', name: 'calculate', arguments: '{}', round: 1, status: 'pending' })
    hub.appendText('job-1', { content: 'three' }, 3)

    const second = hub.subscribe('job-1', viewer.listener, viewer.lastId)!
    const resume = second.resume!
    expect(resume.kind).toBe('events')
    const missed = resume.kind === 'events' ? resume.events : []
    expect(missed.map(event => event.event.type)).toEqual(['delta', 'tool-call', 'delta'])
    expect(missed.map(event => event.id)).toEqual(['2.0', '3.0', '4.0'])
    for (const event of missed) viewer.apply(event)
    hub.appendText('job-1', { content: '!' }, 4)
    expect(viewer.content).toBe('one two three!')

    // Up to date already: nothing to replay.
    expect(hub.subscribe('job-1', () => {}, viewer.lastId)!.resume).toEqual({ kind: 'events', events: [] })
  })

  it('answers with a snapshot when the missed events are no longer in the bounded replay log, or the run is another one', () => {
    const hub = new JobLiveHub({ batchingEnabled: false, replayBytes: 600 })
    hub.open(job())
    const viewer = new Viewer()
    const subscription = hub.subscribe('job-1', viewer.listener)!
    viewer.apply(subscription.snapshot())
    hub.appendText('job-1', { content: 'a' }, 1)
    const early = viewer.lastId!
    subscription.dispose()
    for (let index = 0; index < 50; index++) hub.appendText('job-1', { content: 'b'.repeat(20) }, index + 2)
    const late = hub.subscribe('job-1', () => {}, early)!
    // Older than what memory keeps: the store has those (serve-job-stream reads them), memory the rest.
    expect(late.resume).toMatchObject({ kind: 'older' })
    const from = late.resume!.kind === 'older' ? late.resume!.from : 0
    expect(late.since(from - 1)![0]!.seq).toBe(from)
    expect(late.since(early.seq)).toBeUndefined()
    expect(late.snapshot('compacted').event).toMatchObject({ type: 'snapshot', reason: 'compacted', job: { content: `a${'b'.repeat(1000)}` } })

    // An event memory holds under another attempt, or one never numbered: the viewer's view diverged
    // (one memory no longer holds is the store's to check).
    expect(hub.subscribe('job-1', () => {}, { seq: 51, attempt: 7 })!.resume).toEqual({ kind: 'diverged' })
    expect(hub.subscribe('job-1', () => {}, { seq: 1, attempt: 7 })!.resume).toMatchObject({ kind: 'older' })
    expect(hub.subscribe('job-1', () => {}, { seq: 10_000, attempt: 0 })!.resume).toEqual({ kind: 'diverged' })
  })

  it('numbers a resumed run on from the stored log under its attempt, starting with a snapshot of it', () => {
    const hub = new JobLiveHub({ batchingEnabled: false })
    const recorded: SequencedJobEvent[] = []
    hub.open(job(), { attempt: 0, record: event => recorded.push(event) })
    const viewer = new Viewer()
    hub.subscribe('job-1', viewer.listener)
    hub.appendText('job-1', { content: 'text that the resumed run rewinds' }, 1)
    expect(viewer.lastId).toEqual({ seq: 1, attempt: 0 })
    expect(recorded.map(event => event.id)).toEqual(['1.0'])
    // The store kept event 1; the run resumes as attempt 1 from its checkpoint.
    hub.open({ ...job(), content: 'text', resumeCount: 1, eventSeq: 1 }, { attempt: 1, resumed: true })
    expect(viewer.events.at(-1)!.event).toMatchObject({ type: 'snapshot', reason: 'resumed', job: { content: 'text' } })
    expect(viewer.lastId).toEqual({ seq: 2, attempt: 1 })
    hub.appendText('job-1', { content: ' again' }, 2)
    expect(viewer.lastId).toEqual({ seq: 3, attempt: 1 })
    // An id the earlier run sent but the store kept (1.0) is the store's to check.
    expect(hub.subscribe('job-1', () => {}, { seq: 1, attempt: 0 })!.resume).toEqual({ kind: 'older', from: 2 })
  })

  it('drops a finished job once its last viewer has gone, after the grace period; disposers are idempotent', () => {
    const hub = new JobLiveHub({ graceMs: 1000 })
    hub.open(job('watched'))
    hub.open(job('unwatched'))
    const a = hub.subscribe('watched', () => {})!
    const b = hub.subscribe('watched', () => {})!
    expect(hub.viewerCount('watched')).toBe(2)
    expect(hub.finish('watched', terminal)).toBe(2)
    expect(hub.finish('unwatched', terminal)).toBe(0)
    vi.advanceTimersByTime(1000)
    expect(hub.has('unwatched')).toBe(false)
    expect(hub.has('watched')).toBe(true)
    a.dispose()
    a.dispose()
    expect(hub.viewerCount('watched')).toBe(1)
    b.dispose()
    vi.advanceTimersByTime(999)
    // A late reconnect within the grace period keeps it.
    const late = hub.subscribe('watched', () => {})!
    expect(late.finished).toBe(true)
    vi.advanceTimersByTime(5000)
    expect(hub.has('watched')).toBe(true)
    late.dispose()
    vi.advanceTimersByTime(1000)
    expect(hub.size).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('tells attached viewers when their job is dropped (shutdown), and keeps serving the others when one throws', () => {
    const hub = new JobLiveHub({ batchingEnabled: false })
    hub.open(job())
    const detached = vi.fn()
    const healthy = new Viewer()
    hub.subscribe('job-1', () => { throw new Error('broken viewer') })
    hub.subscribe('job-1', healthy.listener, undefined, detached)
    hub.appendText('job-1', { content: 'still here' }, 1)
    expect(healthy.content).toBe('still here')
    hub.close()
    expect(detached).toHaveBeenCalledOnce()
    expect(hub.size).toBe(0)
    expect(vi.getTimerCount()).toBe(0)
  })

  it('ignores events for jobs it does not hold and after the end', () => {
    const hub = new JobLiveHub()
    hub.appendText('missing', { content: 'x' }, 1)
    expect(hub.subscribe('missing', () => {})).toBeUndefined()
    hub.open(job())
    hub.finish('job-1', terminal)
    const viewer = new Viewer()
    hub.subscribe('job-1', viewer.listener)
    hub.appendText('job-1', { content: 'late' }, 2)
    expect(hub.finish('job-1', { ...terminal, status: 'error' })).toBe(0)
    expect(viewer.events).toEqual([])
  })
})

describe('JobLiveHub batching that costs latency only under load', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  /** A hub whose load the test sets: 0 = idle, 1 = busy. */
  function hubAtLoad(share: { value: number }, options: { batchSize?: number } = {}) {
    const hub = new JobLiveHub({ batchIntervalMs: 100, batchSize: options.batchSize ?? 10, adaptive: true, batchShare: () => share.value })
    hub.open(job())
    const viewer = new Viewer()
    viewer.apply(hub.subscribe('job-1', viewer.listener)!.snapshot())
    return { hub, viewer, deltas: () => viewer.events.filter(event => event.event.type === 'delta') }
  }

  /** Every event id continues the one before it (what Last-Event-ID resumption relies on). */
  function expectContinuousIds(viewer: Viewer) {
    const sequence = viewer.events.map(event => parseEventId(event.id)!)
    for (let index = 1; index < sequence.length; index++) {
      expect(sequence[index]!.attempt).toBe(sequence[0]!.attempt)
      expect(sequence[index]!.seq).toBe(sequence[index - 1]!.seq + 1)
    }
  }

  it('sends every delta at once while the server is idle, without any timer', () => {
    const share = { value: 0 }
    const { hub, viewer, deltas } = hubAtLoad(share)
    for (let index = 0; index < 5; index++) {
      hub.appendText('job-1', { content: `${index} ` }, index + 1)
      expect(deltas()).toHaveLength(index + 1)
    }
    expect(vi.getTimerCount()).toBe(0)
    expect(viewer.content).toBe('0 1 2 3 4 ')
    expectContinuousIds(viewer)
  })

  it('under load sends the first delta at once, coalesces a burst until the interval, and keeps the order', () => {
    const share = { value: 1 }
    const { hub, viewer, deltas } = hubAtLoad(share)
    hub.appendText('job-1', { content: 'first ' }, 1)
    expect(deltas()).toHaveLength(1)
    for (let index = 0; index < 4; index++) hub.appendText('job-1', { content: `b${index} ` }, index + 2)
    expect(deltas()).toHaveLength(1)
    vi.advanceTimersByTime(99)
    expect(deltas()).toHaveLength(1)
    vi.advanceTimersByTime(1)
    expect(deltas()).toHaveLength(2)
    expect(deltas()[1]!.event).toMatchObject({ content: 'b0 b1 b2 b3 ', chunksReceived: 5 })
    hub.updateToolCall('job-1', { id: 'c1', name: 'calculate', arguments: '{}', round: 1, status: 'running' })
    hub.finish('job-1', terminal)
    expect(viewer.events.map(event => event.event.type)).toEqual(['snapshot', 'delta', 'delta', 'tool-call', 'status'])
    expect(viewer.content).toBe('first b0 b1 b2 b3 ')
    expectContinuousIds(viewer)
  })

  it('under load flushes a burst early once the batch size is reached', () => {
    const { hub, deltas } = hubAtLoad({ value: 1 }, { batchSize: 3 })
    hub.appendText('job-1', { content: 'a' }, 1)
    hub.appendText('job-1', { content: 'b' }, 2)
    hub.appendText('job-1', { content: 'c' }, 3)
    expect(deltas()).toHaveLength(1)
    hub.appendText('job-1', { content: 'd' }, 4)
    expect(deltas()).toHaveLength(2)
    expect(deltas()[1]!.event).toMatchObject({ content: 'bcd' })
  })

  it('sends at once again after a pause longer than the window (every word after a pause)', () => {
    const { hub, deltas } = hubAtLoad({ value: 1 })
    hub.appendText('job-1', { content: 'a' }, 1)
    vi.advanceTimersByTime(150)
    hub.appendText('job-1', { content: 'b' }, 2)
    expect(deltas()).toHaveLength(2)
  })

  it('scales the window with the load between idle and busy', () => {
    const share = { value: 0.5 }
    const { hub, deltas } = hubAtLoad(share)
    expect(hub.batchWindowMs()).toBe(50)
    hub.appendText('job-1', { content: 'a' }, 1)
    hub.appendText('job-1', { content: 'b' }, 2)
    vi.advanceTimersByTime(49)
    expect(deltas()).toHaveLength(1)
    vi.advanceTimersByTime(1)
    expect(deltas()).toHaveLength(2)
    share.value = 0
    hub.appendText('job-1', { content: 'c' }, 3)
    expect(deltas()).toHaveLength(3)
  })

  it('replays exactly after a reconnect whatever the batching did', () => {
    const share = { value: 1 }
    const { hub, viewer } = hubAtLoad(share)
    hub.appendText('job-1', { content: 'one ' }, 1)
    hub.appendText('job-1', { content: 'two ' }, 2)
    const missedFrom = viewer.lastId
    share.value = 0
    vi.advanceTimersByTime(100)
    hub.appendText('job-1', { content: 'three' }, 3)
    const late = new Viewer()
    late.content = 'one '
    const again = hub.subscribe('job-1', late.listener, missedFrom)!
    const resume = again.resume!
    for (const event of resume.kind === 'events' ? resume.events : []) late.apply(event)
    expect(late.content).toBe('one two three')
  })

  it('maps event-loop utilisation to a share of the interval: none when idle, all when busy', () => {
    expect(batchShareAt(0)).toBe(0)
    expect(batchShareAt(0.7)).toBe(0)
    expect(batchShareAt(0.825)).toBeCloseTo(0.5)
    expect(batchShareAt(0.95)).toBe(1)
    expect(batchShareAt(1)).toBe(1)
  })

  it('samples the load only while a job is live', () => {
    vi.useRealTimers()
    const hub = new JobLiveHub({ adaptive: true, graceMs: 0 })
    hub.open(job())
    hub.appendText('job-1', { content: 'x' }, 1)
    expect(hub.batchWindowMs()).toBe(0)
    hub.drop('job-1')
    vi.useFakeTimers()
    const idle = new JobLiveHub({ adaptive: true })
    idle.open(job('job-2'))
    idle.appendText('job-2', { content: 'x' }, 1)
    expect(vi.getTimerCount()).toBe(1)
    idle.drop('job-2')
    expect(vi.getTimerCount()).toBe(0)
  })
})
