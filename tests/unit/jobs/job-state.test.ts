/**
 * The one fold of job events (shared/job-state.ts), checked as properties over run logs the live
 * hub itself produces from random runs: the hub's view after any number of events is the fold of
 * those events, so a viewer starting from a snapshot at any point and applying the rest sees the
 * whole; however the text is batched, the view is the same; and keeping the log (supersession,
 * then replay from any stored id) never changes the view.
 */
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { applyJobEvent, emptyPublicJob, foldJobEvents } from '../../../shared/job-state'
import { JobLiveHub } from '../../../server/lib/jobs/live-hub'
import { toStoredEvents } from '../../../server/lib/jobs/run-log'
import { readMissedEvents } from '../../../server/lib/jobs/resume-from-log'
import { createMemoryJobStore } from '../../../server/lib/stores/jobs/memory'
import type { SequencedJobEvent } from '../../../server/lib/jobs/stream-events'
import type { ActiveToolCall, PublicJob } from '../../../shared/types/job'
import type { JobInputRequest } from '../../../shared/types/input-request'
import type { WorkflowState } from '../../../shared/types/workflow'

/** One thing a run does. */
type Step =
  | { kind: 'text', content: string, reasoning: string }
  | { kind: 'tool', id: string, status: ActiveToolCall['status'] }
  | { kind: 'ask', id: string, status: JobInputRequest['status'] }
  | { kind: 'state', node: string }

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('text' as const), content: fc.string({ maxLength: 6 }), reasoning: fc.oneof(fc.constant(''), fc.string({ maxLength: 3 })) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('tool' as const), id: fc.constantFrom('a', 'b', 'c'), status: fc.constantFrom('pending', 'running', 'completed', 'error') as fc.Arbitrary<ActiveToolCall['status']> }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('ask' as const), id: fc.constantFrom('q1', 'q2'), status: fc.constantFrom('open', 'answered', 'expired') as fc.Arbitrary<JobInputRequest['status']> }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('state' as const), node: fc.constantFrom('n1', 'n2', 'n3') }) },
)

const run = fc.record({
  steps: fc.array(step, { maxLength: 60 }),
  batchSize: fc.integer({ min: 1, max: 6 }),
  ending: fc.constantFrom('complete', 'error', 'aborted', undefined),
})

function startJob(): PublicJob {
  return { ...emptyPublicJob('job-1'), userId: 'u', threadId: 't', messageId: 'm', model: 'x', startedAt: 1, updatedAt: 1 }
}

function request(id: string, status: JobInputRequest['status']): JobInputRequest {
  return { id, jobId: 'job-1', userId: 'u', kind: 'approval', key: id, title: `Run ${id}?`, status, createdAt: 1, expiresAt: 9 } as JobInputRequest
}

function workflowState(node: string): WorkflowState {
  return { workflowId: 'w', workflowName: 'W', nodeStates: { [node]: { status: 'running' } } as WorkflowState['nodeStates'], executionOrder: [node], currentNodeId: node }
}

/** Runs `steps` through a hub; returns every numbered event and the hub's view after each. */
function produce(steps: Step[], batchSize: number, ending?: 'complete' | 'error' | 'aborted'): { events: SequencedJobEvent[], views: PublicJob[], final: PublicJob } {
  // A window no test waits out: text goes out on the leading edge, by count, or before any other event.
  const hub = new JobLiveHub({ batchIntervalMs: 1_000_000, batchSize, adaptive: false })
  const events: SequencedJobEvent[] = []
  const views: PublicJob[] = []
  // What the writer stores with each event is the job the hub's fold left, which viewers are shown.
  hub.open(startJob(), { attempt: 0, record: (event, job) => {
    expect(job).toBe(hub.snapshot('job-1'))
    events.push(event)
    views.push(job)
  } })
  let chunks = 0
  for (const item of steps) {
    if (item.kind === 'text') hub.appendText('job-1', { content: item.content, reasoning: item.reasoning }, ++chunks)
    if (item.kind === 'tool') hub.updateToolCall('job-1', { id: item.id, name: 'calculate', arguments: '{}', round: 1, status: item.status })
    if (item.kind === 'ask') hub.updateInputRequest('job-1', request(item.id, item.status))
    if (item.kind === 'state') hub.publish('job-1', { type: 'workflow-state', workflowState: workflowState(item.node) })
  }
  if (ending) hub.finish('job-1', { status: ending, completedAt: 5 })
  else hub.flush('job-1')
  const final = hub.snapshot('job-1')!
  hub.close()
  return { events, views, final }
}

