import { describe, expect, it } from 'vitest'
import { createMemoryThreadStore } from '../../../server/lib/stores/threads/memory'
import { writeJobIntoThread } from '../../../server/lib/threads/write-back'
import type { BackgroundJob } from '../../../shared/types/job'

function endedJob(overrides: Partial<BackgroundJob>): BackgroundJob {
  return {
    id: 'job-1', userId: 'alice', threadId: 't', messageId: 'm', type: 'chat', model: 'x', status: 'complete',
    content: 'The answer.', reasoning: '', chunksReceived: 3, activeToolCalls: [], toolRounds: [], finishReason: 'stop',
    startedAt: 1, updatedAt: 2, completedAt: 2, resumeCount: 0, ...overrides,
  }
}

async function threadWithAnswer(userId: string, jobId?: string) {
  const threads = createMemoryThreadStore()
  const thread = await threads.createThread({ userId })
  await threads.appendMessage({ threadId: thread.id, role: 'user', content: 'Question?' })
  const answer = await threads.appendMessage({ threadId: thread.id, role: 'assistant', content: '', status: 'streaming', jobId })
  return { threads, thread, answer }
}

describe('writing an ended job into its thread', () => {
  it('fills the assistant message made for the job', async () => {
    const { threads, thread, answer } = await threadWithAnswer('alice', 'job-1')
    const usage = { promptTokens: 12, completionTokens: 6, totalTokens: 18, cachedTokens: 0, reasoningTokens: 0, cost: 0.0001 }
    expect(await writeJobIntoThread(threads, endedJob({ threadId: thread.id, messageId: answer.id, usage }))).toBe(true)
    // The usage stays with the answer after the job goes with the retention.
    expect(await threads.getMessage(answer.id)).toMatchObject({ status: 'complete', content: 'The answer.', jobId: 'job-1', finishReason: 'stop', usage })
  })

  it('leaves another user\'s message untouched when a job names its ids', async () => {
    const { threads, thread, answer } = await threadWithAnswer('bob')
    expect(await writeJobIntoThread(threads, endedJob({ userId: 'alice', threadId: thread.id, messageId: answer.id, content: 'overwritten' }))).toBe(false)
    expect(await threads.getMessage(answer.id)).toMatchObject({ status: 'streaming', content: '' })
  })

  it('leaves a message made for another job, a user message, and a message of another thread untouched', async () => {
    const { threads, thread, answer } = await threadWithAnswer('alice', 'job-other')
    expect(await writeJobIntoThread(threads, endedJob({ threadId: thread.id, messageId: answer.id }))).toBe(false)
    const question = (await threads.listMessages(thread.id))[0]!
    expect(await writeJobIntoThread(threads, endedJob({ threadId: thread.id, messageId: question.id }))).toBe(false)
    expect(await writeJobIntoThread(threads, endedJob({ threadId: 'elsewhere', messageId: answer.id }))).toBe(false)
    expect(await threads.getMessage(answer.id)).toMatchObject({ status: 'streaming', content: '', jobId: 'job-other' })
    expect(await threads.getMessage(question.id)).toMatchObject({ content: 'Question?' })
  })
})
