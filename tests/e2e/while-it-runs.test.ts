/**
 * While an answer runs, and what it builds (issue 55), end to end on the built server with the fake
 * OpenRouter: messages queued while an answer runs start after it, once, in the person's order;
 * "Send now" hands one to the running answer, which the model reads at its next round boundary,
 * once; both hold across a kill -9 of the server. And an HTML page an answer built is served in a
 * sandbox of its own, to its owner and through a share link only. Dictation is made into text by
 * the operator's speech-to-text endpoint, bounded.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { roleChunk } from '../../server/lib/openrouter/chunks'
import { fakeChunkMeta, gatedTextReply, textReply, toolCallReply, useFakeOpenRouter, type FakeReply, type RecordedRequest, type StreamStep } from '../support/fake-openrouter'
import { registerAccount, SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useAppServers, useBuiltApp } from '../support/built-app'
import type { QueuedMessage } from '../../shared/types/message-queue'
import type { ThreadWithMessages } from '../../shared/types/thread'

const MODEL = 'openai/gpt-4o-mini'
const stall: FakeReply = { type: 'stream', steps: [{ chunk: roleChunk(fakeChunkMeta) }, { stall: true }] }

const fake = useFakeOpenRouter()
let root: string

function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NUXT_OPENROUTER_BASE_URL: fake.url,
    NUXT_OPENROUTER_API_KEY: 'sk-or-v1-message-queue-test-key',
    NUXT_OPENROUTER_RETRY_BASE_DELAY_MS: '10',
    NUXT_SESSION_PASSWORD: 'a-message-queue-test-session-password-long-enough',
    ...extra,
  }
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'or3-message-queue-'))
})
afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true })
})

/** The person's last turn of a request (a question, or a message sent to the running answer). */
const lastUser = (request: RecordedRequest) => String(request.body.messages.findLast(message => message.role === 'user')?.content ?? '')
/** Whether a request is an answer's (not a title's, which comes with a system prompt of its own). */
const isTitle = (request: RecordedRequest) => String(request.body.messages[0]?.content ?? '').includes('title')
const answerRequests = (since: number) => fake.requests.slice(since).filter(request => !isTitle(request))
/** Answer requests since `since` whose conversation has the person's turn `text`. */
const askedWith = (since: number, text: string) => answerRequests(since).filter(request => request.body.messages.some(message => message.role === 'user' && message.content === text))
/** Answer requests since `since` asking `text` (the person's last turn). */
const asked = (since: number, text: string) => answerRequests(since).filter(request => lastUser(request) === text)

/** `reply` held after its first step until `gate` opens. */
function held(reply: FakeReply, gate: Promise<unknown>): FakeReply {
  if (reply.type !== 'stream') return reply
  const [first, ...rest] = reply.steps
  return { type: 'stream', steps: [first!, { until: gate } as StreamStep, ...rest] }
}

async function newThread(client: SessionClient): Promise<string> {
  const created = await client.post('/api/threads', {})
  expect(created.status).toBe(201)
  return (await created.json()).id
}

async function send(client: SessionClient, threadId: string, content: string): Promise<{ jobId: string }> {
  const sent = await client.post(`/api/threads/${threadId}/messages`, { content, model: MODEL })
  expect(sent.status).toBe(202)
  return sent.json()
}

async function queue(client: SessionClient, threadId: string, content: string): Promise<QueuedMessage[]> {
  const queued = await client.post(`/api/threads/${threadId}/queue`, { content, model: MODEL })
  expect(queued.status).toBe(201)
  return (await queued.json()).items
}

/** Waits until the conversation has `answers` answers, all ended, and nothing queued. */
async function settled(client: SessionClient, threadId: string, answers: number): Promise<ThreadWithMessages> {
  let view!: ThreadWithMessages
  await vi.waitFor(async () => {
    view = await client.json<ThreadWithMessages>(`/api/threads/${threadId}`)
    const ended = view.messages.filter(message => message.role === 'assistant' && message.status !== 'streaming')
    expect(ended).toHaveLength(answers)
    expect(view.messages.filter(message => message.role === 'assistant')).toHaveLength(answers)
    expect(view.queue).toBeUndefined()
  }, { timeout: 30_000, interval: 50 })
  return view
}