/** What a run of `steps` must end as, worked out from the steps alone (the oracle). */
function expectedEnd(steps: Step[], ending?: 'complete' | 'error' | 'aborted'): Partial<PublicJob> {
  const texts = steps.filter(item => item.kind === 'text')
  const calls = new Map<string, ActiveToolCall['status']>()
  const asks = new Map<string, JobInputRequest['status']>()
  let node: string | undefined
  for (const item of steps) {
    if (item.kind === 'tool') calls.set(item.id, item.status)
    if (item.kind === 'ask') asks.set(item.id, item.status)
    if (item.kind === 'state') node = item.node
  }
  const open = (status: ActiveToolCall['status']) => status === 'pending' || status === 'running'
  return {
    status: ending ?? 'streaming',
    content: texts.map(item => item.content).join(''),
    reasoning: texts.map(item => item.reasoning).join(''),
    chunksReceived: texts.length,
    activeToolCalls: [...calls].map(([id, status]) => expect.objectContaining({ id, status: ending && open(status) ? 'error' : status })),
    ...(asks.size > 0 ? { inputRequests: [...asks].map(([id, status]) => expect.objectContaining({ id, status })) } : {}),
    ...(node ? { workflowState: workflowState(node) } : {}),
  }
}

describe('applyJobEvent: one fold for every reader of a run log', () => {
  it('the hub\'s view after any prefix of its events is the fold of that prefix; a snapshot there plus the rest is the whole', () => {
    fc.assert(fc.property(run, ({ steps, batchSize, ending }) => {
      const { events, views, final } = produce(steps, batchSize, ending)
      const whole = foldJobEvents(startJob(), events.map(item => item.event))
      expect(whole).toEqual(final)
      expect(whole).toMatchObject(expectedEnd(steps, ending))
      for (let cut = 0; cut < events.length; cut++) {
        const prefix = foldJobEvents(startJob(), events.slice(0, cut + 1).map(item => item.event))
        expect(prefix).toEqual(views[cut])
        // A viewer arriving here gets a snapshot, then the rest.
        const late = foldJobEvents(applyJobEvent(startJob(), { type: 'snapshot', job: views[cut]! }), events.slice(cut + 1).map(item => item.event))
        expect(late).toEqual(whole)
      }
    }), { numRuns: 150 })
  })

  it('gives the same view however the text was batched', () => {
    fc.assert(fc.property(run, fc.integer({ min: 1, max: 6 }), ({ steps, batchSize, ending }, otherSize) => {
      const one = produce(steps, batchSize, ending).final
      const other = produce(steps, otherSize, ending).final
      expect(other).toEqual(one)
    }), { numRuns: 150 })
  })

  it('ignores a delta that does not continue the text (a gap or a repeat), leaving the view as it was', () => {
    const job = { ...startJob(), content: 'Hello' }
    expect(applyJobEvent(job, { type: 'delta', content: 'lo', contentOffset: 3, reasoningOffset: 0, chunksReceived: 2 })).toBe(job)
    expect(applyJobEvent(job, { type: 'delta', content: '!', contentOffset: 9, reasoningOffset: 0, chunksReceived: 2 })).toBe(job)
    expect(applyJobEvent(job, { type: 'delta', content: '!', contentOffset: 5, reasoningOffset: 0, chunksReceived: 2 }).content).toBe('Hello!')
  })

  it('keeping the log never changes the view: replayed from the store after any id, in any write batches', async () => {
    await fc.assert(fc.asyncProperty(run, fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 20 }), fc.nat(), async ({ steps, batchSize }, writes, pick) => {
      const { events, views, final } = produce(steps, batchSize)
      const store = createMemoryJobStore()
      const job = await store.createJob({ id: 'job-1', userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x' })
      // The writer's batches: any split of the events into writes.
      let at = 0
      for (let index = 0; at < events.length; index++) {
        const size = writes[index % writes.length]!
        expect(await store.updateJob(job.id, { events: toStoredEvents(events.slice(at, at + size)) })).toBe(true)
        at += size
      }
      // A viewer that held event `cut` (or none: 0) resumes from the store.
      const cut = events.length === 0 ? 0 : pick % (events.length + 1)
      const held = cut === 0 ? startJob() : views[cut - 1]!
      const replay = await readMissedEvents(store, job.id, { seq: cut, attempt: 0 })
      expect(replay.kind).toBe('events')
      const missed = replay.kind === 'events' ? replay.events.map(item => item.event!) : []
      expect(foldJobEvents(held, missed)).toEqual(final)
    }), { numRuns: 100 })
  })
})
