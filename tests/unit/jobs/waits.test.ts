/**
 * What a job asks its user, against the manager and a memory store: requests end with their job
 * (closed, dropped from listings, a late answer 410), and only the tab holding a browser tool's
 * claim may post its result.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { BackgroundJobManager } from '../../../server/lib/jobs/manager'
import { JobLiveHub } from '../../../server/lib/jobs/live-hub'
import { JobInputs } from '../../../server/lib/jobs/waits/job-inputs'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { registerServerTool } from '../../../server/lib/tools/registry'
import { createMemoryJobStore } from '../../../server/lib/stores/jobs/memory'
import type { JobStore } from '../../../server/lib/stores/jobs/job-store'
import type { JobInputRequest } from '../../../shared/types/input-request'
import { textReply, toolCallReply, useFakeOpenRouter, type RecordedRequest } from '../../support/fake-openrouter'
import { registerBuiltinToolsOnly } from '../../support/upstream'
import { testServerConfig } from '../../support/server-config'
import { processTools } from '../../../server/lib/tools/run-tools'

const fake = useFakeOpenRouter()
const secretBox = createSecretBox('a test secret that is long enough to use')
const sendEmail = vi.fn(async () => 'sent')
let store: JobStore
let manager: BackgroundJobManager

const LOCATE = { name: 'get_location', description: 'Where the user is', parameters: { type: 'object', properties: {} } }

function newManager(maxConcurrentJobs = 20) {
  const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-server', retryBaseDelayMs: 5 }, backgroundJobs: { maxConcurrentJobs, waits: { timeoutMs: 60_000, claimMs: 30_000, pollMs: 50 } }, limits: { fairShare: 1 } })
  store = createMemoryJobStore()
  manager = new BackgroundJobManager({ tools: processTools, store, hub: new JobLiveHub({ graceMs: 10 }), config, secretBox })
}

/** The model calls the tool the user names, then repeats its result. */
function scriptToolThenEcho(): void {
  fake.script((request: RecordedRequest) => {
    const last = request.body.messages.at(-1)!
    if (last.role === 'tool') return textReply(`Tool said: ${String(last.content)}`)
    const text = String(request.body.messages.findLast(message => message.role === 'user')!.content)
    return text.startsWith('locate')
      ? toolCallReply([{ id: 'call_loc', name: 'get_location', arguments: '{}' }])
      : toolCallReply([{ id: 'call_mail', name: 'send_email', arguments: '{"to":"a@example.com"}' }])
  })
}

async function openRequestOf(jobId: string): Promise<JobInputRequest> {
  return vi.waitFor(async () => {
    const [request] = (await manager.inputs.ofJob(jobId)).filter(item => item.status === 'open')
    if (!request) throw new Error('nothing asked yet')
    return request
  }, { timeout: 30_000 })
}

beforeEach(() => {
  registerBuiltinToolsOnly()
  registerServerTool({ type: 'function', function: { name: 'send_email', parameters: { type: 'object', properties: { to: { type: 'string' } } } }, runtime: 'server', needsApproval: true }, sendEmail)
  sendEmail.mockClear()
  scriptToolThenEcho()
  newManager()
})

describe('requests end with their job', () => {
  it('closes what a stopped job asked: listings drop it at once and a late answer gets 410', async () => {
    const job = await manager.startChatJob({ principal: { userId: 'u', role: 'user' }, request: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'mail it' }], fields: {} } })
    const request = await openRequestOf(job.id)
    expect(await manager.inputs.openFor('u')).toHaveLength(1)
    await manager.abortJob(job.id)

    expect(await manager.inputs.openFor('u')).toEqual([])
    expect(await store.inputRequests.get(job.id, request.id)).toMatchObject({ status: 'cancelled' })
    const ended = (await store.getJob(job.id))!
    await expect(manager.inputs.answer(ended, request.id, { approved: true })).rejects.toMatchObject({ statusCode: 410, message: expect.stringContaining('job has ended') })
    expect(sendEmail).not.toHaveBeenCalled()
  })

  it('drops and closes a request left open by a job that ended without closing it (a crash in between)', async () => {
    const job = await manager.startChatJob({ principal: { userId: 'u', role: 'user' }, request: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'mail it' }], fields: {} } })
    const request = await openRequestOf(job.id)
    // The job is ended behind the run's back, as another instance or a crash would leave it.
    await store.endJob(job.id, { status: 'error', error: { kind: 'internal', message: 'gone' } })
    expect(await manager.inputs.openFor('u')).toEqual([])
    expect(await store.inputRequests.get(job.id, request.id)).toMatchObject({ status: 'cancelled' })
    await manager.shutdown()
  })
})

