import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ThrottledJobWriter } from '../../../server/lib/jobs/writer'
import { JobLiveHub } from '../../../server/lib/jobs/live-hub'
import { createMemoryJobStore } from '../../../server/lib/stores/jobs/memory'
import type { JobStore } from '../../../server/lib/stores/jobs/job-store'

const policy = { intervalMs: 120, chunkInterval: 3, sizeThreshold: 1024 }

async function setup() {
  const store = createMemoryJobStore()
  const job = await store.createJob({ userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x' })
  const updates: unknown[] = []
  const counting: JobStore = {
    ...store,
    updateJob: (id, update) => {
      updates.push(update)
      return store.updateJob(id, update)
    },
  }
  return { store, counting, jobId: job.id, updates }
}

describe('ThrottledJobWriter', () => {
  beforeEach(() => {
    vi.useFakeTimers()
  })
  afterEach(() => {
    vi.useRealTimers()
  })

  it('writes a 2,000-chunk answer at most once per flush window, 20x fewer writes than chunks', async () => {
    const { store, counting, jobId, updates } = await setup()
    const writer = new ThrottledJobWriter(counting, jobId, policy)
    let expected = ''
    for (let chunk = 1; chunk <= 2000; chunk++) {
      writer.addText({ content: `t${chunk} ` }, chunk)
      expected += `t${chunk} `
      await vi.advanceTimersByTimeAsync(2)
    }
    await writer.flush()
    const windows = Math.ceil((2000 * 2) / policy.intervalMs)
    expect(updates.length).toBeLessThanOrEqual(windows + 1)
    expect(updates.length).toBeLessThanOrEqual(2000 / 20)
    expect(writer.writes).toBe(updates.length)
    expect(await store.getJob(jobId)).toMatchObject({ content: expected, chunksReceived: 2000 })
  })

  it('waits for chunkInterval chunks, but writes a trickle after a second window at the latest', async () => {
    const { counting, jobId, updates } = await setup()
    const writer = new ThrottledJobWriter(counting, jobId, policy)
    writer.addText({ content: 'a' }, 1)
    await vi.advanceTimersByTimeAsync(policy.intervalMs)
    expect(updates).toHaveLength(0)
    await vi.advanceTimersByTimeAsync(policy.intervalMs)
    expect(updates).toEqual([expect.objectContaining({ contentChunk: 'a', chunksReceived: 1 })])

    for (let chunk = 2; chunk <= 4; chunk++) writer.addText({ content: 'b' }, chunk)
    await vi.advanceTimersByTimeAsync(policy.intervalMs)
    expect(updates).toHaveLength(2)
  })

  it('writes at once when sizeThreshold bytes are waiting, or tool calls change', async () => {
    const { store, counting, jobId, updates } = await setup()
    const writer = new ThrottledJobWriter(counting, jobId, policy)
    writer.addText({ content: 'x'.repeat(1024) }, 1)
    await vi.advanceTimersByTimeAsync(0)
    expect(updates).toHaveLength(1)

    writer.addText({ reasoning: 'thinking' }, 2)
    await writer.setActiveToolCalls([{ id: 'c', name: 'calculate', arguments: '{}', round: 1, status: 'running' }])
    expect(updates).toHaveLength(2)
    expect(await store.getJob(jobId)).toMatchObject({ reasoning: 'thinking', activeToolCalls: [expect.objectContaining({ id: 'c', status: 'running' })] })
  })

  it('lands writes in the order they were made and reports a failing write without throwing', async () => {
    const { store, jobId } = await setup()
    const order: string[] = []
    const errors: unknown[] = []
    let fail = true
    const flaky: JobStore = {
      ...store,
      updateJob: async (id, update) => {
        await new Promise(resolve => setTimeout(resolve, 50))
        order.push(`text:${update.contentChunk}`)
        if (fail) {
          fail = false
          throw new Error('disk full')
        }
        return store.updateJob(id, update)
      },
    }
    const writer = new ThrottledJobWriter(flaky, jobId, policy, error => errors.push(error))
    writer.addText({ content: 'one' }, 1)
    void writer.flush()
    void writer.enqueue(async () => order.push('checkpoint'))
    writer.addText({ content: 'two' }, 2)
    const done = writer.flush()
    await vi.advanceTimersByTimeAsync(200)
    await done
    expect(order).toEqual(['text:one', 'checkpoint', 'text:two'])
    expect(errors).toEqual([expect.objectContaining({ message: 'disk full' })])
    expect((await store.getJob(jobId))!.content).toBe('two')
    writer.dispose()
    expect(vi.getTimerCount()).toBe(0)
  })

  it('stores the events viewers got with the text and tool calls they carry, in one write, after the hub sends its batch', async () => {
    const { store, counting, jobId, updates } = await setup()
    const hub = new JobLiveHub({ batchIntervalMs: 1_000_000, batchSize: 100, adaptive: false })
    const writer = new ThrottledJobWriter(counting, jobId, policy)
    writer.beforeFlush = () => hub.flush(jobId)
    hub.open((await store.getJob(jobId))!, { attempt: 0, record: (event, job) => writer.record(event, job) })
    hub.appendText(jobId, { content: 'Hel' }, 1)
    // Still in the hub's batch: the writer's flush sends it first, so viewers and the store agree.
    hub.appendText(jobId, { content: 'lo' }, 2)
    await writer.flush()
    expect(updates).toEqual([expect.objectContaining({ contentChunk: 'Hello', chunksReceived: 2, events: [expect.objectContaining({ seq: 1 }), expect.objectContaining({ seq: 2 })] })])
    hub.updateToolCall(jobId, { id: 'c', name: 'calculate', arguments: '{}', round: 1, status: 'running' })
    await writer.flush()
    expect(updates).toHaveLength(2)
    const stored = (await store.getJob(jobId))!
    expect(stored).toMatchObject({ content: 'Hello', eventSeq: 3, activeToolCalls: [expect.objectContaining({ id: 'c', status: 'running' })] })
    expect((await store.readJobEvents(jobId, 1, 10))!.events.map(event => event.event?.type)).toEqual(['delta', 'delta', 'tool-call'])
    writer.dispose()
    // A disposed writer takes no more events (the run's terminal write is the store's last word).
    hub.finish(jobId, { status: 'complete', completedAt: 9 })
    await writer.flush()
    expect(updates).toHaveLength(2)
    hub.close()
  })
})
