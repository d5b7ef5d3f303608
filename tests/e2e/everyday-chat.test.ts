/**
 * The everyday chat against the built server, with the fake OpenRouter recording what the model is
 * asked: a person's custom instructions and a chat's own settings in every request (the role's
 * output cap on top), a password change that ends every other session and token, folders and pins,
 * share links (a snapshot, revocable, accounts-only unless the admin opens them, copied into the
 * viewer's own conversation) and 👍 / 👎 read by the admin.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { textReply, useFakeOpenRouter, type RecordedRequest } from '../support/fake-openrouter'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useBuiltApp, useDataDirs } from '../support/built-app'
import { TITLE_INSTRUCTIONS } from '../../server/lib/threads/titles'

const MODEL = 'openai/gpt-4o-mini'
const password = 'correct horse battery'
const fake = useFakeOpenRouter()
const dataDirs = useDataDirs('or3-everyday-e2e-')
const app = useBuiltApp(() => ({
  NUXT_OPENROUTER_BASE_URL: fake.url,
  NUXT_OPENROUTER_API_KEY: 'sk-or-v1-server-test-key',
  NUXT_DATA_DIR: dataDirs.fresh(),
  NUXT_SESSION_PASSWORD: 'an-everyday-chat-test-password-long-enough',
  NUXT_LIMITS_ROLES_USER_MAX_OUTPUT_TOKENS: '300',
}))

const put = (client: SessionClient, path: string, body: unknown) => client.fetch(path, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
const patch = (client: SessionClient, path: string, body: unknown) => client.fetch(path, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
const del = (client: SessionClient, path: string) => client.fetch(path, { method: 'DELETE' })

/** The answer requests (not the title requests) that asked `question` last. */
function answerRequestsFor(question: string): RecordedRequest[] {
  return fake.requests.filter((request) => {
    const messages = request.body.messages ?? []
    return messages[0]?.content !== TITLE_INSTRUCTIONS && messages.at(-1)?.content === question
  })
}

let admin: SessionClient
let alice: SessionClient
let bob: SessionClient

async function signIn(name: string): Promise<SessionClient> {
  const client = new SessionClient(app.url)
  const response = await client.post('/api/auth/login', { name, password })
  expect(response.status).toBe(200)
  return client
}

/** A conversation of `client`'s with one finished exchange. */
async function conversation(client: SessionClient, question: string) {
  const thread = await (await client.post('/api/threads', {})).json()
  const sent = await (await client.post(`/api/threads/${thread.id}/messages`, { content: question, model: MODEL })).json()
  expect((await waitForJobEnd(client, sent.jobId)).status).toBe('complete')
  return { thread, sent }
}

beforeAll(async () => {
  fake.script(() => textReply('Ahoy there.'))
  admin = new SessionClient(app.url)
  expect((await admin.post('/api/auth/register', { name: 'Root', password })).status).toBe(201)
  for (const name of ['Alice', 'Bob']) expect((await admin.post('/api/admin/users', { name, password, role: 'user' })).status).toBe(201)
  alice = await signIn('Alice')
  bob = await signIn('Bob')
})