/** A workflow whose agent step may call the calculator once, then a summary. */
const steeredFlow = {
  version: 1,
  name: 'Research, steered',
  defaultModel: MODEL,
  nodes: [
    { id: 'start', kind: 'start' },
    { id: 'research', kind: 'agent', systemPrompt: 'RESEARCH: use your tools.', prompt: '{{prompt}}', tools: ['calculate'], maxToolRounds: 2 },
    { id: 'out', kind: 'output' },
  ],
  edges: [{ from: 'start', to: 'research' }, { from: 'research', to: 'out' }],
}
const isResearch = (request: RecordedRequest) => String(request.body.messages[0]?.content ?? '').startsWith('RESEARCH')

/** Saves the steered workflow and starts a run of it; its job's id. */
async function startSteeredRun(client: SessionClient, prompt: string): Promise<string> {
  const saved = await client.post('/api/workflows', { definition: steeredFlow })
  expect(saved.status).toBe(201)
  const started = await client.post(`/api/workflows/${(await saved.json()).id}/run`, { prompt })
  expect(started.status).toBe(202)
  return (await started.json()).jobId
}

/** Waits until step `nodeId` of run `jobId` is running. */
async function stepRunning(client: SessionClient, jobId: string, nodeId: string): Promise<void> {
  await vi.waitFor(async () => {
    const job = await client.json<{ workflowState?: { nodeStates: Record<string, { status: string }> } }>(`/api/jobs/${jobId}`)
    expect(job.workflowState?.nodeStates[nodeId]?.status).toBe('running')
  }, { timeout: 15_000, interval: 50 })
}

/** The account of this server's tests that need one (sign-up closes after the first, its admin). */
let account: Promise<SessionClient> | undefined
const signedIn = () => (account ??= registerAccount(app.url, 'Builder'))

/** One server for the tests that need no restart (with dictation through the fake's speech-to-text). */
const app = useBuiltApp(() => serverEnv({ NUXT_VOICE_TRANSCRIPTION_MODEL: 'whisper-1', NUXT_VOICE_AUDIO_BYTES: '20000', NUXT_IMAGES_MODEL: 'fake/image-model', NUXT_VOICE_SPEECH_MODEL: 'tts-1', NUXT_VOICE_SPEECH_CHARS: '200' }))

