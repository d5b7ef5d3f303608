import { describe, expect, it } from 'vitest'
import { createMemoryThreadStore } from '../../../server/lib/stores/threads/memory'
import { cleanTitle, ThreadTitles, titleAfterFirstAnswer, titleFromMessage } from '../../../server/lib/threads/titles'
import { DEMO_MODEL_ID, resolveChatEndpoint } from '../../../server/lib/models/chat-endpoint'
import { demoTitle } from '../../../server/lib/models/demo/demo-planner'
import { textReply, useFakeOpenRouter } from '../../support/fake-openrouter'
import { testServerConfig } from '../../support/server-config'
import type { BackgroundJob } from '../../../shared/types/job'

const config = testServerConfig({ demoModel: { enabled: true, tokenDelayMs: 0 } })
const demo = resolveChatEndpoint(DEMO_MODEL_ID, config)

function endedJob(overrides: Partial<BackgroundJob>): BackgroundJob {
  return {
    id: 'job-1', userId: 'alice', threadId: 't', messageId: 'm', type: 'chat', model: DEMO_MODEL_ID, status: 'complete',
    content: 'In Tokyo it is 10:00.', reasoning: '', chunksReceived: 3, activeToolCalls: [], toolRounds: [], finishReason: 'stop',
    startedAt: 1, updatedAt: 2, completedAt: 2, resumeCount: 0, ...overrides,
  }
}

/** A thread as a first send leaves it: titled by its question, the answer written back by job-1. */
async function answeredThread(question = 'What time is it in Tokyo right now?') {
  const threads = createMemoryThreadStore()
  const thread = await threads.createThread({ userId: 'alice', title: titleFromMessage(question), now: 1 })
  const asked = await threads.appendMessage({ threadId: thread.id, parentId: thread.id, role: 'user', content: question, now: 2 })
  const answer = await threads.appendMessage({ threadId: thread.id, parentId: asked.id, role: 'assistant', content: 'In Tokyo it is 10:00.', status: 'complete', jobId: 'job-1', now: 3 })
  return { threads, thread, asked, answer, job: endedJob({ threadId: thread.id, messageId: answer.id }) }
}

describe('titles written after the first answer', () => {
  it('asks the demo model, which names the topic and place', async () => {
    const { threads, thread, job } = await answeredThread()
    expect(await titleAfterFirstAnswer({ threads, config }, job, demo)).toBe('Time in Tokyo')
    expect(await threads.getThread(thread.id)).toMatchObject({ title: 'Time in Tokyo', updatedAt: 3 })
  })

  it('leaves a renamed thread, a later answer, a failed answer, another user\'s thread and a switched-off server alone', async () => {
    const renamed = await answeredThread()
    await renamed.threads.renameThread(renamed.thread.id, 'My trip')
    expect(await titleAfterFirstAnswer({ threads: renamed.threads, config }, renamed.job, demo)).toBeUndefined()
    expect((await renamed.threads.getThread(renamed.thread.id))!.title).toBe('My trip')

    const later = await answeredThread()
    const second = await later.threads.appendMessage({ threadId: later.thread.id, parentId: later.answer.id, role: 'user', content: 'And in Paris?' })
    const secondAnswer = await later.threads.appendMessage({ threadId: later.thread.id, parentId: second.id, role: 'assistant', content: 'x', jobId: 'job-2' })
    expect(await titleAfterFirstAnswer({ threads: later.threads, config }, endedJob({ id: 'job-2', threadId: later.thread.id, messageId: secondAnswer.id }), demo)).toBeUndefined()

    const failed = await answeredThread()
    expect(await titleAfterFirstAnswer({ threads: failed.threads, config }, { ...failed.job, status: 'error' }, demo)).toBeUndefined()
    expect(await titleAfterFirstAnswer({ threads: failed.threads, config }, { ...failed.job, userId: 'mallory' }, demo)).toBeUndefined()
    const off = testServerConfig({ threads: { generateTitles: false } })
    expect(await titleAfterFirstAnswer({ threads: failed.threads, config: off }, failed.job, demo)).toBeUndefined()
    expect((await failed.threads.getThread(failed.thread.id))!.title).toBe('What time is it in Tokyo right now?')
  })

  it('titles again when the first answer is regenerated and the title is still the question\'s words', async () => {
    const { threads, thread, asked } = await answeredThread('Convert 10 km to miles')
    const again = await threads.appendMessage({ threadId: thread.id, parentId: asked.id, role: 'assistant', content: '6.2 miles', jobId: 'job-3', now: 5 })
    expect(await titleAfterFirstAnswer({ threads, config }, endedJob({ id: 'job-3', threadId: thread.id, messageId: again.id }), demo)).toBe('10 km to mi')
  })

  it('makes any reply a clean one-line title, or none', () => {
    expect(cleanTitle('Title: **"Trip to Tokyo".**')).toBe('Trip to Tokyo')
    expect(cleanTitle('\n\n  «Recette de crêpes»  \nextra line')).toBe('Recette de crêpes')
    expect(cleanTitle('# Planning a week in Lisbon')).toBe('Planning a week in Lisbon')
    expect(cleanTitle('A title that goes on and on far longer than anyone would ever want a title to go on')).toMatch(/^A title that goes on and on far longer than anyone would…$/)
    expect(cleanTitle('  "" ')).toBeUndefined()
    expect(cleanTitle('...')).toBeUndefined()
    expect(cleanTitle('**Title:** Calculating 6*7_x_')).toBe('Calculating 6*7_x')
  })

  it('reads the demo model\'s titles from the question, bounded however long it is', () => {
    expect(demoTitle('Question: weather in Berlin in celsius please\n\nAnswer: 12 °C')).toBe('Weather in Berlin')
    expect(demoTitle('Question: what is fifteen percent of 240?\n\nAnswer: 36')).toMatch(/^Calculating /)
    expect(demoTitle('Question: Tell me about the history of the Roman empire\n\nAnswer: …')).toBe('History Roman empire')
    expect(demoTitle('Question: hi\n\nAnswer: Hello')).toBe('A short chat')
    expect(demoTitle('Question: What did I send?\n(Attached: dot.png, list.csv)\n\nAnswer: I received 2 files')).toBe('dot.png, list.csv')
    expect(demoTitle('Question: \n(Attached: notes.md)\n\nAnswer: I received one file')).toBe('notes.md')
    expect(demoTitle(`Question: ${'word '.repeat(100_000)}`).length).toBeLessThan(60)
  })
})

