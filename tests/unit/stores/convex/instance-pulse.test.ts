import { describe, expect, it, vi } from 'vitest'
import { InstancePulse, type PulseBatch, type PulseReply } from '../../../../server/lib/stores/convex/instance-pulse'

/** A store whose replies the test releases one at a time. */
function gatedStore() {
  const batches: PulseBatch[] = []
  const pending: Array<{ batch: PulseBatch, answer: (reply?: Partial<PulseReply>) => void, fail: (error: Error) => void }> = []
  const send = (batch: PulseBatch) => new Promise<PulseReply>((resolve, reject) => {
    batches.push(batch)
    pending.push({
      batch,
      answer: reply => resolve({ written: batch.progress.map(() => true), leases: batch.held.map(jobId => ({ jobId, owned: true, abortRequested: false })), settled: [], ...reply }),
      fail: reject,
    })
  })
  return { batches, pending, send, next: async () => {
    await vi.waitFor(() => expect(pending.length).toBeGreaterThan(0))
    return pending.shift()!
  } }
}

describe('an instance\'s heartbeat to a shared store', () => {
  it('sends one pulse at a time; what arrives meanwhile goes in the next, merged per job in order', async () => {
    const store = gatedStore()
    const pulse = new InstancePulse({ send: store.send, intervalMs: 60_000 })
    const first = pulse.progress('j1', { contentChunk: 'Hel', chunksReceived: 1 })
    const inFlight = await store.next()
    expect(inFlight.batch.progress).toEqual([{ jobId: 'j1', contentChunk: 'Hel', chunksReceived: 1 }])
    const second = pulse.progress('j1', { contentChunk: 'lo', chunksReceived: 2 })
    const third = pulse.progress('j1', { contentChunk: '!', reasoningChunk: 'r', chunksReceived: 3, activeToolCalls: [] })
    const other = pulse.progress('j2', { contentChunk: 'x' })
    expect(store.batches).toHaveLength(1)
    inFlight.answer()
    expect(await first).toBe(true)
    const next = await store.next()
    expect(next.batch.progress).toEqual([
      { jobId: 'j1', contentChunk: 'lo!', reasoningChunk: 'r', chunksReceived: 3, activeToolCalls: [] },
      { jobId: 'j2', contentChunk: 'x' },
    ])
    next.answer({ written: [true, false] })
    expect(await Promise.all([second, third, other])).toEqual([true, true, false])
    pulse.close()
  })

  it('beats while it holds leases, and stops a held job when the store says it was lost or asked to stop', async () => {
    const store = gatedStore()
    const pulse = new InstancePulse({ send: store.send, intervalMs: 5 })
    const stops: string[] = []
    pulse.hold('j1', reason => stops.push(`j1:${reason}`))
    pulse.hold('j2', reason => stops.push(`j2:${reason}`))
    const beat = await store.next()
    expect(beat.batch).toEqual({ progress: [], held: ['j1', 'j2'], viewers: [], waiting: [] })
    beat.answer({ leases: [{ jobId: 'j1', owned: true, abortRequested: true }, { jobId: 'j2', owned: false, abortRequested: false }] })
    await vi.waitFor(() => expect(stops).toEqual(['j1:user', 'j2:lease-lost']))
    // A lost lease is held no more; j1 still is, until released.
    const again = await store.next()
    expect(again.batch.held).toEqual(['j1'])
    again.answer()
    pulse.close()
  })

  it('reports viewers with every beat, withdraws a zero once, and stops quietly when the job ended', async () => {
    const store = gatedStore()
    const pulse = new InstancePulse({ send: store.send, intervalMs: 5 })
    pulse.reportViewers('j1', 2)
    const first = await store.next()
    expect(first.batch.viewers).toEqual([{ jobId: 'j1', count: 2 }])
    pulse.reportViewers('j1', 0)
    first.answer()
    const second = await store.next()
    expect(second.batch.viewers).toEqual([{ jobId: 'j1', count: 0 }])
    second.answer()
    // Nothing is held or reported any more: the heartbeat stops.
    pulse.reportViewers('j2', 1)
    const third = await store.next()
    expect(third.batch.viewers).toEqual([{ jobId: 'j2', count: 1 }])
    pulse.reportViewers('j2', 'ended')
    third.answer()
    await vi.waitFor(() => expect(pulse.beating).toBe(false))
    expect(store.pending).toEqual([])
    pulse.close()
  })

  it('wakes a wait when the store says its request was answered elsewhere', async () => {
    const store = gatedStore()
    const pulse = new InstancePulse({ send: store.send, intervalMs: 5 })
    let woken = 0
    const stop = pulse.watchRequest('j1', 'r1', () => woken++)
    const beat = await store.next()
    expect(beat.batch.waiting).toEqual([{ jobId: 'j1', requestId: 'r1' }])
    beat.answer({ settled: ['r1'] })
    await vi.waitFor(() => expect(woken).toBe(1))
    stop()
    await vi.waitFor(() => expect(pulse.beating).toBe(false))
    pulse.close()
  })

  it('rejects the writes of a pulse that failed and goes on with the next', async () => {
    const store = gatedStore()
    const errors: unknown[] = []
    const pulse = new InstancePulse({ send: store.send, intervalMs: 60_000, onError: error => errors.push(error) })
    const lost = pulse.progress('j1', { contentChunk: 'a' })
    ;(await store.next()).fail(new Error('The Convex deployment did not answer within 10000 ms.'))
    await expect(lost).rejects.toThrow(/did not answer/)
    expect(errors).toHaveLength(1)
    const kept = pulse.progress('j1', { contentChunk: 'b' })
    ;(await store.next()).answer()
    expect(await kept).toBe(true)
    pulse.close()
    await expect(pulse.progress('j1', { contentChunk: 'c' })).rejects.toThrow(/closed/)
  })
})