describe('the queue on one server', () => {
  it('starts queued messages after the running answer, once each, in the order the person left them (edited, moved, one removed)', async () => {
    const alice = new SessionClient(app.url)
    const threadId = await newThread(alice)
    const first = gatedTextReply(['Thinking about it', ' — done.'])
    const before = fake.requests.length
    fake.script(request => lastUser(request) === 'first' ? first.reply : textReply(`re: ${lastUser(request)}`))
    await send(alice, threadId, 'first')
    await vi.waitFor(() => expect(asked(before, 'first')).toHaveLength(1), { timeout: 10_000, interval: 20 })

    const [second] = await queue(alice, threadId, 'second')
    await queue(alice, threadId, 'third')
    const items = await queue(alice, threadId, 'fourth')
    expect(items.map(item => item.content)).toEqual(['second', 'third', 'fourth'])
    const [, third, fourth] = items
    // Edited, moved to the front, and one removed.
    expect((await alice.fetch(`/api/threads/${threadId}/queue/${third!.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'third, edited' }) })).status).toBe(200)
    const reordered = await alice.fetch(`/api/threads/${threadId}/queue`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ order: [fourth!.id, third!.id, second!.id] }) })
    expect((await reordered.json()).items.map((item: QueuedMessage) => item.content)).toEqual(['fourth', 'third, edited', 'second'])
    expect((await alice.fetch(`/api/threads/${threadId}/queue/${second!.id}`, { method: 'DELETE' })).status).toBe(200)
    // The conversation's view carries its queue (another tab shows it at its next read).
    const view = await alice.json<ThreadWithMessages>(`/api/threads/${threadId}`)
    expect(view.queue?.map(item => item.content)).toEqual(['fourth', 'third, edited'])
    expect(view.queue?.[0]).not.toHaveProperty('apiKeyCiphertext')
    // Nothing of the queue went upstream while the answer ran.
    expect(asked(before, 'fourth')).toEqual([])

    first.openAll()
    const done = await settled(alice, threadId, 3)
    expect(done.messages.map(message => message.role === 'user' ? message.content : message.status)).toEqual(['first', 'complete', 'fourth', 'complete', 'third, edited', 'complete'])
    // The queued message's id is its question's.
    expect(done.messages[2]!.id).toBe(fourth!.id)
    expect(asked(before, 'fourth')).toHaveLength(1)
    expect(asked(before, 'third, edited')).toHaveLength(1)
    expect(asked(before, 'second')).toEqual([])
    // The later answer was asked with the conversation before it.
    expect(asked(before, 'third, edited')[0]!.body.messages.map(message => message.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user'])
  })

  it('refuses what it cannot take with a message saying what to fix, and never shows one person\'s queue to another', async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    const threadId = await newThread(alice)
    const empty = await alice.post(`/api/threads/${threadId}/queue`, { content: '   ', model: MODEL })
    expect(empty.status).toBe(400)
    expect((await empty.json()).message).toMatch(/write a message/)
    const extra = await alice.post(`/api/threads/${threadId}/queue`, { content: 'hi', model: MODEL, attachments: [] })
    expect(extra.status).toBe(400)
    // With an answer running, messages wait (in a conversation with no answer yet, one would start at once).
    const gate = gatedTextReply(['Still going', '.'])
    fake.script(() => gate.reply)
    await send(alice, threadId, 'hold on')
    const items: QueuedMessage[] = []
    for (let index = 0; index < 20; index++) items.splice(0, items.length, ...await queue(alice, threadId, `message ${index}`))
    const full = await alice.post(`/api/threads/${threadId}/queue`, { content: 'one too many', model: MODEL })
    expect(full.status).toBe(409)
    expect((await full.json()).message).toMatch(/20 messages waiting/)
    const order = await alice.fetch(`/api/threads/${threadId}/queue`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ order: [items[0]!.id] }) })
    expect(order.status).toBe(400)
    // Bob: the conversation and its queued messages are as unknown ones.
    expect((await bob.fetch(`/api/threads/${threadId}/queue`)).status).toBe(404)
    expect((await bob.fetch(`/api/threads/${threadId}/queue/${items[0]!.id}`, { method: 'DELETE' })).status).toBe(404)
    const bobsThread = await newThread(bob)
    expect((await bob.fetch(`/api/threads/${bobsThread}/queue/${items[0]!.id}`, { method: 'DELETE' })).status).toBe(404)
    expect((await bob.post(`/api/threads/${bobsThread}/queue/${items[0]!.id}/send`, {})).status).toBe(404)
    // Alice stops her answer: the queue pauses (nothing starts on its own) and stays hers.
    const { jobs } = await alice.json('/api/jobs')
    expect((await alice.post(`/api/jobs/${jobs[0].id}/abort`, {})).status).toBe(200)
    gate.openAll()
    await waitForJobEnd(alice, jobs[0].id)
    const view = await alice.json<ThreadWithMessages>(`/api/threads/${threadId}`)
    expect(view.queue).toHaveLength(20)
    expect(view.messages.filter(message => message.role === 'user')).toHaveLength(1)
  })

  it('"Send now" hands a message to the running answer: the model reads it after the tool round, once, and the answer keeps it', async () => {
    const alice = new SessionClient(app.url)
    const threadId = await newThread(alice)
    let openGate!: () => void
    const gate = new Promise<void>(resolve => (openGate = resolve))
    const before = fake.requests.length
    fake.script((request) => {
      if (request.body.messages.some(message => message.role === 'tool')) return textReply('Using what I have: 42.')
      return held(toolCallReply([{ id: 'call_calc', name: 'calculate', arguments: '{"expression":"6*7"}' }], { text: 'Searching. ' }), gate)
    })
    const { jobId } = await send(alice, threadId, 'search everything')
    await vi.waitFor(() => expect(answerRequests(before)).toHaveLength(1), { timeout: 10_000, interval: 20 })
    const [steer] = await queue(alice, threadId, 'stop searching, use what you have')
    const sent = await alice.post(`/api/threads/${threadId}/queue/${steer!.id}/send`, {})
    expect(sent.status).toBe(202)
    expect(await sent.json()).toEqual({ steered: true })
    // Handed over, not editable any more.
    const edit = await alice.fetch(`/api/threads/${threadId}/queue/${steer!.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'changed' }) })
    expect(edit.status).toBe(409)
    openGate()
    const job = await waitForJobEnd(alice, jobId)
    expect(job).toMatchObject({ status: 'complete', content: 'Searching. \n\nUsing what I have: 42.' })
    expect(job.steers).toEqual([expect.objectContaining({ id: steer!.id, content: 'stop searching, use what you have', round: 2, contentOffset: 'Searching. '.length })])
    // The model's second request has it after the tool's result, once.
    const second = answerRequests(before)[1]!
    expect(second.body.messages.map(message => message.role)).toEqual(['user', 'assistant', 'tool', 'user'])
    expect(askedWith(before, 'stop searching, use what you have')).toHaveLength(1)
    // It is part of the answer, not a question of its own, and the queue is empty.
    const view = await settled(alice, threadId, 1)
    expect(view.messages.map(message => message.role)).toEqual(['user', 'assistant'])
    expect(view.messages[1]!.steers).toEqual(job.steers)
    // A later question is asked with it where the model read it.
    const later = fake.requests.length
    fake.script(() => textReply('Sure.'))
    await waitForJobEnd(alice, (await send(alice, threadId, 'thanks')).jobId)
    expect(answerRequests(later)[0]!.body.messages.map(message => [message.role, message.content])).toEqual([
      ['user', 'search everything'], ['assistant', 'Searching.'], ['user', 'stop searching, use what you have'], ['assistant', 'Using what I have: 42.'], ['user', 'thanks'],
    ])
  })
})

