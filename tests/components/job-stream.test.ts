import { mount } from '@vue/test-utils'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { defineComponent, effectScope, h, nextTick, ref } from 'vue'
import { useJobStream } from '../../app/composables/useJobStream'
import LiveAssistantMessage from '../../app/components/LiveAssistantMessage.vue'
import { viewAfterEvent, describeOutcome, emptyJobView } from '../../app/utils/job-events'
import type { JobStreamEvent } from '../../shared/types/job-events'

/** An EventSource stand-in the test drives: it records the URL and lets events be emitted. */
class FakeEventSource {
  static created: FakeEventSource[] = []
  readyState = 1
  closed = false
  private listeners = new Map<string, Array<(event: any) => void>>()
  constructor(readonly url: string) {
    FakeEventSource.created.push(this)
  }

  addEventListener(type: string, listener: (event: any) => void) {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), listener])
  }

  emit(type: string, data: unknown, lastEventId = '') {
    for (const listener of this.listeners.get(type) ?? []) listener({ data: JSON.stringify(data), lastEventId })
  }

  fail(readyState: number) {
    this.readyState = readyState
    for (const listener of this.listeners.get('error') ?? []) listener({})
  }

  close() {
    this.closed = true
    this.readyState = 2
  }
}

const factory = (url: string) => new FakeEventSource(url) as unknown as EventSource
const job = (content = '', status = 'streaming') => ({ job: { id: 'job-1', threadId: 't', model: 'm', status, content, reasoning: '', chunksReceived: 0, activeToolCalls: [], startedAt: 1 } })

afterEach(() => {
  FakeEventSource.created = []
  vi.useRealTimers()
})

describe('viewAfterEvent', () => {
  it('appends deltas that continue the text and ignores ones that would leave a gap or repeat text', () => {
    let view = viewAfterEvent(emptyJobView('job-1'), { type: 'snapshot', ...job('Hello') } as unknown as JobStreamEvent, 'a-0')
    view = viewAfterEvent(view, { type: 'delta', content: ', world', contentOffset: 5, reasoningOffset: 0, chunksReceived: 2 }, 'a-1')
    expect(view.content).toBe('Hello, world')
    expect(viewAfterEvent(view, { type: 'delta', content: ', world', contentOffset: 5, reasoningOffset: 0, chunksReceived: 2 }).content).toBe('Hello, world')
    expect(viewAfterEvent(view, { type: 'delta', content: '!', contentOffset: 99, reasoningOffset: 0, chunksReceived: 3 }).content).toBe('Hello, world')
    expect(view.lastEventId).toBe('a-1')
  })
})

describe('useJobStream', () => {
  it('attaches to the job stream, follows snapshot, deltas, tool calls and the final status, then closes', async () => {
    const finished = vi.fn()
    const scope = effectScope()
    const { view } = scope.run(() => useJobStream(ref('job-1'), { createEventSource: factory, onFinished: finished }))!
    const source = FakeEventSource.created[0]!
    expect(source.url).toBe('/api/jobs/job-1/stream')
    source.emit('snapshot', job('It '), 'e1-0')
    source.emit('tool-call', { toolCall: { id: 'c', name: 'calculate', arguments: '{}', round: 1, status: 'running' } }, 'e1-1')
    source.emit('delta', { content: 'is 5.', contentOffset: 3, reasoningOffset: 0, chunksReceived: 4 }, 'e1-2')
    expect(view.value).toMatchObject({ status: 'streaming', content: 'It is 5.', toolCalls: [{ id: 'c', status: 'running' }] })
    source.emit('status', { status: 'complete', finishReason: 'stop', contentLength: 8 }, 'e1-3')
    expect(view.value).toMatchObject({ status: 'complete', finishReason: 'stop' })
    expect(view.value!.toolCalls[0]!.status).toBe('error')
    expect(source.closed).toBe(true)
    expect(finished).toHaveBeenCalledOnce()
    scope.stop()
  })

  it('reconnects with the last event id when the stream closes for good before the end (server restart)', async () => {
    vi.useFakeTimers()
    const scope = effectScope()
    const { view, reconnecting } = scope.run(() => useJobStream(ref('job-1'), { createEventSource: factory, retryMs: 500 }))!
    const first = FakeEventSource.created[0]!
    first.emit('snapshot', job('Half'), 'e1-0')
    first.emit('delta', { content: ' way', contentOffset: 4, reasoningOffset: 0, chunksReceived: 2 }, 'e1-7')
    expect(reconnecting.value).toBe(false)
    // Still CONNECTING: the browser retries on its own (sending Last-Event-ID), nothing to do but say so.
    first.fail(0)
    expect(reconnecting.value).toBe(true)
    vi.advanceTimersByTime(1000)
    expect(FakeEventSource.created).toHaveLength(1)
    // CLOSED: reconnect ourselves, carrying the last id in the query.
    first.fail(2)
    vi.advanceTimersByTime(500)
    const second = FakeEventSource.created[1]!
    expect(second.url).toBe('/api/jobs/job-1/stream?lastEventId=e1-7')
    second.emit('delta', { content: ' there', contentOffset: 8, reasoningOffset: 0, chunksReceived: 3 }, 'e1-8')
    expect(view.value!.content).toBe('Half way there')
    expect(reconnecting.value).toBe(false)
    scope.stop()
    expect(second.closed).toBe(true)
  })

  it('closes the stream when the component that used it goes away', async () => {
    const Host = defineComponent({ setup: () => { useJobStream(ref('job-9'), { createEventSource: factory }); return () => h('div') } })
    const wrapper = mount(Host)
    wrapper.unmount()
    expect(FakeEventSource.created[0]!.closed).toBe(true)
  })

  it('drives a live assistant message from the stream', async () => {
    const wrapper = mount(LiveAssistantMessage, { props: { message: { id: 'm', role: 'assistant', content: '', status: 'streaming', jobId: 'job-1' }, createEventSource: factory } })
    const source = FakeEventSource.created[0]!
    source.emit('snapshot', job('Streaming **text**'), 'x-0')
    await nextTick()
    expect(wrapper.find('[data-testid=message-content] strong').text()).toBe('text')
    source.emit('status', { status: 'aborted', contentLength: 18 }, 'x-1')
    await nextTick()
    expect(wrapper.find('[data-testid=message-outcome]').text()).toMatch(/Stopped/)
    expect(wrapper.emitted('finished')).toHaveLength(1)
  })
})

describe('the sentence under an ended job', () => {
  it('says what a stop kept: the answer above for an answer, the finished steps for a workflow run', () => {
    expect(describeOutcome({ status: 'aborted' })).toBe('Stopped. The answer above is what arrived before you stopped it.')
    expect(describeOutcome({ status: 'aborted' }, 'run')).toBe('Stopped. The steps that finished before you stopped the run keep their outputs.')
    expect(describeOutcome({ status: 'complete' }, 'run')).toBeUndefined()
  })
})
