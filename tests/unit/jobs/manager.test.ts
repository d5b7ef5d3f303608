import { beforeEach, describe, expect, it, vi } from 'vitest'
import { BackgroundJobManager } from '../../../server/lib/jobs/manager'
import { JobCapacityError } from '../../../server/lib/jobs/admission/caps'
import { JobLiveHub } from '../../../server/lib/jobs/live-hub'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { MissingApiKeyError } from '../../../server/lib/models/chat-endpoint'
import { clearServerTools } from '../../../server/lib/tools/registry'
import { createMemoryJobStore } from '../../../server/lib/stores/jobs/memory'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import type { JobStore } from '../../../server/lib/stores/jobs/job-store'
import { fakeChunkMeta, textReply, useFakeOpenRouter } from '../../support/fake-openrouter'
import { roleChunk } from '../../../server/lib/openrouter/chunks'
import { testServerConfig } from '../../support/server-config'
import { processTools } from '../../../server/lib/tools/run-tools'

const fake = useFakeOpenRouter()
let store: JobStore
let manager: BackgroundJobManager
const secretBox = createSecretBox('a test secret that is long enough to use')
const request = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'hi' }], fields: {} }

function newManager(overrides: Parameters<typeof testServerConfig>[0] = {}) {
  const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-server', retryBaseDelayMs: 5 }, backgroundJobs: { maxConcurrentJobs: 3 }, limits: { roles: { user: { jobsAtOnce: 2 } } }, ...overrides })
  store = createMemoryJobStore()
  manager = new BackgroundJobManager({ tools: processTools, store, hub: new JobLiveHub({ graceMs: 10 }), config, secretBox })
  return manager
}

beforeEach(() => {
  clearServerTools()
  fake.script(() => ({ type: 'stream', steps: [{ chunk: roleChunk(fakeChunkMeta) }, { stall: true }] }))
})