describe('steering a workflow step', () => {
  it('hands a message to a running agent step from the run view: its model reads it after the tool round, once, and the step keeps it', async () => {
    const alice = await signedIn()
    let openGate!: () => void
    const gate = new Promise<void>(resolve => (openGate = resolve))
    const before = fake.requests.length
    fake.script((request) => {
      if (request.body.messages.some(message => message.role === 'tool')) return textReply('Using trains: 42.')
      return held(toolCallReply([{ id: 'call_calc', name: 'calculate', arguments: '{"expression":"6*7"}' }]), gate)
    })
    const jobId = await startSteeredRun(alice, 'plan a trip')
    await vi.waitFor(() => expect(fake.requests.slice(before).filter(isResearch)).toHaveLength(1), { timeout: 15_000, interval: 20 })
    await stepRunning(alice, jobId, 'research')
    // Only a running agent step of one's own run: not another step, not someone else's run, not nothing.
    expect((await alice.post(`/api/jobs/${jobId}/steps/out/steer`, { content: 'x' })).status).toBe(409)
    expect((await new SessionClient(app.url).post(`/api/jobs/${jobId}/steps/research/steer`, { content: 'x' })).status).toBe(404)
    expect((await alice.post(`/api/jobs/${jobId}/steps/research/steer`, { content: '   ' })).status).toBe(400)
    const sent = await alice.post(`/api/jobs/${jobId}/steps/research/steer`, { content: 'only trains, please' })
    expect(sent.status).toBe(202)
    const { id } = await sent.json()
    openGate()
    const job = await waitForJobEnd(alice, jobId)
    expect(job.status).toBe('complete')
    // The step's second request has it after the tool's result, once.
    const research = fake.requests.slice(before).filter(isResearch)
    expect(research).toHaveLength(2)
    expect(research[1]!.body.messages.map(message => message.role)).toEqual(['system', 'user', 'assistant', 'tool', 'user'])
    expect(research[1]!.body.messages.at(-1)!.content).toBe('only trains, please')
    const state = (await alice.json<{ workflowState: { nodeStates: Record<string, { steers?: Array<{ id: string, content: string, round: number }> }> } }>(`/api/jobs/${jobId}`)).workflowState
    expect(state.nodeStates.research!.steers).toEqual([expect.objectContaining({ id, content: 'only trains, please', round: 2 })])
    // Read, so no longer waiting anywhere: a step that has ended takes no more.
    expect((await alice.post(`/api/jobs/${jobId}/steps/research/steer`, { content: 'too late' })).status).toBe(409)
  })
})

