/**
 * Memory against the built server: a person turns it on, the offline demo model remembers what
 * they say of themselves and recalls it in another conversation, a real model (the fake upstream)
 * gets the memories in its instructions and the memory tools only while memory is on; the person
 * changes, deletes and exports them; another person, a guest and a person the policy denies never
 * reach them; bounds answer 400/409 while others are answered; and a `remember` is kept once across
 * a kill -9 of the server mid-answer. Beside the memories, what a person's groups tell every answer
 * (their instructions, first) and the model their new chats start with.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { unzipSync } from 'fflate'
import { gatedTextReply, startFakeOpenRouter, textReply, toolCallReply, type FakeOpenRouter, type RecordedRequest } from '../support/fake-openrouter'
import { registerAccount, SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { startBuiltApp, useAppServers, useDataDirs, type RunningApp } from '../support/built-app'
import type { MemoryView } from '../../shared/types/memory'

const DEMO = 'or3/offline-demo'
let app: RunningApp
let fake: FakeOpenRouter
let admin: SessionClient
let ann: SessionClient

beforeAll(async () => {
  fake = await startFakeOpenRouter()
  app = await startBuiltApp({ NUXT_OPENROUTER_BASE_URL: fake.url, NUXT_OPENROUTER_API_KEY: 'sk-or-test', NUXT_THREADS_GENERATE_TITLES: 'false', NUXT_TOOLS_MEMORY_PER_PERSON: '5' })
  admin = await registerAccount(app.url, 'Root')
  const opened = await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signup: 'open' }) })
  if (opened.status !== 200) throw new Error(`opening sign-up answered ${opened.status}`)
  ann = await registerAccount(app.url, 'Ann')
}, 240_000)
afterAll(async () => {
  await app?.stop()
  await fake?.close()
})

/** Asks `content` in a conversation (a new one unless given) and waits for the answer. */
async function ask(client: SessionClient, content: string, model = DEMO, threadId?: string) {
  const thread = threadId ? { id: threadId } : await (await client.post('/api/threads', {})).json()
  const sent = await client.post(`/api/threads/${thread.id}/messages`, { content, model })
  if (sent.status !== 201 && sent.status !== 200 && sent.status !== 202) throw new Error(`sending answered ${sent.status}: ${await sent.text()}`)
  return { threadId: thread.id as string, job: await waitForJobEnd(client, (await sent.json()).jobId, 60_000) }
}

const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map(tool => tool.function.name)
const systemOf = (request: RecordedRequest) => request.body.messages.find(message => message.role === 'system')?.content as string | undefined