describe('everyday chat', () => {
  it('asks the model with the person\'s custom instructions, then the chat\'s own settings, in every answer and regenerate, within the role\'s output cap', async () => {
    expect((await put(alice, '/api/me/preferences', { customInstructions: 'I am a sailor. Answer briefly.', displayName: 'Captain Alice', theme: 'dark' })).status).toBe(200)
    expect(await alice.json('/api/me/preferences')).toEqual({ customInstructions: 'I am a sailor. Answer briefly.', displayName: 'Captain Alice', theme: 'dark' })
    const { thread } = await conversation(alice, 'Where is the wind from?')
    const [first] = answerRequestsFor('Where is the wind from?')
    expect(first!.body.messages[0]).toEqual({ role: 'system', content: 'I am a sailor. Answer briefly.' })
    expect(first!.body).not.toHaveProperty('temperature')
    // The role's cap is asked for when the chat names none.
    expect(first!.body.max_tokens).toBe(300)

    const settings = { systemPrompt: 'Answer in French.', temperature: 0.3, topP: 0.8, maxTokens: 1_000, reasoningEffort: 'high' }
    const bad = await patch(alice, `/api/threads/${thread.id}`, { settings: { ...settings, temperature: 3 } })
    expect(bad.status).toBe(400)
    expect((await bad.json()).message).toMatch(/temperature/)
    const updated = await (await patch(alice, `/api/threads/${thread.id}`, { settings })).json()
    expect(updated.settings).toEqual(settings)
    const second = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'And tomorrow?', model: MODEL })).json()
    await waitForJobEnd(alice, second.jobId)
    const asked = answerRequestsFor('And tomorrow?')[0]!.body
    expect(asked.messages[0]).toEqual({ role: 'system', content: 'Answer in French.' })
    expect(asked).toMatchObject({ temperature: 0.3, top_p: 0.8, reasoning: { effort: 'high' }, max_tokens: 300 })

    // Another answer to the same question is asked the same way.
    const again = await (await alice.post(`/api/threads/${thread.id}/messages/${second.assistantMessage.id}/versions`, { model: MODEL })).json()
    await waitForJobEnd(alice, again.jobId)
    const regenerated = answerRequestsFor('And tomorrow?')
    expect(regenerated).toHaveLength(2)
    expect(regenerated[1]!.body).toMatchObject({ temperature: 0.3, top_p: 0.8, max_tokens: 300, messages: expect.arrayContaining([{ role: 'system', content: 'Answer in French.' }]) })

    // Cleared: the person's instructions again, and the model's own defaults.
    await patch(alice, `/api/threads/${thread.id}`, { settings: null })
    const third = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'Thanks!', model: MODEL })).json()
    await waitForJobEnd(alice, third.jobId)
    const plain = answerRequestsFor('Thanks!')[0]!.body
    expect(plain.messages[0]).toEqual({ role: 'system', content: 'I am a sailor. Answer briefly.' })
    expect(plain).not.toHaveProperty('temperature')

    // Presets: saved, listed, changed, deleted; a bad one names its field.
    const preset = await (await alice.post('/api/me/presets', { name: 'Concise', settings: { systemPrompt: 'Be concise.', temperature: 0.2 } })).json()
    expect((await alice.post('/api/me/presets', { name: '', settings: {} })).status).toBe(400)
    expect((await put(alice, `/api/me/presets/${preset.id}`, { name: 'Very concise', settings: { temperature: 0 } })).status).toBe(200)
    expect((await alice.json('/api/me/presets')).presets).toEqual([{ id: preset.id, name: 'Very concise', settings: { temperature: 0 } }])
    expect((await bob.json('/api/me/presets')).presets).toEqual([])
    expect((await del(bob, `/api/me/presets/${preset.id}`)).status).toBe(404)
    expect((await del(alice, `/api/me/presets/${preset.id}`)).status).toBe(200)
  })

  it('files and pins conversations: folders list and search one folder, pinned come first, a deleted folder leaves its conversations in none', async () => {
    const client = await signIn('Bob')
    const folder = await (await client.post('/api/folders', { name: 'Boats' })).json()
    expect((await client.post('/api/folders', { name: '   ' })).status).toBe(400)
    const older = await (await client.post('/api/threads', { title: 'Hull repairs' })).json()
    const newer = await (await client.post('/api/threads', { title: 'Hull paint' })).json()
    expect((await patch(client, `/api/threads/${older.id}`, { folderId: crypto.randomUUID() })).status).toBe(400)
    // Someone else's folder is no folder of yours.
    const alicesFolder = await (await alice.post('/api/folders', { name: 'Mine' })).json()
    expect((await patch(client, `/api/threads/${older.id}`, { folderId: alicesFolder.id })).status).toBe(400)
    expect((await patch(client, `/api/threads/${older.id}`, { folderId: folder.id, pinned: true })).status).toBe(200)
    const listed = (await client.json('/api/threads')).threads
    expect(listed.map((thread: { id: string }) => thread.id).slice(0, 2)).toEqual([older.id, newer.id])
    expect(listed[0]).toMatchObject({ pinned: true, folderId: folder.id })
    expect((await client.json(`/api/threads?folder=${folder.id}`)).threads.map((thread: { id: string }) => thread.id)).toEqual([older.id])
    expect((await client.json(`/api/threads/search?q=hull&folder=${folder.id}`)).hits.map((hit: { thread: { id: string } }) => hit.thread.id)).toEqual([older.id])
    expect((await client.json('/api/threads/search?q=hull')).hits).toHaveLength(2)
    expect((await patch(client, `/api/folders/${folder.id}`, { name: 'Ships' })).status).toBe(200)
    expect((await client.json('/api/folders')).folders).toEqual([expect.objectContaining({ id: folder.id, name: 'Ships' })])
    expect((await del(client, `/api/folders/${folder.id}`)).status).toBe(200)
    const after = (await client.json('/api/threads')).threads.find((thread: { id: string }) => thread.id === older.id)
    expect(after.folderId).toBeUndefined()
    expect(after.pinned).toBe(true)
  })

  it('shares a snapshot: later messages stay out, accounts only until the admin opens links, copied into the viewer\'s own conversation, gone once revoked', async () => {
    const { thread } = await conversation(alice, 'What knots should I learn?')
    const other = await conversation(alice, 'A private question about my boat')
    const share = await (await alice.post(`/api/threads/${thread.id}/share`, {})).json()
    expect(share.url).toMatch(/\/share\/[\w-]{32}$/)
    const token = share.url.split('/share/')[1]
    // More of the conversation after sharing is not in the snapshot.
    const later = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'And which one for a mooring?', model: MODEL })).json()
    await waitForJobEnd(alice, later.jobId)

    const seen = await bob.fetch(`/api/shared/${token}`)
    expect(seen.status).toBe(200)
    expect(seen.headers.get('x-robots-tag')).toMatch(/noindex/)
    const body = await seen.text()
    const snapshot = JSON.parse(body)
    expect(snapshot).toMatchObject({ title: expect.any(String), sharedBy: 'Captain Alice' })
    expect(snapshot.messages.map((message: { role: string, content: string }) => [message.role, message.content])).toEqual([['user', 'What knots should I learn?'], ['assistant', 'Ahoy there.']])
    // Nothing of the conversation's ids, its later turns or another conversation.
    expect(body).not.toContain(thread.id)
    expect(body).not.toContain('mooring')
    expect(body).not.toContain('private question')
    expect(body).not.toContain(other.thread.id)

    // Nobody signed in: refused until the admin opens links to anyone.
    const stranger = new SessionClient(app.url)
    expect((await stranger.fetch(`/api/shared/${token}`)).status).toBe(401)
    // The page (rendered on the server) answers with the API's status, and its words.
    const lockedPage = await stranger.fetch(`/share/${token}`)
    expect(lockedPage.status).toBe(401)
    expect(await lockedPage.text()).toContain('Sign in to read this conversation')
    expect((await bob.fetch(`/share/${token}`)).status).toBe(200)
    expect((await put(alice, '/api/admin/settings', { publicShareLinks: true })).status).toBe(403)
    expect(await (await put(admin, '/api/admin/settings', { publicShareLinks: true })).json()).toMatchObject({ publicShareLinks: true })
    expect((await stranger.fetch(`/api/shared/${token}`)).status).toBe(200)
    await put(admin, '/api/admin/settings', { publicShareLinks: false })
    expect((await stranger.fetch(`/api/shared/${token}`)).status).toBe(401)

    // Continue: Bob's own copy, which he can go on with.
    const copied = await bob.post(`/api/shared/${token}/continue`, {})
    expect(copied.status).toBe(201)
    const copy = await copied.json()
    const { messages } = await bob.json(`/api/threads/${copy.id}`)
    expect(messages.map((message: { content: string }) => message.content)).toEqual(['What knots should I learn?', 'Ahoy there.'])

    // Listed for its owner only; revoked, it opens nothing.
    expect((await alice.json('/api/shares')).shares).toEqual([expect.objectContaining({ id: share.id, url: share.url, messageCount: 2 })])
    expect((await bob.json('/api/shares')).shares).toEqual([])
    expect((await del(bob, `/api/shares/${share.id}`)).status).toBe(404)
    expect((await del(alice, `/api/shares/${share.id}`)).status).toBe(200)
    expect((await bob.fetch(`/api/shared/${token}`)).status).toBe(404)
    const deadPage = await bob.fetch(`/share/${token}`)
    expect(deadPage.status).toBe(404)
    expect(await deadPage.text()).toContain('This link opens nothing')
    expect((await bob.fetch(`/share/${'x'.repeat(32)}`)).status).toBe(404)
    expect((await bob.post(`/api/shared/${token}/continue`, {})).status).toBe(404)
    expect((await bob.fetch(`/api/shared/${'x'.repeat(32)}`)).status).toBe(404)
    expect((await bob.fetch('/api/shared/..%2F..%2Fapi')).status).toBe(404)

    // A deleted conversation takes its links with it.
    const second = await (await alice.post(`/api/threads/${other.thread.id}/share`, {})).json()
    await del(alice, `/api/threads/${other.thread.id}`)
    expect((await bob.fetch(`/api/shared/${second.url.split('/share/')[1]}`)).status).toBe(404)
    expect((await alice.json('/api/shares')).shares).toEqual([])
  })

  it('shares files only when the sharer includes them', async () => {
    const thread = await (await alice.post('/api/threads', {})).json()
    const sent = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'Read my list', model: MODEL, attachments: [{ name: 'list.txt', data: Buffer.from('rope, anchor').toString('base64') }] })).json()
    await waitForJobEnd(alice, sent.jobId)
    const fileId = sent.userMessage.attachments[0].id
    const without = (await (await alice.post(`/api/threads/${thread.id}/share`, { includeAttachments: false })).json()).url.split('/share/')[1]
    const withFiles = (await (await alice.post(`/api/threads/${thread.id}/share`, { includeAttachments: true })).json()).url.split('/share/')[1]
    expect((await bob.json(`/api/shared/${without}`)).messages[0].attachments).toBeUndefined()
    expect((await bob.fetch(`/api/shared/${without}/attachments/${fileId}`)).status).toBe(404)
    expect((await bob.json(`/api/shared/${withFiles}`)).messages[0].attachments).toEqual([expect.objectContaining({ id: fileId, name: 'list.txt' })])
    const file = await bob.fetch(`/api/shared/${withFiles}/attachments/${fileId}`)
    expect(file.status).toBe(200)
    expect(file.headers.get('content-security-policy')).toMatch(/sandbox/)
    expect(await file.text()).toBe('rope, anchor')
    // Continued with its files: the copy's files are the viewer's own.
    const copy = await (await bob.post(`/api/shared/${withFiles}/continue`, {})).json()
    const copiedFile = (await bob.json(`/api/threads/${copy.id}`)).messages[0].attachments[0]
    expect(copiedFile.id).not.toBe(fileId)
    expect(await (await bob.fetch(`/api/threads/${copy.id}/attachments/${copiedFile.id}`)).text()).toBe('rope, anchor')
  })

  it('records 👍 / 👎 on answers, changeable, and shows the admin counts by model and day and the reasons, never the answers', async () => {
    const { thread, sent } = await conversation(alice, 'Is the tide going out?')
    const answerId = sent.assistantMessage.id
    const path = `/api/threads/${thread.id}/messages/${answerId}/feedback`
    expect((await put(alice, path, { rating: 'up' })).status).toBe(200)
    expect((await put(alice, `/api/threads/${thread.id}/messages/${sent.userMessage.id}/feedback`, { rating: 'up' })).status).toBe(400)
    expect((await put(alice, path, { rating: 'sideways' })).status).toBe(400)
    expect((await put(bob, path, { rating: 'down' })).status).toBe(404)
    const changed = await (await put(alice, path, { rating: 'down', reason: 'Not accurate' })).json()
    expect(changed.feedback).toMatchObject({ rating: 'down', reason: 'Not accurate' })
    expect((await alice.json(`/api/threads/${thread.id}`)).messages[1].feedback).toMatchObject({ rating: 'down', reason: 'Not accurate' })

    expect((await alice.fetch('/api/admin/feedback')).status).toBe(403)
    const report = await admin.json('/api/admin/feedback?days=7')
    const today = new Date().toISOString().slice(0, 10)
    expect(report.byModelAndDay).toContainEqual({ model: MODEL, day: today, up: 0, down: 1 })
    expect(report.recentDown[0]).toEqual({ model: MODEL, reason: 'Not accurate', at: expect.any(Number) })
    expect(JSON.stringify(report)).not.toContain('Ahoy')
    expect((await admin.fetch('/api/admin/feedback?days=1000')).status).toBe(400)

    expect((await del(alice, path)).status).toBe(200)
    expect((await alice.json(`/api/threads/${thread.id}`)).messages[1].feedback).toBeUndefined()
  })

  it('changes a person\'s own password: the current one is asked, every other session and token ends, this one goes on', async () => {
    const carol = new SessionClient(app.url)
    expect((await admin.post('/api/admin/users', { name: 'Carol', password, role: 'user' })).status).toBe(201)
    expect((await carol.post('/api/auth/login', { name: 'Carol', password })).status).toBe(200)
    const otherDevice = await signIn('Carol')
    const token = (await (await carol.post('/api/auth/tokens', { name: 'script', password })).json()).token
    const bearer = { authorization: `Bearer ${token}` }
    expect((await fetch(`${app.url}/api/threads`, { headers: bearer })).status).toBe(200)

    const wrong = await put(carol, '/api/me/password', { currentPassword: 'not it at all', newPassword: 'a new long password' })
    expect(wrong.status).toBe(403)
    const short = await put(carol, '/api/me/password', { currentPassword: password, newPassword: 'short' })
    expect(short.status).toBe(400)
    expect((await short.json()).message).toMatch(/newPassword/)
    expect((await put(carol, '/api/me/password', { currentPassword: password, newPassword: 'a new long password' })).status).toBe(200)

    expect((await carol.json('/api/auth/me')).user).toMatchObject({ name: 'Carol' })
    expect((await otherDevice.fetch('/api/threads')).status).toBe(401)
    expect((await fetch(`${app.url}/api/threads`, { headers: bearer })).status).toBe(401)
    expect((await new SessionClient(app.url).post('/api/auth/login', { name: 'Carol', password })).status).toBe(401)
    expect((await new SessionClient(app.url).post('/api/auth/login', { name: 'Carol', password: 'a new long password' })).status).toBe(200)
  })
})