describe('pages an answer built', () => {
  it('serves an answer\'s HTML page in a sandbox of its own (no network unless asked), to its owner and a share link\'s viewers only', async () => {
    // An account: share links are for accounts (the first one registered is this server's admin).
    const alice = await signedIn()
    const threadId = await newThread(alice)
    const html = '<!doctype html><html><head><title>Menu</title></head><body><script>document.title = "ran"</script>Soup</body></html>'
    fake.script(() => textReply(`Here.\n\n\`\`\`html\n${html}\n\`\`\`\n\n\`\`\`svg\n<svg xmlns="http://www.w3.org/2000/svg"></svg>\n\`\`\``))
    await waitForJobEnd(alice, (await send(alice, threadId, 'make a menu page')).jobId)
    const answer = (await settled(alice, threadId, 1)).messages[1]!
    const pageAt = `/api/threads/${threadId}/messages/${answer.id}/artifacts`
    const served = await alice.fetch(`${pageAt}/0`)
    expect(served.status).toBe(200)
    expect(await served.text()).toBe(html)
    expect(served.headers.get('content-type')).toBe('text/html; charset=utf-8')
    const policy = served.headers.get('content-security-policy')!
    expect(policy).toMatch(/^sandbox allow-scripts allow-forms;/)
    expect(policy).not.toContain('allow-same-origin')
    expect(policy).toContain('default-src \'none\'')
    // Named by origin: 'self' would name the page's own (opaque) origin, and no frame could hold it.
    expect(policy).toContain(`frame-ancestors ${app.url}`)
    expect(served.headers.get('x-frame-options')).toBe('SAMEORIGIN')
    expect(served.headers.get('cache-control')).toBe('private, no-store')
    const open = await alice.fetch(`${pageAt}/0?network=1`)
    expect(open.headers.get('content-security-policy')).toContain('default-src * data: blob:')
    expect(open.headers.get('content-security-policy')).toMatch(/^sandbox allow-scripts allow-forms;/)
    // Only pages: the SVG (shown as an image in the app), a number past the end or not a number is none.
    for (const index of ['1', '2', 'x', '-1', '00000000000000000000001']) expect((await alice.fetch(`${pageAt}/${index}`)).status).toBe(404)
    // Not another person's: the conversation is unknown to them.
    const bob = new SessionClient(app.url)
    expect((await bob.fetch(`${pageAt}/0`)).status).toBe(404)
    // Through a share link: the snapshot's answer, in the same sandbox.
    const share = await (await alice.post(`/api/threads/${threadId}/share`, {})).json()
    const token = String(share.url).split('/share/')[1]
    const shared = await alice.fetch(`/api/shared/${token}/artifacts/${answer.id}/0`)
    expect(shared.status).toBe(200)
    expect(shared.headers.get('content-security-policy')).toMatch(/^sandbox allow-scripts allow-forms;/)
    expect((await alice.fetch(`/api/shared/${token}/artifacts/${crypto.randomUUID()}/0`)).status).toBe(404)
    expect((await alice.fetch(`/api/shared/${'x'.repeat(32)}/artifacts/${answer.id}/0`)).status).toBe(404)
  })
})