describe('titles through OpenRouter', () => {
  const upstream = useFakeOpenRouter()

  it('sends one small request with the person\'s key, the question and the answer, and cleans the reply', async () => {
    upstream.script([textReply('Title: "Tokyo time check".')])
    const { threads, thread, job } = await answeredThread()
    const endpoint = resolveChatEndpoint('openai/gpt-4o-mini', testServerConfig({ openrouter: { baseUrl: upstream.url, apiKey: '' } }), 'sk-or-user-key')
    expect(await titleAfterFirstAnswer({ threads, config }, { ...job, model: 'openai/gpt-4o-mini' }, endpoint)).toBe('Tokyo time check')
    const request = upstream.requests.at(-1)!
    expect(request.headers.authorization).toBe('Bearer sk-or-user-key')
    expect(request.body).toMatchObject({ model: 'openai/gpt-4o-mini', max_tokens: 48 })
    expect(request.body.messages[0]).toMatchObject({ role: 'system', content: expect.stringContaining('title') })
    expect(request.body.messages[1]!.content).toContain('Question: What time is it in Tokyo right now?')
    expect((await threads.getThread(thread.id))!.title).toBe('Tokyo time check')
  })

  it('counts the title request against the person\'s daily budget, and makes none once that is used up', async () => {
    const endpoint = resolveChatEndpoint('openai/gpt-4o-mini', testServerConfig({ openrouter: { baseUrl: upstream.url, apiKey: 'k' } }))
    const recorded: Array<[string, { tokens: number, cost: number }]> = []
    const budgetLeft = (tokens: number) => ({ allowance: async () => ({ tokens, cost: Infinity }), record: async (userId: string, spent: { tokens: number, cost: number }) => void recorded.push([userId, spent]) })

    upstream.script([textReply('Tokyo time', { usage: { prompt: 120, completion: 6, cost: 0.0002 } })])
    const counted = await answeredThread()
    expect(await titleAfterFirstAnswer({ threads: counted.threads, config, budget: budgetLeft(5_000) }, counted.job, endpoint)).toBe('Tokyo time')
    expect(recorded).toEqual([['alice', { tokens: 126, cost: 0.0002, byModel: [{ model: counted.job.model, tokens: 126, cost: 0.0002 }] }]])

    const requestsBefore = upstream.requests.length
    const usedUp = await answeredThread()
    expect(await titleAfterFirstAnswer({ threads: usedUp.threads, config, budget: budgetLeft(0) }, usedUp.job, endpoint)).toBeUndefined()
    expect(upstream.requests).toHaveLength(requestsBefore)
    expect((await usedUp.threads.getThread(usedUp.thread.id))!.title).toBe('What time is it in Tokyo right now?')
    expect(recorded).toHaveLength(1)
  })

  it('keeps the question\'s words when the model fails, and stops a request under way at shutdown', async () => {
    upstream.script([{ type: 'http-error', status: 429, body: { error: { message: 'slow down' } } }])
    const failing = await answeredThread()
    const endpoint = resolveChatEndpoint('openai/gpt-4o-mini', testServerConfig({ openrouter: { baseUrl: upstream.url, apiKey: 'k', retryBaseDelayMs: 1 } }))
    expect(await titleAfterFirstAnswer({ threads: failing.threads, config }, failing.job, endpoint)).toBeUndefined()
    expect((await failing.threads.getThread(failing.thread.id))!.title).toBe('What time is it in Tokyo right now?')

    upstream.script([{ type: 'stall-headers' }])
    const stalled = await answeredThread()
    const titles = new ThreadTitles({ threads: stalled.threads, config })
    titles.after(stalled.job, endpoint)
    await titles.close()
    expect((await stalled.threads.getThread(stalled.thread.id))!.title).toBe('What time is it in Tokyo right now?')
  })
})
