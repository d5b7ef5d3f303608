/**
 * The behaviour every job store must have. Each store's test file calls
 * `describeJobStoreContract` with a factory for a fresh, empty store.
 */
import { useTestFixture } from './file-fixture'
import { describe, expect, it } from 'vitest'
import type { JobStore } from '../../server/lib/stores/jobs/job-store'
import type { ActiveToolCall, JobCheckpoint } from '../../shared/types/job'
import { MAX_KEPT_JOB_EVENTS, type CreateJobInput } from '../../server/lib/stores/jobs/job-store'
import type { StoredJobEvent } from '../../shared/types/job-events'

const usage = { promptTokens: 10, completionTokens: 20, totalTokens: 30, cachedTokens: 0, reasoningTokens: 0, cost: 0.001 }

function jobInput(overrides: Partial<CreateJobInput> = {}): CreateJobInput {
  return { userId: 'user-a', threadId: 'thread-1', messageId: 'message-1', type: 'chat', model: 'test/model', ...overrides }
}

/** Registers the store contract tests for one store. */
export function describeJobStoreContract(name: string, createProvider: () => JobStore | Promise<JobStore>): void {
  describe(`job store contract: ${name}`, () => {
    const store = useTestFixture('The store', createProvider, store => store.close())

    it('answers a health ping while it can take writes', async () => {
      await expect(store.ping()).resolves.toBeUndefined()
    })

    it('creates a streaming job with empty progress and reads it back', async () => {
      const request = { model: 'test/model', messages: [{ role: 'user' as const, content: 'hi' }], fields: { temperature: 0.2 }, toolNames: ['calculate'] }
      const created = await store.createJob(jobInput({ now: 1_000, request, apiKeyCiphertext: 'v1.cipher' }))
      expect(created).toMatchObject({
        userId: 'user-a', threadId: 'thread-1', messageId: 'message-1', type: 'chat', model: 'test/model',
        status: 'streaming', content: '', reasoning: '', chunksReceived: 0, activeToolCalls: [], toolRounds: [],
        startedAt: 1_000, updatedAt: 1_000, resumeCount: 0, request, apiKeyCiphertext: 'v1.cipher',
      })
      expect(created.id).toMatch(/\S{8,}/)
      expect(created.completedAt).toBeUndefined()
      expect(await store.getJob(created.id)).toEqual(created)
      expect(await store.getJob('no-such-job')).toBeNull()
    })

    it('keeps a caller-chosen id and refuses a duplicate', async () => {
      await store.createJob(jobInput({ id: 'fixed-id' }))
      expect((await store.getJob('fixed-id'))?.id).toBe('fixed-id')
      await expect(store.createJob(jobInput({ id: 'fixed-id' }))).rejects.toThrow()
    })

    it('appends streamed text and replaces counters and active tool calls', async () => {
      const job = await store.createJob(jobInput())
      const running: ActiveToolCall[] = [{ id: 'call-1', name: 'calculate', arguments: '{"expression":"1+1"}', round: 1, status: 'running', startedAt: 5 }]
      expect(await store.updateJob(job.id, { contentChunk: 'Hel', reasoningChunk: 'think', chunksReceived: 2, now: 2_000 })).toBe(true)
      expect(await store.updateJob(job.id, { contentChunk: 'lo', chunksReceived: 3, activeToolCalls: running })).toBe(true)
      const stored = await store.getJob(job.id)
      expect(stored).toMatchObject({ content: 'Hello', reasoning: 'think', chunksReceived: 3, activeToolCalls: running })
      expect(stored!.updatedAt).toBeGreaterThanOrEqual(2_000)
      expect(await store.updateJob('no-such-job', { contentChunk: 'x' })).toBe(false)
    })

    it('groups tool executions by round and replaces a repeated call', async () => {
      const job = await store.createJob(jobInput())
      const call = (id: string, result: string) => ({ id, name: 'calculate', arguments: '{}', result, executionTimeMs: 3 })
      await store.updateRunState(job.id, { toolExecution: { round: 2, execution: call('b', 'two') } })
      await store.updateRunState(job.id, { toolExecution: { round: 1, execution: call('a', 'one') } })
      await store.updateRunState(job.id, { toolExecution: { round: 2, execution: call('c', 'three') } })
      await store.updateRunState(job.id, { toolExecution: { round: 2, execution: { ...call('b', 'two again'), error: 'boom' } } })
      const stored = await store.getJob(job.id)
      expect(stored!.toolRounds).toEqual([
        { round: 1, toolCalls: [call('a', 'one')] },
        { round: 2, toolCalls: [{ ...call('b', 'two again'), error: 'boom' }, call('c', 'three')] },
      ])
    })

    it('stores and clears the checkpoint, usage, rewinds text and counts resumes', async () => {
      const job = await store.createJob(jobInput())
      await store.updateJob(job.id, { contentChunk: 'before the crash, and more' })
      const checkpoint: JobCheckpoint = {
        messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'calculate', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c', content: '2' }],
        rounds: 1, toolRounds: 1, contentLength: 16, reasoningLength: 0,
      }
      await store.updateRunState(job.id, { checkpoint, usage, content: 'before the crash', resumeCount: 1 })
      expect(await store.getJob(job.id)).toMatchObject({ checkpoint, usage, content: 'before the crash', resumeCount: 1 })
      await store.updateRunState(job.id, { checkpoint: null })
      expect((await store.getJob(job.id))!.checkpoint).toBeUndefined()
    })

    it('replaces the workflow state', async () => {
      const job = await store.createJob(jobInput({ type: 'workflow', model: 'workflow' }))
      const state = { workflowId: 'w1', workflowName: 'Draft', nodeStates: { start: { status: 'completed' as const, output: 'x' } }, executionOrder: ['start'], currentNodeId: 'draft' }
      expect(await store.updateRunState(job.id, { workflowState: state })).toBe(true)
      expect((await store.getJob(job.id))!.workflowState).toEqual(state)
    })

    it('keeps a workflow state of nested runs (loop iterations, child runs, at depth) as it was written, change after change', async () => {
      const job = await store.createJob(jobInput({ type: 'workflow', model: 'workflow' }))
      const leaf = (output: string) => ({ workflowId: 'c', workflowName: 'Child', nodeStates: { read: { status: 'completed' as const, output } }, executionOrder: ['read'], currentNodeId: null, failedNodeId: null })
      const iteration = (n: number) => ({ status: 'completed' as const, item: `item ${n}`, output: `out ${n}`, state: { workflowId: 'w1', workflowName: 'Loop', nodeStates: { call: { status: 'completed' as const, output: `call ${n}`, child: { workflowId: 'c', workflowName: 'Child', definition: { version: 1, name: 'Child', nodes: [], edges: [] }, prompt: 'p', state: leaf(`leaf ${n}`) } } }, executionOrder: ['call'], currentNodeId: null, failedNodeId: null } })
      const state: any = { workflowId: 'w1', workflowName: 'Fan', nodeStates: { each: { status: 'running' as const, iterations: [iteration(1), iteration(2), { status: 'pending' as const }] } }, executionOrder: [], currentNodeId: 'each', failedNodeId: null }
      expect(await store.updateRunState(job.id, { workflowState: state })).toBe(true)
      expect((await store.getJob(job.id))!.workflowState).toEqual(state)
      // One iteration changes, another is added: what is read back is the whole state as written last.
      state.nodeStates.each.iterations[1] = { ...iteration(2), output: 'changed' }
      state.nodeStates.each.iterations[1].state.nodeStates.call.child.state = leaf('changed deep down')
      state.nodeStates.each.iterations[2] = iteration(3)
      expect(await store.updateRunState(job.id, { workflowState: state })).toBe(true)
      expect((await store.getJob(job.id))!.workflowState).toEqual(state)
    })

    it('writes a tool call, the checkpoint, usage and a workflow\'s state in one run-state write, and nothing of it to an ended job', async () => {
      const job = await store.createJob(jobInput({ type: 'workflow', model: 'workflow' }))
      const execution = { id: 'c1', name: 'calculate', arguments: '{}', result: '4', executionTimeMs: 2 }
      const checkpoint: JobCheckpoint = { messages: [{ role: 'user', content: 'hi' }], rounds: 1, toolRounds: 1, contentLength: 0, reasoningLength: 0 }
      const state = { workflowId: 'w1', workflowName: 'Draft', nodeStates: { start: { status: 'completed' as const, output: 'x' } }, executionOrder: ['start'], currentNodeId: null }
      expect(await store.updateRunState(job.id, { toolExecution: { round: 1, execution }, checkpoint, usage, workflowState: state })).toBe(true)
      expect(await store.getJob(job.id)).toMatchObject({ toolRounds: [{ round: 1, toolCalls: [execution] }], checkpoint, usage, workflowState: state })
      expect(await store.endJob(job.id, { status: 'rejected', error: { kind: 'rejected', message: 'No' } })).toBe(true)
      const later = { ...state, currentNodeId: 'next' }
      expect(await store.updateRunState(job.id, { toolExecution: { round: 2, execution: { ...execution, id: 'c2' } }, workflowState: later })).toBe(false)
      expect(await store.getJob(job.id)).toMatchObject({ status: 'rejected', finishReason: 'rejected', error: { kind: 'rejected', message: 'No' }, toolRounds: [{ round: 1, toolCalls: [execution] }], workflowState: state })
    })

    it('completes a job with its final text, drops the checkpoint and the key, and refuses later writes', async () => {
      const job = await store.createJob(jobInput({ apiKeyCiphertext: 'v1.secret' }))
      await store.updateJob(job.id, { contentChunk: 'partial' })
      await store.updateRunState(job.id, { checkpoint: { messages: [], rounds: 1, toolRounds: 0, contentLength: 0, reasoningLength: 0 } })
      expect(await store.endJob(job.id, { status: 'complete', final: { content: 'partial and the rest', reasoning: 'r', chunksReceived: 9, finishReason: 'stop', usage, now: 9_000 } })).toBe(true)
      const done = await store.getJob(job.id)
      expect(done).toMatchObject({ status: 'complete', content: 'partial and the rest', reasoning: 'r', chunksReceived: 9, finishReason: 'stop', usage, completedAt: 9_000 })
      expect(done!.checkpoint).toBeUndefined()
      expect(done!.apiKeyCiphertext).toBeUndefined()

      expect(await store.updateJob(job.id, { contentChunk: ' late' })).toBe(false)
      expect(await store.updateRunState(job.id, { toolExecution: { round: 1, execution: { id: 'x', name: 'y', arguments: '{}', result: '', executionTimeMs: 0 } } })).toBe(false)
      expect(await store.updateRunState(job.id, { content: 'rewritten' })).toBe(false)
      expect(await store.endJob(job.id, { status: 'complete', final: { content: 'again', reasoning: '', chunksReceived: 1, finishReason: 'stop' } })).toBe(false)
      expect(await store.endJob(job.id, { status: 'error', error: { message: 'late failure' } })).toBe(false)
      expect(await store.endJob(job.id, { status: 'aborted' })).toBe(false)
      expect(await store.getJob(job.id)).toEqual(done)
    })

    it('fails a job with an error, keeping its text and settling unfinished tool calls', async () => {
      const job = await store.createJob(jobInput())
      await store.updateJob(job.id, {
        contentChunk: 'so far',
        activeToolCalls: [
          { id: 'done', name: 'calculate', arguments: '{}', round: 1, status: 'completed', result: '2' },
          { id: 'busy', name: 'slow', arguments: '{}', round: 1, status: 'running', startedAt: 1 },
        ],
      })
      const error = { message: 'OpenRouter: insufficient credits (402)', kind: 'payment_required', status: 402, hint: 'Add credits.' }
      expect(await store.endJob(job.id, { status: 'error', error, final: { chunksReceived: 4 } })).toBe(true)
      const failed = await store.getJob(job.id)
      expect(failed).toMatchObject({ status: 'error', error, content: 'so far', chunksReceived: 4, finishReason: 'error' })
      expect(failed!.completedAt).toBeTypeOf('number')
      expect(failed!.activeToolCalls.map(call => [call.id, call.status])).toEqual([['done', 'completed'], ['busy', 'error']])
    })

    it('aborts idempotently', async () => {
      const job = await store.createJob(jobInput())
      expect(await store.endJob(job.id, { status: 'aborted', final: { content: 'stopped here' } })).toBe(true)
      expect(await store.endJob(job.id, { status: 'aborted', final: { content: 'second abort' } })).toBe(false)
      expect(await store.getJob(job.id)).toMatchObject({ status: 'aborted', content: 'stopped here', finishReason: 'aborted' })
      expect(await store.endJob('no-such-job', { status: 'aborted' })).toBe(false)
    })

    it('ends a run a person said no to as rejected, with the reason, once', async () => {
      const job = await store.createJob(jobInput())
      const reason = { kind: 'rejected', message: 'Step "Check" was not approved (not today).' }
      expect(await store.endJob(job.id, { status: 'rejected', error: reason, final: { content: 'draft' } })).toBe(true)
      expect(await store.endJob(job.id, { status: 'rejected', error: reason })).toBe(false)
      expect(await store.getJob(job.id)).toMatchObject({ status: 'rejected', error: reason, content: 'draft', finishReason: 'rejected' })
      expect((await store.listJobs({ userId: job.userId, status: 'rejected' })).map(item => item.id)).toEqual([job.id])
    })

    it('lists a user\'s jobs, running first then newest, with a limit and a status filter', async () => {
      const old = await store.createJob(jobInput({ now: 1 }))
      const running = await store.createJob(jobInput({ now: 2 }))
      const newest = await store.createJob(jobInput({ now: 3 }))
      await store.createJob(jobInput({ userId: 'user-b', now: 4 }))
      await store.endJob(old.id, { status: 'complete', final: { content: '', reasoning: '', chunksReceived: 0, finishReason: 'stop' } })
      await store.endJob(newest.id, { status: 'aborted' })
      expect((await store.listJobs({ userId: 'user-a' })).map(job => job.id)).toEqual([running.id, newest.id, old.id])
      expect((await store.listJobs({ userId: 'user-a', limit: 1 })).map(job => job.id)).toEqual([running.id])
      expect((await store.listJobs({ userId: 'user-a', status: 'complete' })).map(job => job.id)).toEqual([old.id])
      expect(await store.listJobs({ userId: 'nobody' })).toEqual([])
      expect((await store.listJobs({ streaming: true })).map(job => job.userId).sort()).toEqual(['user-a', 'user-b'])
    })

    it('lists notifications newest first, the later added first of two made in the same millisecond', async () => {
      for (const body of ['first', 'second', 'third']) await store.notifications.add({ userId: 'user-t', jobId: 'j', threadId: 't', kind: 'job-error', title: 'Failed', body, now: 1_000 })
      await store.notifications.add({ userId: 'user-t', jobId: 'j', threadId: 't', kind: 'job-error', title: 'Failed', body: 'older', now: 500 })
      expect((await store.notifications.list('user-t')).map(item => item.body)).toEqual(['third', 'second', 'first', 'older'])
    })

    it('deletes finished jobs older than the cutoff, with their notifications, and keeps running ones', async () => {
      const expired = await store.createJob(jobInput({ now: 1 }))
      const recent = await store.createJob(jobInput({ now: 2 }))
      const running = await store.createJob(jobInput({ now: 3 }))
      await store.endJob(expired.id, { status: 'complete', final: { content: 'a', reasoning: '', chunksReceived: 1, finishReason: 'stop', now: 100 } })
      await store.endJob(recent.id, { status: 'error', error: { message: 'x' }, final: { now: 500 } })
      await store.notifications.add({ userId: 'user-a', jobId: expired.id, threadId: 't', kind: 'job-complete', title: 'Done', body: 'a' })
      await store.notifications.add({ userId: 'user-a', jobId: recent.id, threadId: 't', kind: 'job-error', title: 'Failed', body: 'x' })

      expect(await store.cleanupExpired(300)).toBe(1)
      expect(await store.getJob(expired.id)).toBeNull()
      expect(await store.getJob(recent.id)).not.toBeNull()
      expect(await store.getJob(running.id)).not.toBeNull()
      expect((await store.notifications.list('user-a')).map(item => item.jobId)).toEqual([recent.id])
      expect(await store.cleanupExpired(300)).toBe(0)
    })

    it('deletes every ended job of one person whatever its age, and all their notifications, for an account being deleted', async () => {
      const ended = await store.createJob(jobInput({ now: 1 }))
      const running = await store.createJob(jobInput({ now: 2 }))
      const others = await store.createJob(jobInput({ userId: 'user-b', now: 3 }))
      await store.endJob(ended.id, { status: 'complete', final: { content: 'a', reasoning: '', chunksReceived: 1, finishReason: 'stop', now: Date.now() } })
      await store.endJob(others.id, { status: 'complete', final: { content: 'b', reasoning: '', chunksReceived: 1, finishReason: 'stop', now: 100 } })
      await store.notifications.add({ userId: 'user-a', jobId: ended.id, threadId: 't', kind: 'job-complete', title: 'Done', body: 'a' })
      await store.notifications.add({ userId: 'user-a', jobId: 'gone-long-ago', threadId: 't', kind: 'job-error', title: 'Failed', body: 'x' })
      await store.notifications.add({ userId: 'user-b', jobId: others.id, threadId: 't', kind: 'job-complete', title: 'Done', body: 'b' })

      expect(await store.cleanupExpired(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, 'user-a')).toBe(1)
      expect(await store.getJob(ended.id)).toBeNull()
      expect(await store.getJob(running.id)).not.toBeNull()
      expect(await store.getJob(others.id)).not.toBeNull()
      expect(await store.notifications.list('user-a')).toEqual([])
      expect((await store.notifications.list('user-b')).map(item => item.jobId)).toEqual([others.id])
    })

    it('records notifications per user, newest first, and marks them read', async () => {
      const first = await store.notifications.add({ userId: 'user-a', jobId: 'j1', threadId: 't1', kind: 'job-complete', title: 'Answer ready', body: 'first', now: 10 })
      const second = await store.notifications.add({ userId: 'user-a', jobId: 'j2', threadId: 't2', kind: 'job-error', title: 'Answer failed', body: 'second', now: 20 })
      const others = await store.notifications.add({ userId: 'user-b', jobId: 'j3', threadId: 't3', kind: 'job-aborted', title: 'Stopped', body: 'third', now: 30 })
      expect(first).toMatchObject({ userId: 'user-a', jobId: 'j1', kind: 'job-complete', createdAt: 10 })
      expect(first.readAt).toBeUndefined()
      expect((await store.notifications.list('user-a')).map(item => item.id)).toEqual([second.id, first.id])

      expect(await store.notifications.markRead('user-b', [first.id])).toBe(0)
      expect(await store.notifications.markRead('user-a', [first.id], 40)).toBe(1)
      expect(await store.notifications.markRead('user-a', [first.id], 41)).toBe(0)
      expect((await store.notifications.list('user-a', { unreadOnly: true })).map(item => item.id)).toEqual([second.id])
      expect((await store.notifications.list('user-a')).find(item => item.id === first.id)?.readAt).toBe(40)

      expect(await store.notifications.markRead('user-a')).toBe(1)
      expect(await store.notifications.list('user-a', { unreadOnly: true })).toEqual([])
      expect((await store.notifications.list('user-b', { unreadOnly: true })).map(item => item.id)).toEqual([others.id])
    })

    it('opens an input request once per job and key, and lists a job\'s and a user\'s open ones', async () => {
      const job = await store.createJob(jobInput())
      const spec = { jobId: job.id, userId: 'user-a', kind: 'approval' as const, key: 'r1:call-1:approval', title: 'Run send_email?', toolName: 'send_email', arguments: '{"to":"a@b.c"}', expiresAt: 9_000, now: 1_000 }
      const opened = await store.inputRequests.open(spec)
      expect(opened).toMatchObject({ jobId: job.id, userId: 'user-a', kind: 'approval', status: 'open', createdAt: 1_000, expiresAt: 9_000, toolName: 'send_email' })
      // A resumed run asking again gets the same request back.
      expect((await store.inputRequests.open({ ...spec, now: 5_000 })).id).toBe(opened.id)
      const other = await store.inputRequests.open({ ...spec, key: 'r1:call-2:approval', now: 2_000 })
      expect((await store.inputRequests.list({ jobId: job.id })).map(request => request.id)).toEqual([opened.id, other.id])
      expect((await store.inputRequests.list({ userId: 'user-a', status: 'open' })).map(request => request.id)).toEqual([other.id, opened.id])
      expect(await store.inputRequests.list({ userId: 'user-b', status: 'open' })).toEqual([])
      expect(await store.inputRequests.get(job.id, opened.id)).toEqual(opened)
      expect(await store.inputRequests.get('another-job', opened.id)).toBeNull()
    })

    it('lets exactly one claimant take a request until its claim lapses, and the first answer win', async () => {
      const job = await store.createJob(jobInput())
      const request = await store.inputRequests.open({ jobId: job.id, userId: 'user-a', kind: 'client-tool', key: 'k', title: 'Share your location?', expiresAt: 100_000, now: 1_000 })
      const claims = await Promise.all([
        store.inputRequests.claim(job.id, request.id, 'tab-1', { claimMs: 10_000, now: 2_000 }),
        store.inputRequests.claim(job.id, request.id, 'tab-2', { claimMs: 10_000, now: 2_000 }),
      ])
      expect(claims.filter(claim => claim.ok)).toHaveLength(1)
      const loser = claims.find(claim => !claim.ok)!
      expect(loser).toMatchObject({ ok: false, reason: 'claimed' })
      const winner = claims.find(claim => claim.ok)!
      const holder = winner.ok ? winner.request.claimedBy! : ''
      // The holder may claim again (a reload); another tab only once the claim has lapsed.
      expect((await store.inputRequests.claim(job.id, request.id, holder, { claimMs: 10_000, now: 3_000 })).ok).toBe(true)
      const taker = holder === 'tab-1' ? 'tab-2' : 'tab-1'
      expect(await store.inputRequests.claim(job.id, request.id, taker, { claimMs: 10_000, now: 20_000 })).toMatchObject({ ok: true, request: { claimedBy: taker, claimedAt: 20_000 } })

      // The tab that lost the claim may not answer; neither may one that names no claim.
      expect(await store.inputRequests.answer(job.id, request.id, { kind: 'client-tool', result: { lat: 0 } }, { claimant: holder, claimMs: 10_000, now: 20_500 })).toMatchObject({ ok: false, reason: 'claimed', request: { claimedBy: taker, status: 'open' } })
      expect(await store.inputRequests.answer(job.id, request.id, { kind: 'client-tool', result: { lat: 0 } }, { claimMs: 10_000, now: 20_500 })).toMatchObject({ ok: false, reason: 'claimed' })
      const answers = await Promise.all([
        store.inputRequests.answer(job.id, request.id, { kind: 'client-tool', result: { lat: 1 } }, { claimant: taker, claimMs: 10_000, now: 21_000 }),
        store.inputRequests.answer(job.id, request.id, { kind: 'client-tool', result: { lat: 2 } }, { claimant: taker, claimMs: 10_000, now: 21_000 }),
      ])
      expect(answers.filter(answer => answer.ok)).toHaveLength(1)
      expect(answers.find(answer => !answer.ok)).toMatchObject({ ok: false, reason: 'settled' })
      const stored = (await store.inputRequests.get(job.id, request.id))!
      expect(stored).toMatchObject({ status: 'answered', answeredAt: 21_000, answer: { kind: 'client-tool' } })
      expect(await store.inputRequests.claim(job.id, request.id, 'tab-3', { claimMs: 10_000, now: 22_000 })).toMatchObject({ ok: false, reason: 'settled' })
      expect(await store.inputRequests.close(job.id, request.id, 'expired')).toMatchObject({ ok: false, reason: 'settled' })
      expect(await store.inputRequests.answer('another-job', request.id, { kind: 'client-tool', result: 1 })).toEqual({ ok: false, reason: 'missing' })
      expect(await store.inputRequests.list({ userId: 'user-a', status: 'open' })).toEqual([])

      // Nobody holds a claim (or only a lapsed one): answering takes it, for the tab that answers.
      const unclaimed = await store.inputRequests.open({ jobId: job.id, userId: 'user-a', kind: 'client-tool', key: 'k2', title: 'Share?', expiresAt: 100_000, now: 1_000 })
      expect(await store.inputRequests.answer(job.id, unclaimed.id, { kind: 'client-tool', result: 3 }, { claimant: 'tab-9', claimMs: 10_000, now: 2_000 })).toMatchObject({ ok: true, request: { status: 'answered', claimedBy: 'tab-9', claimedAt: 2_000 } })
    })

    it('expires or cancels an open request, and consumes an answer only once', async () => {
      const job = await store.createJob(jobInput())
      const late = await store.inputRequests.open({ jobId: job.id, userId: 'user-a', kind: 'approval', key: 'a', title: 'Run it?', expiresAt: 5_000, now: 1_000 })
      expect(await store.inputRequests.close(job.id, late.id, 'expired', 6_000)).toMatchObject({ ok: true, request: { status: 'expired', answeredAt: 6_000 } })
      expect(await store.inputRequests.answer(job.id, late.id, { kind: 'approval', approved: true })).toMatchObject({ ok: false, reason: 'settled', request: { status: 'expired' } })
      expect(await store.inputRequests.consume(job.id, late.id)).toBe(false)

      const approved = await store.inputRequests.open({ jobId: job.id, userId: 'user-a', kind: 'approval', key: 'b', title: 'Run it?', expiresAt: 5_000, now: 1_000 })
      expect(await store.inputRequests.consume(job.id, approved.id)).toBe(false)
      await store.inputRequests.answer(job.id, approved.id, { kind: 'approval', approved: true, reason: 'fine' }, { now: 2_000 })
      expect(await store.inputRequests.consume(job.id, approved.id, 3_000)).toBe(true)
      expect(await store.inputRequests.consume(job.id, approved.id, 4_000)).toBe(false)
      expect(await store.inputRequests.get(job.id, approved.id)).toMatchObject({ status: 'answered', consumedAt: 3_000, answer: { approved: true, reason: 'fine' } })
    })

    it('deletes a job\'s input requests with the job', async () => {
      const job = await store.createJob(jobInput({ now: 1_000 }))
      await store.inputRequests.open({ jobId: job.id, userId: 'user-a', kind: 'approval', key: 'a', title: 'Run it?', expiresAt: 5_000, now: 1_000 })
      await store.endJob(job.id, { status: 'complete', final: { content: '', reasoning: '', finishReason: 'stop', chunksReceived: 0, now: 2_000 } })
      expect(await store.cleanupExpired(3_000)).toBe(1)
      expect(await store.inputRequests.list({ jobId: job.id })).toEqual([])
    })

    it('keeps the run log with the writes that carry it: read from a number, with the last one kept', async () => {
      const job = await store.createJob(jobInput())
      expect(await store.readJobEvents(job.id, 1, 10)).toEqual({ events: [], lastSeq: 0, status: 'streaming' })
      expect(await store.readJobEvents('no-such-job', 1, 10)).toBeNull()
      const hello: StoredJobEvent = { seq: 1, attempt: 0, event: { type: 'delta', content: 'Hel', contentOffset: 0, reasoningOffset: 0, chunksReceived: 1 } }
      const lo: StoredJobEvent = { seq: 2, attempt: 0, event: { type: 'delta', content: 'lo', contentOffset: 3, reasoningOffset: 0, chunksReceived: 2 } }
      const replaced: StoredJobEvent = { seq: 3, attempt: 0, superseded: true }
      const state: StoredJobEvent = { seq: 4, attempt: 0, event: { type: 'workflow-state', workflowState: { nodeStates: {}, executionOrder: ['a'] } as never } }
      expect(await store.updateJob(job.id, { contentChunk: 'Hel', chunksReceived: 1, events: [hello] })).toBe(true)
      expect(await store.updateJob(job.id, { contentChunk: 'lo', chunksReceived: 2, events: [lo, replaced, state] })).toBe(true)
      expect(await store.getJob(job.id)).toMatchObject({ content: 'Hello', eventSeq: 4 })
      expect(await store.readJobEvents(job.id, 1, 10)).toEqual({ events: [hello, lo, replaced, state], lastSeq: 4, status: 'streaming' })
      expect(await store.readJobEvents(job.id, 2, 2)).toEqual({ events: [lo, replaced], lastSeq: 4, status: 'streaming' })
      // A resumed run (attempt 1) goes on numbering; a snapshot too large to keep is kept as "omitted".
      const resumed: StoredJobEvent = { seq: 5, attempt: 1, omitted: 'snapshot' }
      expect(await store.updateJob(job.id, { events: [resumed] })).toBe(true)
      expect((await store.readJobEvents(job.id, 5, 10))!.events).toEqual([resumed])
      // Progress without events leaves the log as it was.
      expect(await store.updateJob(job.id, { contentChunk: '!' })).toBe(true)
      expect((await store.getJob(job.id))!.eventSeq).toBe(5)
    })

    it('drops the oldest events past what a running job keeps, and the whole log once cleanup passes the job\'s end', async () => {
      const job = await store.createJob(jobInput())
      const delta = (seq: number): StoredJobEvent => ({ seq, attempt: 0, event: { type: 'delta', content: 'x', contentOffset: seq - 1, reasoningOffset: 0, chunksReceived: seq } })
      const batch = 500
      for (let first = 1; first <= MAX_KEPT_JOB_EVENTS + batch; first += batch) {
        const events = Array.from({ length: batch }, (_, index) => delta(first + index))
        expect(await store.updateJob(job.id, { contentChunk: 'x'.repeat(batch), chunksReceived: first + batch - 1, events })).toBe(true)
      }
      const last = MAX_KEPT_JOB_EVENTS + batch
      const read = (await store.readJobEvents(job.id, 1, 1))!
      expect(read.lastSeq).toBe(last)
      expect(read.events[0]!.seq).toBe(last - MAX_KEPT_JOB_EVENTS + 1)
      await store.endJob(job.id, { status: 'complete', final: { content: 'done', reasoning: '', finishReason: 'stop', chunksReceived: last, now: 2_000 } })
      expect(await store.updateJob(job.id, { events: [delta(last + 1)] })).toBe(false)
      // Kept a while after the end (viewers and relays catch up), then folded away.
      expect((await store.readJobEvents(job.id, last, 10))!.events.map(event => event.seq)).toEqual([last])
      expect(await store.cleanupExpired(0, 2_000)).toBe(0)
      expect((await store.readJobEvents(job.id, last, 10))!.events).toHaveLength(1)
      expect(await store.cleanupExpired(0, 2_001)).toBe(0)
      expect(await store.readJobEvents(job.id, 1, 10)).toEqual({ events: [], lastSeq: last, status: 'complete' })
      expect(await store.getJob(job.id)).toMatchObject({ status: 'complete', content: 'done', eventSeq: last })
    })

    it('hands out copies: changing a returned record changes nothing stored', async () => {
      const job = await store.createJob(jobInput())
      const copy = (await store.getJob(job.id))!
      copy.content = 'tampered'
      copy.toolRounds.push({ round: 1, toolCalls: [] })
      expect(await store.getJob(job.id)).toMatchObject({ content: '', toolRounds: [] })
    })
  })
}