describe('images', () => {
  it('keeps what the image model makes as the answer\'s file: served to its owner sandboxed, in a share with files, to nobody else', async () => {
    const alice = await signedIn()
    const threadId = await newThread(alice)
    const before = fake.imageRequests.length
    fake.imageReply('png')
    fake.script((request) => {
      if (request.body.messages.some(message => message.role === 'tool')) return textReply('An orange square, as asked.')
      return toolCallReply([{ id: 'call_img', name: 'generate_image', arguments: '{"prompt":"an orange square"}' }])
    })
    const job = await waitForJobEnd(alice, (await send(alice, threadId, 'make me an orange square')).jobId)
    expect(job.status).toBe('complete')
    expect(fake.imageRequests.slice(before)).toEqual([{ authorization: 'Bearer sk-or-v1-message-queue-test-key', model: 'fake/image-model', prompt: 'an orange square', sourceImages: 0 }])
    const answer = (await settled(alice, threadId, 1)).messages[1]!
    expect(answer.attachments).toEqual([expect.objectContaining({ kind: 'image', mediaType: 'image/png', name: 'an-orange-square.png' })])
    const fileAt = `/api/threads/${threadId}/attachments/${answer.attachments![0]!.id}`
    const served = await alice.fetch(fileAt)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(served.headers.get('content-security-policy')).toContain('sandbox')
    expect((await new SessionClient(app.url).fetch(fileAt)).status).toBe(404)
    // The model was told the person sees it, and how to change it.
    const toolTurn = fake.requests.findLast(request => request.body.messages.some(message => message.role === 'tool'))!.body.messages.find(message => message.role === 'tool')
    expect(JSON.parse(String(toolTurn?.content)).note).toContain(`edit "${answer.attachments![0]!.id}"`)
    // A share with files carries the answer's image.
    const share = await (await alice.post(`/api/threads/${threadId}/share`, { includeAttachments: true })).json()
    const token = String(share.url).split('/share/')[1]
    const view = await alice.json<{ messages: Array<{ attachments?: Array<{ id: string }> }> }>(`/api/shared/${token}`)
    expect(view.messages[1]!.attachments).toEqual([expect.objectContaining({ id: answer.attachments![0]!.id })])
    expect((await alice.fetch(`/api/shared/${token}/attachments/${answer.attachments![0]!.id}`)).status).toBe(200)
  })

  it('draws offline with the demo model, as an SVG that runs nothing; a guest may not make images', async () => {
    const alice = await signedIn()
    const threadId = await newThread(alice)
    const before = fake.imageRequests.length
    const sent = await alice.post(`/api/threads/${threadId}/messages`, { content: 'Draw a house by the sea at sunset', model: 'or3/offline-demo' })
    const job = await waitForJobEnd(alice, (await sent.json()).jobId)
    expect(job.content).toContain('Here is your picture: a drawing of the sun, the sea and a house, at sunset.')
    const answer = (await settled(alice, threadId, 1)).messages[1]!
    expect(answer.attachments).toEqual([expect.objectContaining({ mediaType: 'image/svg+xml' })])
    const served = await alice.fetch(`/api/threads/${threadId}/attachments/${answer.attachments![0]!.id}`)
    expect(served.headers.get('content-type')).toBe('image/svg+xml')
    expect(served.headers.get('content-security-policy')).toMatch(/default-src 'none'.*sandbox/)
    expect(await served.text()).not.toMatch(/<script|\son\w+=/i)
    expect(fake.imageRequests.length).toBe(before)
    // A guest: the tool is not theirs (it costs credits), and the demo says what it can do instead.
    const guest = new SessionClient(app.url)
    const guestThread = await newThread(guest)
    const guestJob = await waitForJobEnd(guest, (await (await guest.post(`/api/threads/${guestThread}/messages`, { content: 'Draw a house by the sea', model: 'or3/offline-demo' })).json()).jobId)
    expect(guestJob.activeToolCalls).toEqual([])
  })
})