describe('memory', () => {
  it('is off until the person turns it on; then the demo model remembers, recalls in another conversation, and forgets', async () => {
    expect(await ann.json<MemoryView>('/api/me/memory')).toEqual({ enabled: false, memories: [], max: 5 })
    // Off: the memory tools are not offered, so nothing is kept.
    const off = await ask(ann, 'remember that my dog is called Rex')
    expect(off.job.toolRounds).toEqual([])
    expect((await ann.json<MemoryView>('/api/me/memory')).memories).toEqual([])

    expect(await ann.json<MemoryView>('/api/me/memory', { method: 'PUT', body: JSON.stringify({ enabled: true }), headers: { 'content-type': 'application/json' } })).toMatchObject({ enabled: true })
    const kept = await ask(ann, 'remember that my dog is called Rex')
    expect(kept.job.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'remember' })
    expect(kept.job.content).toContain('I will remember that: "Their dog is called Rex"')
    const { memories } = await ann.json<MemoryView>('/api/me/memory')
    expect(memories).toEqual([expect.objectContaining({ text: 'Their dog is called Rex', source: 'assistant', threadId: kept.threadId })])

    const recalled = await ask(ann, "What's my dog called?")
    expect(recalled.threadId).not.toBe(kept.threadId)
    expect(recalled.job.content).toContain('Their dog is called Rex')

    const forgotten = await ask(ann, 'forget that my dog is called Rex')
    expect(forgotten.job.content).toContain('Forgotten')
    expect((await ann.json<MemoryView>('/api/me/memory')).memories).toEqual([])
  }, 120_000)

  it('goes into a real model\'s instructions with the tools while on, and neither while off; the person edits, deletes and exports', async () => {
    const added = await ann.post('/api/me/memory', { text: 'Prefers metric units' })
    expect(added.status).toBe(201)
    const memory = await added.json()
    fake.script(() => textReply('Noted.'))
    const before = fake.requests.length
    await ask(ann, 'How tall is the Eiffel tower?', 'openai/gpt-4o-mini')
    const request = fake.requests.slice(before)[0]!
    expect(systemOf(request)).toContain(`(${memory.id}) Prefers metric units`)
    expect(toolNames(request)).toEqual(expect.arrayContaining(['remember', 'recall', 'forget']))

    const edited = await ann.fetch(`/api/me/memory/${memory.id}`, { method: 'PATCH', body: JSON.stringify({ text: 'Prefers imperial units' }), headers: { 'content-type': 'application/json' } })
    expect(await edited.json()).toMatchObject({ id: memory.id, text: 'Prefers imperial units' })
    const exported = unzipSync(new Uint8Array(await (await ann.fetch('/api/me/export')).arrayBuffer()))
    expect(JSON.parse(new TextDecoder().decode(exported['memory.json']))).toMatchObject({ enabled: true, memories: [{ id: memory.id, text: 'Prefers imperial units', source: 'person' }] })

    await ann.json('/api/me/memory', { method: 'PUT', body: JSON.stringify({ enabled: false }), headers: { 'content-type': 'application/json' } })
    const offAt = fake.requests.length
    await ask(ann, 'How tall is the Eiffel tower?', 'openai/gpt-4o-mini')
    const offRequest = fake.requests.slice(offAt)[0]!
    expect(systemOf(offRequest) ?? '').not.toContain('imperial')
    expect(toolNames(offRequest)).not.toContain('recall')
    // Off keeps them; deleting one is for good.
    expect((await ann.json<MemoryView>('/api/me/memory')).memories).toHaveLength(1)
    expect((await ann.fetch(`/api/me/memory/${memory.id}`, { method: 'DELETE' })).status).toBe(200)
    expect((await ann.fetch(`/api/me/memory/${memory.id}`, { method: 'DELETE' })).status).toBe(404)
  }, 120_000)

  it('is kept from other people, guests and those the policy denies, and bounded with answers that say what to fix while others are answered', async () => {
    const { id } = await (await ann.post('/api/me/memory', { text: 'Works on billing' })).json()
    const bob = await registerAccount(app.url, 'Bob')
    expect((await bob.json<MemoryView>('/api/me/memory')).memories).toEqual([])
    expect((await bob.fetch(`/api/me/memory/${id}`, { method: 'PATCH', body: JSON.stringify({ text: 'mine' }), headers: { 'content-type': 'application/json' } })).status).toBe(404)
    expect((await bob.fetch(`/api/me/memory/${id}`, { method: 'DELETE' })).status).toBe(404)
    expect((await bob.fetch('/api/me/memory', { method: 'DELETE' })).status).toBe(200)
    expect((await ann.json<MemoryView>('/api/me/memory')).memories.map(memory => memory.id)).toContain(id)

    const guest = new SessionClient(app.url)
    expect(await guest.json<MemoryView>('/api/me/memory')).toMatchObject({ enabled: false, unavailable: 'guest' })
    const refused = await guest.fetch('/api/me/memory', { method: 'PUT', body: JSON.stringify({ enabled: true }), headers: { 'content-type': 'application/json' } })
    expect(refused.status).toBe(409)
    expect((await refused.json()).message).toContain('sign up')

    expect((await admin.fetch('/api/admin/tool-policy', { method: 'PUT', body: JSON.stringify({ rules: [{ name: 'no memory for Bob', effect: 'deny', tools: ['capability:memory'], users: ['Bob'] }] }), headers: { 'content-type': 'application/json' } })).status).toBe(200)
    expect(await bob.json<MemoryView>('/api/me/memory')).toMatchObject({ unavailable: 'policy', reason: expect.stringContaining('no memory for Bob') })
    expect((await bob.fetch('/api/me/memory', { method: 'PUT', body: JSON.stringify({ enabled: true }), headers: { 'content-type': 'application/json' } })).status).toBe(409)

    const tooLong = await ann.post('/api/me/memory', { text: 'x'.repeat(501) })
    expect(tooLong.status).toBe(400)
    expect((await tooLong.json()).message).toContain('at most 500 characters')
    expect((await ann.post('/api/me/memory', { text: 'fine', extra: 1 })).status).toBe(400)
    // A flood of adds past the bound: the rest refused with what to do, and another person answered meanwhile.
    const flood = Promise.all(Array.from({ length: 30 }, (_, index) => ann.post('/api/me/memory', { text: `fact number ${index}` })))
    expect((await bob.fetch('/api/me/memory')).status).toBe(200)
    const statuses = (await flood).map(response => response.status)
    expect(statuses.filter(status => status === 201)).toHaveLength(4)
    expect(statuses.filter(status => status !== 201).every(status => status === 409)).toBe(true)
    expect((await ann.json<MemoryView>('/api/me/memory')).memories).toHaveLength(5)
    expect((await ann.fetch('/api/me/memory', { method: 'DELETE' })).status).toBe(200)
  }, 120_000)
})