describe('BackgroundJobManager', () => {
  it('refuses a job over the per-user cap, then over the server cap, counting starts still being created', async () => {
    newManager()
    const starts = [manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request }), manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })]
    await expect(manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })).rejects.toMatchObject({ name: 'JobCapacityError', scope: 'user', limit: 2, retryAfterSeconds: 5 })
    await Promise.all(starts)
    await manager.startChatJob({ principal: { userId: 'b', role: 'user' }, request })
    const refusal = await manager.startChatJob({ principal: { userId: 'c', role: 'user' }, request }).catch(error => error)
    expect(JobCapacityError.isInstance(refusal)).toBe(true)
    expect(refusal.scope).toBe('server')
    expect(manager.runs.count).toBe(3)
    await manager.shutdown()
  })

  it('refuses a model that needs a key nobody gave, before creating anything', async () => {
    newManager({ openrouter: { apiKey: '' } })
    await expect(manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })).rejects.toBeInstanceOf(MissingApiKeyError)
    expect(await store.listJobs({ userId: 'a' })).toEqual([])
  })

  it('stores a user key only encrypted, and drops it when the job ends', async () => {
    newManager()
    fake.script(() => ({ type: 'stream', steps: [{ chunk: roleChunk(fakeChunkMeta) }, { stall: true }] }))
    const before = fake.requests.length
    const job = await manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request, userApiKey: 'sk-or-v1-users-own-key' })
    const stored = (await store.getJob(job.id))!
    expect(JSON.stringify(stored)).not.toContain('sk-or-v1-users-own-key')
    expect(secretBox.open(stored.apiKeyCiphertext!)).toBe('sk-or-v1-users-own-key')
    await vi.waitFor(() => expect(fake.requests[before]?.headers.authorization).toBe('Bearer sk-or-v1-users-own-key'), { timeout: 30_000 })
    expect(await manager.abortJob(job.id)).toBe(true)
    expect(await manager.abortJob(job.id)).toBe(false)
    expect((await store.getJob(job.id))!.apiKeyCiphertext).toBeUndefined()
  })

  it('fails a job that made no progress for jobTimeoutMs', async () => {
    newManager({ backgroundJobs: { jobTimeoutMs: 1000 } })
    const job = await manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })
    await manager.sweep(Date.now() + 500)
    expect(manager.runs.has(job.id)).toBe(true)
    await manager.sweep(Date.now() + 1000)
    await manager.runs.settled(job.id)
    expect(await store.getJob(job.id)).toMatchObject({ status: 'error', error: { kind: 'timeout' }, finishReason: 'timeout' })
  })

  it('deletes finished jobs after the retention time', async () => {
    newManager({ backgroundJobs: { completedJobRetentionMs: 60_000 } })
    fake.script(() => textReply('done'))
    const job = await manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })
    await manager.runs.settled(job.id)
    await manager.sweep(Date.now() + 30_000)
    expect(await store.getJob(job.id)).not.toBeNull()
    await manager.sweep(Date.now() + 120_000)
    expect(await store.getJob(job.id)).toBeNull()
  })

  it('resumes interrupted jobs on start-up, and fails the ones it cannot resume with a reason', async () => {
    newManager()
    fake.script(() => textReply('resumed answer'))
    const resumable = await store.createJob({ userId: 'a', threadId: 't', messageId: 'm', type: 'chat', model: request.model, request })
    const workflow = await store.createJob({ userId: 'a', threadId: 't', messageId: 'm', type: 'workflow', model: 'workflow' })
    const lostKey = await store.createJob({ userId: 'a', threadId: 't', messageId: 'm', type: 'chat', model: request.model, request, apiKeyCiphertext: createSecretBox('a different secret that is long enough').seal('sk-x') })
    expect(await manager.recoverInterruptedJobs()).toBe(1)
    await manager.runs.settled(resumable.id)
    expect(await store.getJob(resumable.id)).toMatchObject({ status: 'complete', content: 'resumed answer', resumeCount: 1 })
    expect(await store.getJob(workflow.id)).toMatchObject({ status: 'error', error: { kind: 'interrupted' } })
    expect(await store.getJob(lostKey.id)).toMatchObject({ status: 'error', error: { kind: 'interrupted', message: expect.stringMatching(/could not be recovered/) } })
  })

  it('does not resume a job that restarts interrupted more than maxResumes times, and says why', async () => {
    newManager()
    fake.script(() => textReply('resumed answer'))
    const again = await store.createJob({ userId: 'a', threadId: 't', messageId: 'm', type: 'chat', model: request.model, request })
    await store.updateRunState(again.id, { resumeCount: 1 })
    const looping = await store.createJob({ userId: 'a', threadId: 't', messageId: 'm', type: 'chat', model: request.model, request })
    await store.updateRunState(looping.id, { resumeCount: 2 })
    expect(await manager.recoverInterruptedJobs()).toBe(1)
    await manager.runs.settled(again.id)
    expect(await store.getJob(again.id)).toMatchObject({ status: 'complete', resumeCount: 2 })
    expect(await store.getJob(looping.id)).toMatchObject({ status: 'error', error: { kind: 'interrupted', message: expect.stringMatching(/interrupted by a server restart 3 times and is not resumed again/) } })
  })

  it('on shutdown stops runs at their checkpoint, refuses new jobs, and clears its timers', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] })
    try {
      newManager()
      manager.startSweeper()
      const job = await manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })
      await manager.shutdown()
      expect(manager.runs.count).toBe(0)
      expect((await store.getJob(job.id))!.status).toBe('streaming')
      await expect(manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })).rejects.toMatchObject({ scope: 'server' })
      expect(vi.getTimerCount()).toBe(0)
    } finally {
      vi.useRealTimers()
    }
  })

  it('lowers max_tokens to the role\'s clamp before the request goes upstream', async () => {
    newManager()
    fake.script(() => textReply('ok'))
    const before = fake.requests.length
    const job = await manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request: { ...request, fields: { max_tokens: 100_000, temperature: 0.5 } } })
    await manager.runs.settled(job.id)
    expect(fake.requests[before]!.body).toMatchObject({ max_tokens: 16_384, temperature: 0.5 })
  })

  it('stops a job that uses up its daily budget while it streams, keeps its text, and records what it used', async () => {
    const usage = createMemoryAccountBackend()
    const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-server' }, limits: { roles: { user: { dailyTokens: 20 } } } })
    store = createMemoryJobStore()
    manager = new BackgroundJobManager({ tools: processTools, store, hub: new JobLiveHub({ graceMs: 10 }), config, secretBox, usage })
    fake.script(() => textReply('word '.repeat(100), { pieceSize: 5, delayMs: 2 }))
    const job = await manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })
    await manager.runs.settled(job.id)
    const stored = (await store.getJob(job.id))!
    expect(stored).toMatchObject({ status: 'error', error: { kind: 'over-budget', message: expect.stringMatching(/daily budget of tokens.*text so far is kept/) } })
    expect(stored.content.length).toBeGreaterThanOrEqual(80)
    expect(stored.content.length).toBeLessThan(500)
    expect(stored.content).toBe('word '.repeat(100).slice(0, stored.content.length))
    const today = (await usage.getUsage('a', new Date().toISOString().slice(0, 10)))!
    expect(today).toMatchObject({ jobs: 1 })
    expect(today.tokens).toBeGreaterThanOrEqual(20)
    await expect(manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })).rejects.toMatchObject({ name: 'BudgetExceededError', budget: 'tokens', limit: 20 })
    await expect(manager.startChatJob({ principal: { userId: 'b', role: 'user' }, request })).resolves.toMatchObject({ userId: 'b' })
    await manager.shutdown()
  })
})