describe('dictation', () => {
  it('makes a recording into text through the speech-to-text endpoint, and refuses what it cannot take saying what to fix', async () => {
    const alice = new SessionClient(app.url)
    expect(await alice.json('/api/voice/transcriptions')).toEqual({ available: true })
    const recording = Buffer.alloc(3_000, 1).toString('base64')
    const heard = await alice.post('/api/voice/transcriptions', { audio: recording, mediaType: 'audio/webm;codecs=opus', language: 'de' })
    expect(heard.status).toBe(200)
    expect(await heard.json()).toEqual({ text: 'Heard 3000 bytes of audio/webm.' })
    expect(fake.transcriptionRequests.at(-1)).toEqual({ authorization: 'Bearer sk-or-v1-message-queue-test-key', model: 'whisper-1', language: 'de', fileType: 'audio/webm', bytes: 3_000 })
    const refused = async (body: unknown) => {
      const response = await alice.post('/api/voice/transcriptions', body)
      return { status: response.status, message: String((await response.json()).message) }
    }
    expect(await refused({ audio: '%%%', mediaType: 'audio/webm' })).toMatchObject({ status: 400, message: expect.stringContaining('base64') })
    expect(await refused({ audio: recording, mediaType: 'text/html' })).toMatchObject({ status: 415, message: expect.stringContaining('audio/webm') })
    expect(await refused({ audio: recording, mediaType: 'audio/webm', language: 'not a language' })).toMatchObject({ status: 400, message: expect.stringContaining('language') })
    // Past NUXT_VOICE_AUDIO_BYTES (20,000 here): refused while the body is read, and another person is answered meanwhile.
    const big = alice.post('/api/voice/transcriptions', { audio: Buffer.alloc(40_000, 1).toString('base64'), mediaType: 'audio/webm' })
    expect((await new SessionClient(app.url).fetch('/api/health')).status).toBe(200)
    expect((await big).status).toBe(413)
  })

  it('reads a part of an answer aloud through the text-to-speech endpoint, and refuses what it cannot take saying what to fix', async () => {
    const alice = new SessionClient(app.url)
    expect(await alice.json('/api/voice/speech')).toEqual({ available: true, chars: 200 })
    const spoken = await alice.post('/api/voice/speech', { text: 'Boil the water.' })
    expect(spoken.status).toBe(200)
    expect(spoken.headers.get('content-type')).toBe('audio/wav')
    expect(spoken.headers.get('cache-control')).toBe('private, no-store')
    expect((await spoken.arrayBuffer()).byteLength).toBeGreaterThan(44)
    expect(fake.speechRequests.at(-1)).toEqual({ authorization: 'Bearer sk-or-v1-message-queue-test-key', model: 'tts-1', voice: 'alloy', input: 'Boil the water.' })
    const refused = async (body: unknown) => {
      const response = await alice.post('/api/voice/speech', body)
      return { status: response.status, message: String((await response.json()).message) }
    }
    expect(await refused({ text: 'x'.repeat(201) })).toMatchObject({ status: 413, message: expect.stringContaining('at most 200 characters') })
    expect(await refused({ text: '' })).toMatchObject({ status: 400, message: expect.stringContaining('nothing to read') })
    expect(await refused({ text: 'hi', voice: 'other' })).toMatchObject({ status: 400 })
  })
})