describe('a group\'s instructions and default model', () => {
  it('go first into every answer of its members\' (not of others\'), and give their new chats a model unless they chose one', async () => {
    const json = { 'content-type': 'application/json' }
    expect((await admin.fetch('/api/admin/groups/Support', { method: 'PUT', headers: json, body: JSON.stringify({ instructions: 'Answer as the support desk of Acme.', defaultModel: 'openai/gpt-4o-mini' }) })).status).toBe(200)
    const bad = await admin.fetch('/api/admin/groups/Support', { method: 'PUT', headers: json, body: JSON.stringify({ defaultModel: 'not a model' }) })
    expect(bad.status).toBe(400)
    const sam = await registerAccount(app.url, 'Sam')
    const { user } = await sam.json('/api/auth/me')
    expect((await admin.fetch(`/api/admin/users/${user.id}/groups`, { method: 'PUT', headers: json, body: JSON.stringify({ groups: ['Support'] }) })).status).toBe(200)
    expect(await sam.json('/api/me/preferences')).toMatchObject({ teamDefaultModel: 'openai/gpt-4o-mini' })
    expect((await ann.json('/api/me/preferences')).teamDefaultModel).toBeUndefined()

    fake.script(() => textReply('Hello from support.'))
    const before = fake.requests.length
    const thread = await (await sam.post('/api/threads', {})).json()
    expect((await sam.fetch(`/api/threads/${thread.id}`, { method: 'PATCH', headers: json, body: JSON.stringify({ settings: { systemPrompt: 'Be brief.' } }) })).status).toBe(200)
    await ask(sam, 'Where is my order?', 'openai/gpt-4o-mini', thread.id)
    expect(systemOf(fake.requests.slice(before)[0]!)).toBe('Answer as the support desk of Acme.\n\nBe brief.')
    const annAt = fake.requests.length
    await ask(ann, 'Where is my order?', 'openai/gpt-4o-mini')
    expect(systemOf(fake.requests.slice(annAt)[0]!) ?? '').not.toContain('Acme')
  }, 120_000)
})

describe('a remember across a kill -9', () => {
  const dirs = useDataDirs('or3-memory-')
  const servers = useAppServers(() => ({ NUXT_OPENROUTER_BASE_URL: fake.url, NUXT_OPENROUTER_API_KEY: 'sk-or-test', NUXT_THREADS_GENERATE_TITLES: 'false' }))

  it('is kept once when the server dies while the answer after it streams, and the answer ends after the restart', async () => {
    const dataDir = dirs.fresh()
    let restarted = false
    const stalled = gatedTextReply(['Noted ', 'never'])
    const isAfterTool = (request: RecordedRequest) => request.body.messages.at(-1)?.role === 'tool'
    fake.script(request => isAfterTool(request) ? (restarted ? textReply('I will remember that.') : stalled.reply) : toolCallReply([{ id: 'call_remember_1', name: 'remember', arguments: JSON.stringify({ text: 'Their birthday is in May' }) }]))
    const first = await servers.start({ NUXT_DATA_DIR: dataDir })
    const client = await registerAccount(first.url, 'Kim')
    await client.json('/api/me/memory', { method: 'PUT', body: JSON.stringify({ enabled: true }), headers: { 'content-type': 'application/json' } })
    const thread = await (await client.post('/api/threads', {})).json()
    const before = fake.requests.length
    const jobId = (await (await client.post(`/api/threads/${thread.id}/messages`, { content: 'My birthday is in May', model: 'openai/gpt-4o-mini' })).json()).jobId as string
    try {
      await vi.waitFor(() => expect(fake.requests.slice(before).filter(isAfterTool)).toHaveLength(1), { timeout: 30_000, interval: 50 })
    } finally {
      await first.stop('SIGKILL')
    }
    restarted = true
    const second = await servers.start({ NUXT_DATA_DIR: dataDir })
    const again = new SessionClient(second.url)
    again.cookie = client.cookie
    expect(await waitForJobEnd(again, jobId, 60_000)).toMatchObject({ status: 'complete', content: 'I will remember that.' })
    expect((await again.json<MemoryView>('/api/me/memory')).memories).toEqual([expect.objectContaining({ text: 'Their birthday is in May' })])
  }, 180_000)
})