describe('budget reservations', () => {
  const today = () => new Date().toISOString().slice(0, 10)
  function budgetManager(dailyTokens: number) {
    const usage = createMemoryAccountBackend()
    const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-server', retryBaseDelayMs: 5 }, backgroundJobs: { maxConcurrentJobs: 20 }, limits: { fairShare: 1, roles: { user: { dailyTokens, jobsAtOnce: 10, workflowModelCalls: 200 } } } })
    store = createMemoryJobStore()
    manager = new BackgroundJobManager({ tools: processTools, store, hub: new JobLiveHub({ graceMs: 10 }), config, secretBox, usage })
    return usage
  }

  it('lets one of five answers started at once against a 40-token budget run, and refuses the rest with 429 while it holds the rest', async () => {
    const usage = budgetManager(40)
    // Every request uses 36 tokens: more than one would pass the budget by most of a request.
    fake.script(() => textReply('fine', { usage: { prompt: 20, completion: 16 } }))
    const starts = await Promise.allSettled(Array.from({ length: 5 }, () => manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })))
    const started = starts.flatMap(start => (start.status === 'fulfilled' ? [start.value] : []))
    const refused = starts.flatMap(start => (start.status === 'rejected' ? [start.reason] : []))
    expect(started).toHaveLength(1)
    expect(refused.map(error => error.name)).toEqual(['BudgetHeldError', 'BudgetHeldError', 'BudgetHeldError', 'BudgetHeldError'])
    await manager.runs.settled(started[0]!.id)
    expect((await store.getJob(started[0]!.id))!.status).toBe('complete')
    expect((await usage.getUsage('a', today()))!.tokens).toBe(36)
    // Once it ended, what is left (4 tokens) admits the next one; after it the budget is spent.
    const next = await manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })
    await manager.runs.settled(next.id)
    expect((await usage.getUsage('a', today()))!.tokens).toBe(72)
    await expect(manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request })).rejects.toMatchObject({ name: 'BudgetExceededError' })
    await manager.shutdown()
  })

  it('makes a workflow\'s twenty parallel agents reserve before they start: the run passes its budget by less than one request', async () => {
    const usage = budgetManager(40)
    fake.script(() => textReply('fine', { usage: { prompt: 20, completion: 16 } }))
    const agents = Array.from({ length: 20 }, (_, index) => `agent${index}`)
    const definition = {
      version: 1 as const,
      name: 'Twenty at once',
      description: '',
      defaultModel: 'openai/gpt-4o-mini',
      nodes: [
        { id: 'start', kind: 'start' as const },
        { id: 'fan', kind: 'parallel' as const },
        ...agents.map(id => ({ id, kind: 'agent' as const, systemPrompt: '', prompt: '{{prompt}}', tools: [], maxToolRounds: 0 })),
        { id: 'join', kind: 'merge' as const },
        { id: 'out', kind: 'output' as const },
      ],
      edges: [{ from: 'start', to: 'fan' }, ...agents.flatMap(id => [{ from: 'fan', to: id }, { from: id, to: 'join' }]), { from: 'join', to: 'out' }],
    }
    const before = fake.requests.length
    const job = await manager.startWorkflowJob({ principal: { userId: 'w', role: 'user' }, workflowId: 'wf', definition, prompt: 'go' })
    await manager.runs.settled(job.id)
    const ended = (await store.getJob(job.id))!
    expect(ended, JSON.stringify(ended.error)).toMatchObject({ status: "error", error: { kind: "over-budget" } })
    // The first agent holds the whole budget; the second gets the 4 tokens it left; then it is spent.
    expect(fake.requests.length - before).toBe(2)
    expect((await usage.getUsage('w', today()))!.tokens).toBe(72)
    await manager.shutdown()
  })
})