describe('across a kill -9', () => {
  const servers = useAppServers()
  const freshDataDir = () => {
    const dir = join(root, `data-${crypto.randomUUID()}`)
    mkdirSync(dir)
    return dir
  }

  it('runs a message queued behind an answer the server was killed in, once, after the restart', async () => {
    const env = serverEnv({ NUXT_DATA_DIR: freshDataDir() })
    const before = fake.requests.length
    fake.script(request => lastUser(request) === 'first' ? stall : textReply(`re: ${lastUser(request)}`))
    const first = await servers.start(env)
    const alice = new SessionClient(first.url)
    const threadId = await newThread(alice)
    await send(alice, threadId, 'first')
    await vi.waitFor(() => expect(askedWith(before, 'first')).toHaveLength(1), { timeout: 10_000, interval: 20 })
    await queue(alice, threadId, 'second')
    await first.stop('SIGKILL')

    fake.script(request => textReply(`re: ${lastUser(request)}`))
    const second = await servers.start(env)
    const again = new SessionClient(second.url)
    again.cookie = alice.cookie
    const view = await settled(again, threadId, 2)
    expect(view.messages.map(message => message.role === 'user' ? message.content : message.status)).toEqual(['first', 'complete', 'second', 'complete'])
    expect(asked(before, 'second')).toHaveLength(1)
  }, 90_000)

  it('a steer the running answer took before the kill reaches the model once after it, and its queue entry is gone', async () => {
    const env = serverEnv({ NUXT_DATA_DIR: freshDataDir() })
    let openGate!: () => void
    const gate = new Promise<void>(resolve => (openGate = resolve))
    const before = fake.requests.length
    // The request after the tool round stalls on the first server: it is killed there, the steer already read.
    fake.script(request => request.body.messages.some(message => message.role === 'tool')
      ? stall
      : held(toolCallReply([{ id: 'call_calc', name: 'calculate', arguments: '{"expression":"1+1"}' }]), gate))
    const first = await servers.start(env)
    const alice = new SessionClient(first.url)
    const threadId = await newThread(alice)
    const { jobId } = await send(alice, threadId, 'plan a trip')
    await vi.waitFor(() => expect(answerRequests(before)).toHaveLength(1), { timeout: 10_000, interval: 20 })
    const [steer] = await queue(alice, threadId, 'only trains, please')
    expect(await (await alice.post(`/api/threads/${threadId}/queue/${steer!.id}/send`, {})).json()).toEqual({ steered: true })
    openGate()
    await vi.waitFor(() => expect(askedWith(before, 'only trains, please')).toHaveLength(1), { timeout: 10_000, interval: 20 })
    await first.stop('SIGKILL')

    fake.script(() => textReply('Trains it is.'))
    const second = await servers.start(env)
    const again = new SessionClient(second.url)
    again.cookie = alice.cookie
    const job = await waitForJobEnd(again, jobId, 30_000)
    expect(job).toMatchObject({ status: 'complete', resumeCount: 1 })
    expect(job.steers).toEqual([expect.objectContaining({ id: steer!.id, content: 'only trains, please' })])
    // The resumed request has it once, where it was read; it was not sent again as a question.
    const resumed = answerRequests(before).at(-1)!
    expect(resumed.body.messages.filter(message => message.role === 'user').map(message => message.content)).toEqual(['plan a trip', 'only trains, please'])
    const view = await settled(again, threadId, 1)
    expect(view.messages.map(message => message.role)).toEqual(['user', 'assistant'])
  }, 90_000)

  it('a message sent to a workflow step before the kill reaches its model once after the restart', async () => {
    const env = serverEnv({ NUXT_DATA_DIR: freshDataDir() })
    const before = fake.requests.length
    // The step's first request stalls on the first server: the message waits, unread, when it is killed.
    fake.script(() => stall)
    const first = await servers.start(env)
    const alice = await registerAccount(first.url, 'Steerer')
    const jobId = await startSteeredRun(alice, 'plan a trip')
    await vi.waitFor(() => expect(fake.requests.slice(before).filter(isResearch)).toHaveLength(1), { timeout: 15_000, interval: 20 })
    await stepRunning(alice, jobId, 'research')
    expect((await alice.post(`/api/jobs/${jobId}/steps/research/steer`, { content: 'only trains, please' })).status).toBe(202)
    await first.stop('SIGKILL')

    fake.script(request => (request.body.messages.some(message => message.role === 'user' && message.content === 'only trains, please') ? textReply('Trains it is.') : textReply('No word from you.')))
    const second = await servers.start(env)
    const again = new SessionClient(second.url)
    again.cookie = alice.cookie
    const job = await waitForJobEnd(again, jobId, 30_000)
    expect(job).toMatchObject({ status: 'complete', resumeCount: 1 })
    const after = fake.requests.slice(before).filter(isResearch).slice(1)
    expect(after.filter(request => request.body.messages.filter(message => message.content === 'only trains, please').length === 1)).toHaveLength(after.length)
    expect(job.workflowState?.nodeStates.research?.steers).toEqual([expect.objectContaining({ content: 'only trains, please' })])
  }, 90_000)
})