describe('waiting does not hold a running slot', () => {
  const mail = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'mail it' }], fields: {} }

  it('lets another user\'s answer start and finish while jobs wait, and runs the waiting ones once answered', async () => {
    newManager(2)
    const waiting = [await manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request: mail }), await manager.startChatJob({ principal: { userId: 'a', role: 'user' }, request: mail })]
    const requests = await Promise.all(waiting.map(job => openRequestOf(job.id)))
    await vi.waitFor(async () => expect((await manager.health()).jobs).toMatchObject({ running: 0, waiting: 2 }), { timeout: 30_000 })

    fake.script(() => textReply('Hello, b.'))
    const other = await manager.startChatJob({ principal: { userId: 'b', role: 'user' }, request: { ...mail, messages: [{ role: 'user', content: 'hi' }] } })
    await manager.runs.settled(other.id)
    expect(await store.getJob(other.id)).toMatchObject({ status: 'complete', content: 'Hello, b.' })

    scriptToolThenEcho()
    for (const [index, job] of waiting.entries()) await manager.inputs.answer((await store.getJob(job.id))!, requests[index]!.id, { approved: true })
    await Promise.all(waiting.map(job => manager.runs.settled(job.id)))
    for (const job of waiting) expect(await store.getJob(job.id)).toMatchObject({ status: 'complete', content: 'Tool said: sent' })
    expect(sendEmail).toHaveBeenCalledTimes(2)
  })
})

describe('a run\'s total waiting time', () => {
  it('is bounded: a request asked when little is left expires with what is left, not the whole wait', async () => {
    store = createMemoryJobStore()
    const inputs = new JobInputs({ store, hub: new JobLiveHub({ graceMs: 10 }), settings: { timeoutMs: 60_000, claimMs: 30_000, pollMs: 50, maxTotalMs: 5_000 } })
    const job = await store.createJob({ userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x' })
    // An earlier request of the job that stayed open 4.5 s.
    const earlier = await store.inputRequests.open({ jobId: job.id, userId: 'u', kind: 'approval', key: 'earlier', title: 'Earlier', expiresAt: Date.now() + 60_000, now: Date.now() - 4_500 })
    await store.inputRequests.close(job.id, earlier.id, 'expired', Date.now())
    const asked = await inputs.ask({ jobId: job.id, userId: 'u', kind: 'approval', key: 'later', title: 'Later' })
    expect(asked).toMatchObject({ request: { status: 'expired' } })
    const { request } = asked as { request: JobInputRequest }
    expect(request.expiresAt - request.createdAt).toBeLessThanOrEqual(1_000)
  })
})

describe('browser tool claims', () => {
  const locate = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user' as const, content: 'locate me' }], fields: {}, clientTools: [LOCATE] }

  it('takes a result only from the tab that holds the claim; a tab that lost it gets 409 and its result is not used', async () => {
    const job = await manager.startChatJob({ principal: { userId: 'u', role: 'user' }, request: locate })
    const request = await openRequestOf(job.id)
    const running = (await store.getJob(job.id))!
    expect(await manager.inputs.claim('u', job.id, request.id, 'tab-one-id')).toMatchObject({ claimed: true })

    await expect(manager.inputs.answer(running, request.id, { result: { city: 'Wrong' }, claimant: 'tab-two-id' })).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining('Another tab') })
    await expect(manager.inputs.answer(running, request.id, { result: { city: 'Wrong' } })).rejects.toMatchObject({ statusCode: 409 })
    expect((await manager.inputs.answer(running, request.id, { result: { city: 'Oslo' }, claimant: 'tab-one-id' })).status).toBe('answered')

    await manager.runs.settled(job.id)
    expect((await store.getJob(job.id))!.content).toContain('Oslo')
    expect((await store.getJob(job.id))!.content).not.toContain('Wrong')
  })

  it('a lapsed claim that another tab took is no longer the first tab\'s', async () => {
    const job = await manager.startChatJob({ principal: { userId: 'u', role: 'user' }, request: locate })
    const request = await openRequestOf(job.id)
    const running = (await store.getJob(job.id))!
    expect(await store.inputRequests.claim(job.id, request.id, 'tab-one-id', { claimMs: 30_000, now: Date.now() - 60_000 })).toMatchObject({ ok: true })
    expect(await manager.inputs.claim('u', job.id, request.id, 'tab-two-id')).toMatchObject({ claimed: true })
    await expect(manager.inputs.answer(running, request.id, { result: { city: 'Late' }, claimant: 'tab-one-id' })).rejects.toMatchObject({ statusCode: 409 })
    expect((await manager.inputs.answer(running, request.id, { result: { city: 'Bergen' }, claimant: 'tab-two-id' })).status).toBe('answered')
    await manager.runs.settled(job.id)
    expect((await store.getJob(job.id))!.content).toContain('Bergen')
  })
})
