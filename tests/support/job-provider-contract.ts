/**
 * The behaviour every job store must have. Each provider's test file calls
 * `describeJobProviderContract` with a factory for a fresh, empty store.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import type { BackgroundJobProvider } from '../../server/utils/background-jobs/providers/provider'
import type { ActiveToolCall, CreateJobInput, JobCheckpoint } from '../../server/utils/background-jobs/types'

const usage = { promptTokens: 10, completionTokens: 20, totalTokens: 30, cachedTokens: 0, reasoningTokens: 0, cost: 0.001 }

function jobInput(overrides: Partial<CreateJobInput> = {}): CreateJobInput {
  return { userId: 'user-a', threadId: 'thread-1', messageId: 'message-1', type: 'chat', model: 'test/model', ...overrides }
}

/** Registers the provider contract tests for one store. */
export function describeJobProviderContract(name: string, createProvider: () => BackgroundJobProvider | Promise<BackgroundJobProvider>): void {
  describe(`job provider contract: ${name}`, () => {
    let provider: BackgroundJobProvider

    beforeEach(async () => {
      provider = await createProvider()
    })
    afterEach(async () => {
      await provider.close()
    })

    it('creates a streaming job with empty progress and reads it back', async () => {
      const request = { model: 'test/model', messages: [{ role: 'user' as const, content: 'hi' }], fields: { temperature: 0.2 }, toolNames: ['calculate'] }
      const created = await provider.createJob(jobInput({ now: 1_000, request, apiKeyCiphertext: 'v1.cipher' }))
      expect(created).toMatchObject({
        userId: 'user-a', threadId: 'thread-1', messageId: 'message-1', type: 'chat', model: 'test/model',
        status: 'streaming', content: '', reasoning: '', chunksReceived: 0, activeToolCalls: [], toolRounds: [],
        startedAt: 1_000, updatedAt: 1_000, resumeCount: 0, request, apiKeyCiphertext: 'v1.cipher',
      })
      expect(created.id).toMatch(/\S{8,}/)
      expect(created.completedAt).toBeUndefined()
      expect(await provider.getJob(created.id)).toEqual(created)
      expect(await provider.getJob('no-such-job')).toBeNull()
    })

    it('keeps a caller-chosen id and refuses a duplicate', async () => {
      await provider.createJob(jobInput({ id: 'fixed-id' }))
      expect((await provider.getJob('fixed-id'))?.id).toBe('fixed-id')
      await expect(provider.createJob(jobInput({ id: 'fixed-id' }))).rejects.toThrow()
    })

    it('appends streamed text and replaces counters and active tool calls', async () => {
      const job = await provider.createJob(jobInput())
      const running: ActiveToolCall[] = [{ id: 'call-1', name: 'calculate', arguments: '{"expression":"1+1"}', round: 1, status: 'running', startedAt: 5 }]
      expect(await provider.updateJob(job.id, { contentChunk: 'Hel', reasoningChunk: 'think', chunksReceived: 2, now: 2_000 })).toBe(true)
      expect(await provider.updateJob(job.id, { contentChunk: 'lo', chunksReceived: 3, activeToolCalls: running })).toBe(true)
      const stored = await provider.getJob(job.id)
      expect(stored).toMatchObject({ content: 'Hello', reasoning: 'think', chunksReceived: 3, activeToolCalls: running })
      expect(stored!.updatedAt).toBeGreaterThanOrEqual(2_000)
      expect(await provider.updateJob('no-such-job', { contentChunk: 'x' })).toBe(false)
    })

    it('groups tool executions by round and replaces a repeated call', async () => {
      const job = await provider.createJob(jobInput())
      const call = (id: string, result: string) => ({ id, name: 'calculate', arguments: '{}', result, executionTimeMs: 3 })
      await provider.appendToolExecution(job.id, 2, call('b', 'two'))
      await provider.appendToolExecution(job.id, 1, call('a', 'one'))
      await provider.appendToolExecution(job.id, 2, call('c', 'three'))
      await provider.appendToolExecution(job.id, 2, { ...call('b', 'two again'), error: 'boom' })
      const stored = await provider.getJob(job.id)
      expect(stored!.toolRounds).toEqual([
        { round: 1, toolCalls: [call('a', 'one')] },
        { round: 2, toolCalls: [{ ...call('b', 'two again'), error: 'boom' }, call('c', 'three')] },
      ])
    })

    it('stores and clears the checkpoint, usage, rewinds text and counts resumes', async () => {
      const job = await provider.createJob(jobInput())
      await provider.updateJob(job.id, { contentChunk: 'before the crash, and more' })
      const checkpoint: JobCheckpoint = {
        messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'calculate', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c', content: '2' }],
        rounds: 1, toolRounds: 1, contentLength: 16, reasoningLength: 0,
      }
      await provider.updateJobMetadata(job.id, { checkpoint, usage, content: 'before the crash', resumeCount: 1 })
      expect(await provider.getJob(job.id)).toMatchObject({ checkpoint, usage, content: 'before the crash', resumeCount: 1 })
      await provider.updateJobMetadata(job.id, { checkpoint: null })
      expect((await provider.getJob(job.id))!.checkpoint).toBeUndefined()
    })

    it('replaces the workflow state', async () => {
      const job = await provider.createJob(jobInput({ type: 'workflow', model: 'workflow' }))
      const state = { workflowId: 'w1', workflowName: 'Draft', nodeStates: { start: { status: 'completed' as const, output: 'x' } }, executionOrder: ['start'], currentNodeId: 'draft' }
      expect(await provider.updateWorkflowState(job.id, state)).toBe(true)
      expect((await provider.getJob(job.id))!.workflowState).toEqual(state)
    })

    it('completes a job with its final text, drops the checkpoint and the key, and refuses later writes', async () => {
      const job = await provider.createJob(jobInput({ apiKeyCiphertext: 'v1.secret' }))
      await provider.updateJob(job.id, { contentChunk: 'partial' })
      await provider.updateJobMetadata(job.id, { checkpoint: { messages: [], rounds: 1, toolRounds: 0, contentLength: 0, reasoningLength: 0 } })
      expect(await provider.completeJob(job.id, { content: 'partial and the rest', reasoning: 'r', chunksReceived: 9, finishReason: 'stop', usage, now: 9_000 })).toBe(true)
      const done = await provider.getJob(job.id)
      expect(done).toMatchObject({ status: 'complete', content: 'partial and the rest', reasoning: 'r', chunksReceived: 9, finishReason: 'stop', usage, completedAt: 9_000 })
      expect(done!.checkpoint).toBeUndefined()
      expect(done!.apiKeyCiphertext).toBeUndefined()

      expect(await provider.updateJob(job.id, { contentChunk: ' late' })).toBe(false)
      expect(await provider.appendToolExecution(job.id, 1, { id: 'x', name: 'y', arguments: '{}', result: '', executionTimeMs: 0 })).toBe(false)
      expect(await provider.updateJobMetadata(job.id, { content: 'rewritten' })).toBe(false)
      expect(await provider.completeJob(job.id, { content: 'again', reasoning: '', chunksReceived: 1, finishReason: 'stop' })).toBe(false)
      expect(await provider.failJob(job.id, { message: 'late failure' })).toBe(false)
      expect(await provider.abortJob(job.id)).toBe(false)
      expect(await provider.getJob(job.id)).toEqual(done)
    })

    it('fails a job with an error, keeping its text and settling unfinished tool calls', async () => {
      const job = await provider.createJob(jobInput())
      await provider.updateJob(job.id, {
        contentChunk: 'so far',
        activeToolCalls: [
          { id: 'done', name: 'calculate', arguments: '{}', round: 1, status: 'completed', result: '2' },
          { id: 'busy', name: 'slow', arguments: '{}', round: 1, status: 'running', startedAt: 1 },
        ],
      })
      const error = { message: 'OpenRouter: insufficient credits (402)', kind: 'payment_required', status: 402, hint: 'Add credits.' }
      expect(await provider.failJob(job.id, error, { chunksReceived: 4 })).toBe(true)
      const failed = await provider.getJob(job.id)
      expect(failed).toMatchObject({ status: 'error', error, content: 'so far', chunksReceived: 4, finishReason: 'error' })
      expect(failed!.completedAt).toBeTypeOf('number')
      expect(failed!.activeToolCalls.map(call => [call.id, call.status])).toEqual([['done', 'completed'], ['busy', 'error']])
    })

    it('aborts idempotently', async () => {
      const job = await provider.createJob(jobInput())
      expect(await provider.abortJob(job.id, { content: 'stopped here' })).toBe(true)
      expect(await provider.abortJob(job.id, { content: 'second abort' })).toBe(false)
      expect(await provider.getJob(job.id)).toMatchObject({ status: 'aborted', content: 'stopped here', finishReason: 'aborted' })
      expect(await provider.abortJob('no-such-job')).toBe(false)
    })

    it('lists a user\'s jobs, running first then newest, with a limit and a status filter', async () => {
      const old = await provider.createJob(jobInput({ now: 1 }))
      const running = await provider.createJob(jobInput({ now: 2 }))
      const newest = await provider.createJob(jobInput({ now: 3 }))
      await provider.createJob(jobInput({ userId: 'user-b', now: 4 }))
      await provider.completeJob(old.id, { content: '', reasoning: '', chunksReceived: 0, finishReason: 'stop' })
      await provider.abortJob(newest.id)
      expect((await provider.listJobsByUser('user-a')).map(job => job.id)).toEqual([running.id, newest.id, old.id])
      expect((await provider.listJobsByUser('user-a', { limit: 1 })).map(job => job.id)).toEqual([running.id])
      expect((await provider.listJobsByUser('user-a', { status: 'complete' })).map(job => job.id)).toEqual([old.id])
      expect(await provider.listJobsByUser('nobody')).toEqual([])
      expect((await provider.listStreamingJobs()).map(job => job.userId).sort()).toEqual(['user-a', 'user-b'])
    })

    it('deletes finished jobs older than the cutoff, with their notifications, and keeps running ones', async () => {
      const expired = await provider.createJob(jobInput({ now: 1 }))
      const recent = await provider.createJob(jobInput({ now: 2 }))
      const running = await provider.createJob(jobInput({ now: 3 }))
      await provider.completeJob(expired.id, { content: 'a', reasoning: '', chunksReceived: 1, finishReason: 'stop', now: 100 })
      await provider.failJob(recent.id, { message: 'x' }, { now: 500 })
      await provider.addNotification({ userId: 'user-a', jobId: expired.id, threadId: 't', kind: 'job-complete', title: 'Done', body: 'a' })
      await provider.addNotification({ userId: 'user-a', jobId: recent.id, threadId: 't', kind: 'job-error', title: 'Failed', body: 'x' })

      expect(await provider.cleanupExpired(300)).toBe(1)
      expect(await provider.getJob(expired.id)).toBeNull()
      expect(await provider.getJob(recent.id)).not.toBeNull()
      expect(await provider.getJob(running.id)).not.toBeNull()
      expect((await provider.listNotifications('user-a')).map(item => item.jobId)).toEqual([recent.id])
      expect(await provider.cleanupExpired(300)).toBe(0)
    })

    it('records notifications per user, newest first, and marks them read', async () => {
      const first = await provider.addNotification({ userId: 'user-a', jobId: 'j1', threadId: 't1', kind: 'job-complete', title: 'Answer ready', body: 'first', now: 10 })
      const second = await provider.addNotification({ userId: 'user-a', jobId: 'j2', threadId: 't2', kind: 'job-error', title: 'Answer failed', body: 'second', now: 20 })
      const others = await provider.addNotification({ userId: 'user-b', jobId: 'j3', threadId: 't3', kind: 'job-aborted', title: 'Stopped', body: 'third', now: 30 })
      expect(first).toMatchObject({ userId: 'user-a', jobId: 'j1', kind: 'job-complete', createdAt: 10 })
      expect(first.readAt).toBeUndefined()
      expect((await provider.listNotifications('user-a')).map(item => item.id)).toEqual([second.id, first.id])

      expect(await provider.markNotificationsRead('user-b', [first.id])).toBe(0)
      expect(await provider.markNotificationsRead('user-a', [first.id], 40)).toBe(1)
      expect(await provider.markNotificationsRead('user-a', [first.id], 41)).toBe(0)
      expect((await provider.listNotifications('user-a', { unreadOnly: true })).map(item => item.id)).toEqual([second.id])
      expect((await provider.listNotifications('user-a')).find(item => item.id === first.id)?.readAt).toBe(40)

      expect(await provider.markNotificationsRead('user-a')).toBe(1)
      expect(await provider.listNotifications('user-a', { unreadOnly: true })).toEqual([])
      expect((await provider.listNotifications('user-b', { unreadOnly: true })).map(item => item.id)).toEqual([others.id])
    })

    it('hands out copies: changing a returned record changes nothing stored', async () => {
      const job = await provider.createJob(jobInput())
      const copy = (await provider.getJob(job.id))!
      copy.content = 'tampered'
      copy.toolRounds.push({ round: 1, toolCalls: [] })
      expect(await provider.getJob(job.id)).toMatchObject({ content: '', toolRounds: [] })
    })
  })
}
