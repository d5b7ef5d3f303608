/**
 * How a job's run log is kept (run-log.ts) and read back for a viewer resuming after an id
 * (resume-from-log.ts): exact when it can be, and a snapshot with the reason when it cannot.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { toStoredEvents } from '../../../server/lib/jobs/run-log'
import { MAX_REPLAYED_FROM_STORE, readMissedEvents } from '../../../server/lib/jobs/resume-from-log'
import { sequenced, type JobStreamEvent } from '../../../server/lib/jobs/stream-events'
import { createMemoryJobStore } from '../../../server/lib/stores/jobs/memory'
import { MAX_STORED_EVENT_CHARS, type JobStore } from '../../../server/lib/stores/jobs/job-store'
import type { StoredJobEvent } from '../../../shared/types/job-events'
import type { WorkflowState } from '../../../shared/types/workflow'

const delta = (content: string, offset: number): JobStreamEvent => ({ type: 'delta', content, contentOffset: offset, reasoningOffset: 0, chunksReceived: offset + 1 })
const state = (node: string): JobStreamEvent => ({ type: 'workflow-state', workflowState: { workflowId: 'w', workflowName: 'W', nodeStates: {}, executionOrder: [node], currentNodeId: node } as WorkflowState })

describe('toStoredEvents', () => {
  it('keeps each event as sent under its id; a workflow state replaced in the same write is marked superseded', () => {
    const batch = [sequenced(state('a'), { seq: 4, attempt: 1 }), sequenced(delta('x', 0), { seq: 5, attempt: 1 }), sequenced(state('b'), { seq: 6, attempt: 1 })]
    expect(toStoredEvents(batch)).toEqual([
      { seq: 4, attempt: 1, superseded: true },
      { seq: 5, attempt: 1, event: delta('x', 0) },
      { seq: 6, attempt: 1, event: state('b') },
    ])
  })

  it('keeps a resumed run\'s snapshot like any event, and omits (by type) one too large to keep', () => {
    const job = { id: 'j', content: 'short' } as never
    const huge = delta('x'.repeat(MAX_STORED_EVENT_CHARS), 0)
    expect(toStoredEvents([sequenced({ type: 'snapshot', job, reason: 'resumed' }, { seq: 1, attempt: 1 }), sequenced(huge, { seq: 2, attempt: 1 })])).toEqual([
      { seq: 1, attempt: 1, event: { type: 'snapshot', job, reason: 'resumed' } },
      { seq: 2, attempt: 1, omitted: 'delta' },
    ])
  })
})

describe('readMissedEvents', () => {
  let store: JobStore
  let jobId: string

  beforeEach(async () => {
    store = createMemoryJobStore()
    jobId = (await store.createJob({ userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x' })).id
  })

  const write = (events: StoredJobEvent[]) => store.updateJob(jobId, { events })
  const kept = (seq: number, attempt = 0): StoredJobEvent => ({ seq, attempt, event: delta(String(seq), seq - 1) })

  it('gives exactly the events after a kept id, up to a number or all', async () => {
    await write([kept(1), kept(2), kept(3), kept(4)])
    expect(await readMissedEvents(store, jobId, { seq: 2, attempt: 0 })).toEqual({ kind: 'events', events: [kept(3), kept(4)] })
    expect(await readMissedEvents(store, jobId, { seq: 0, attempt: 0 })).toEqual({ kind: 'events', events: [kept(1), kept(2), kept(3), kept(4)] })
    expect(await readMissedEvents(store, jobId, { seq: 1, attempt: 0 }, 3)).toEqual({ kind: 'events', events: [kept(2), kept(3)] })
    expect(await readMissedEvents(store, jobId, { seq: 4, attempt: 0 })).toEqual({ kind: 'events', events: [] })
  })

  it('passes superseded events by, and starts from a snapshot past an omitted one (saying why)', async () => {
    await write([kept(1), { seq: 2, attempt: 0, superseded: true }, kept(3)])
    expect(await readMissedEvents(store, jobId, { seq: 1, attempt: 0 })).toEqual({ kind: 'events', events: [kept(3)] })
    await write([{ seq: 4, attempt: 1, omitted: 'snapshot' }, kept(5, 1)])
    expect(await readMissedEvents(store, jobId, { seq: 3, attempt: 0 })).toEqual({ kind: 'snapshot', reason: 'resumed' })
    await write([{ seq: 6, attempt: 1, omitted: 'delta' }])
    expect(await readMissedEvents(store, jobId, { seq: 5, attempt: 1 })).toEqual({ kind: 'snapshot', reason: 'compacted' })
  })

  it('calls a view diverged when its id names an event the store never kept: another run\'s number, or one past the last', async () => {
    // Run 0 sent 1..3 but the store kept 1..2; run 1 numbered on from 2.
    await write([kept(1), kept(2), kept(3, 1)])
    expect(await readMissedEvents(store, jobId, { seq: 3, attempt: 0 })).toEqual({ kind: 'snapshot', reason: 'diverged' })
    expect(await readMissedEvents(store, jobId, { seq: 9, attempt: 1 })).toEqual({ kind: 'snapshot', reason: 'diverged' })
    expect(await readMissedEvents(store, jobId, { seq: 2, attempt: 0 })).toEqual({ kind: 'events', events: [kept(3, 1)] })
  })

  it('calls it compacted once an ended job\'s log is folded into its row, or the viewer is too far behind', async () => {
    await write([kept(1), kept(2)])
    expect(await readMissedEvents(store, jobId, { seq: 1, attempt: 0 }, MAX_REPLAYED_FROM_STORE + 2)).toEqual({ kind: 'snapshot', reason: 'compacted' })
    await store.endJob(jobId, { status: 'complete', final: { content: '12', reasoning: '', finishReason: 'stop', chunksReceived: 2, now: 1_000 } })
    // Kept a while after the end: a viewer catching up still gets the exact events.
    expect(await readMissedEvents(store, jobId, { seq: 1, attempt: 0 })).toEqual({ kind: 'events', events: [kept(2)] })
    await store.cleanupExpired(0, 1_001)
    expect(await readMissedEvents(store, jobId, { seq: 1, attempt: 0 })).toEqual({ kind: 'snapshot', reason: 'compacted' })
    expect(await readMissedEvents(store, 'no-such-job', { seq: 1, attempt: 0 })).toEqual({ kind: 'snapshot', reason: 'unknown' })
  })
})
