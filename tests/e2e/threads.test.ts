import { describe, expect, it } from 'vitest'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

// Conversation routes over HTTP, on the offline demo model.

const app = useBuiltApp({ NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '30' })

const demo = 'or3/offline-demo'

describe('threads', () => {
  it('sends a message as a background job and writes the answer into the thread when it ends', async () => {
    const alice = new SessionClient(app.url)
    const created = await alice.post('/api/threads', {})
    expect(created.status).toBe(201)
    const thread = await created.json()
    expect(thread.title).toBe('New chat')

    const sent = await alice.post(`/api/threads/${thread.id}/messages`, { content: 'What is 6*7?', model: demo })
    expect(sent.status).toBe(202)
    const { userMessage, assistantMessage, jobId } = await sent.json()
    expect(userMessage).toMatchObject({ role: 'user', content: 'What is 6*7?' })
    expect(assistantMessage).toMatchObject({ role: 'assistant', status: 'streaming', jobId, model: demo })

    const job = await waitForJobEnd(alice, jobId)
    expect(job.status).toBe('complete')
    const { thread: titled, messages } = await alice.json(`/api/threads/${thread.id}`)
    // Titled by the first message at once, then by the model once it has answered.
    expect(['What is 6*7?', 'Calculating 6*7']).toContain(titled.title)
    await expect.poll(async () => (await alice.json(`/api/threads/${thread.id}`)).thread.title).toBe('Calculating 6*7')
    // The title request counts against the person's daily budget like the answer (recorded before the title is written).
    const answerTokens = job.usage?.totalTokens ?? 0
    expect(answerTokens).toBeGreaterThan(0)
    expect((await alice.json('/api/auth/usage')).tokens).toBeGreaterThan(answerTokens)
    expect(messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant'])
    expect(messages[1]).toMatchObject({ status: 'complete', content: job.content, toolCalls: [expect.objectContaining({ name: 'calculate', status: 'completed' })] })

    // The next question carries the conversation so far.
    const second = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'hello again', model: demo })).json()
    await waitForJobEnd(alice, second.jobId)
    expect((await alice.json('/api/threads')).threads[0]).toMatchObject({ id: thread.id })
  })

  it('never writes a job into another session\'s conversation, whatever thread and message ids it names', async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    const thread = await (await bob.post('/api/threads', {})).json()
    const sent = await (await bob.post(`/api/threads/${thread.id}/messages`, { content: 'What is 6*7?', model: demo })).json()
    const bobs = await waitForJobEnd(bob, sent.jobId)

    // Naming Bob's conversation is as naming none of hers: 404, and no job.
    const started = await alice.post('/api/openrouter/stream', { model: demo, messages: [{ role: 'user', content: 'What time is it in Tokyo?' }], _background: true, _threadId: thread.id, _messageId: sent.assistantMessage.id })
    expect(started.status).toBe(404)
    expect((await alice.json('/api/jobs')).jobs).toEqual([])
    // Her own job naming his message in a conversation of hers writes nothing into his.
    const hers = await (await alice.post('/api/threads', {})).json()
    const alices = await waitForJobEnd(alice, await alice.startJob({ model: demo, messages: [{ role: 'user', content: 'What time is it in Tokyo?' }], _threadId: hers.id, _messageId: sent.assistantMessage.id }))
    expect(alices.status).toBe('complete')
    expect(alices.content).not.toBe(bobs.content)

    const { messages } = await bob.json(`/api/threads/${thread.id}`)
    expect(messages[1]).toMatchObject({ id: sent.assistantMessage.id, jobId: sent.jobId, content: bobs.content, status: 'complete' })
  })

  it('keeps conversations private: another session gets 404 on every thread route', async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    const thread = await (await alice.post('/api/threads', { title: 'Private' })).json()
    for (const [path, init] of [
      [`/api/threads/${thread.id}`, {}],
      [`/api/threads/${thread.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Mine now' }) }],
      [`/api/threads/${thread.id}`, { method: 'DELETE' }],
      [`/api/threads/${thread.id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'hi', model: demo }) }],
    ] as const) {
      const response = await bob.fetch(path, init as RequestInit)
      expect(response.status, `${(init as RequestInit).method ?? 'GET'} ${path}`).toBe(404)
    }
    expect((await bob.json('/api/threads')).threads).toEqual([])
    expect((await alice.json(`/api/threads/${thread.id}`)).thread.title).toBe('Private')
  })

  it('answers again and edits a question as versions, keeping every branch, and switches between them', async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    const thread = await (await alice.post('/api/threads', {})).json()
    const path = (messages: Array<{ content: string }>) => messages.map(message => message.content.slice(0, 12))
    const first = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'What is 6*7?', model: demo })).json()
    await waitForJobEnd(alice, first.jobId)
    const question = first.userMessage.id
    const answer = first.assistantMessage.id

    // Answer again: a second answer beside the first, now on view.
    const again = await alice.post(`/api/threads/${thread.id}/messages/${answer}/versions`, { model: demo })
    expect(again.status).toBe(202)
    const regenerated = await again.json()
    expect(regenerated.userMessage.id).toBe(question)
    expect(regenerated.assistantMessage).toMatchObject({ parentId: question, status: 'streaming' })
    expect((await waitForJobEnd(alice, regenerated.jobId)).content).toContain('42')
    let view = await alice.json(`/api/threads/${thread.id}`)
    expect(view.messages.map((message: { id: string }) => message.id)).toEqual([question, regenerated.assistantMessage.id])
    expect(view.messages[1].versions).toEqual({ ids: [answer, regenerated.assistantMessage.id], index: 1 })

    // Edit the question: a new branch from there, answered with the new text only.
    const edited = await (await alice.post(`/api/threads/${thread.id}/messages/${question}/versions`, { content: 'What is 2+2?', model: demo })).json()
    expect(edited.userMessage).toMatchObject({ content: 'What is 2+2?', parentId: thread.id })
    expect((await waitForJobEnd(alice, edited.jobId)).content).toContain('4')
    view = await alice.json(`/api/threads/${thread.id}`)
    expect(path(view.messages)).toEqual(['What is 2+2?', expect.any(String)])
    expect(view.messages[0].versions).toEqual({ ids: [question, edited.userMessage.id], index: 1 })

    // Back to the first question: its branch comes back with its newest answer, and a new message continues it.
    view = await alice.json(`/api/threads/${thread.id}/branch`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messageId: question }) })
    expect(view.messages.map((message: { id: string }) => message.id)).toEqual([question, regenerated.assistantMessage.id])
    expect(view.thread.activeMessageId).toBe(regenerated.assistantMessage.id)
    const followUp = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'now divide that by 6', model: demo })).json()
    expect(followUp.userMessage.parentId).toBe(regenerated.assistantMessage.id)
    expect((await waitForJobEnd(alice, followUp.jobId)).content).toContain('7')
    expect((await alice.json(`/api/threads/${thread.id}`)).messages).toHaveLength(4)

    // What does not fit says what to fix; someone else's thread is not there.
    const refusals: Array<[string, unknown, number, RegExp]> = [
      [`/api/threads/${thread.id}/messages/${question}/versions`, { model: demo }, 400, /write the new text/],
      [`/api/threads/${thread.id}/messages/${answer}/versions`, { content: 'changed', model: demo }, 400, /answer is not edited/],
      [`/api/threads/${thread.id}/messages/nope/versions`, { model: demo }, 404, /no such message/],
      [`/api/threads/${thread.id}/messages/${answer}/versions`, { model: demo, extra: 1 }, 400, /extra/],
    ]
    for (const [route, body, status, message] of refusals) {
      const response = await alice.post(route, body)
      expect(response.status, route).toBe(status)
      expect((await response.json()).message).toMatch(message)
    }
    const missing = await alice.fetch(`/api/threads/${thread.id}/branch`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messageId: 'nope' }) })
    expect(missing.status).toBe(404)
    expect((await bob.post(`/api/threads/${thread.id}/messages/${answer}/versions`, { model: demo })).status).toBe(404)
    expect((await bob.fetch(`/api/threads/${thread.id}/branch`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ messageId: question }) })).status).toBe(404)
  })

  it('sends an image and a text file with a message: stored with the thread, described by the demo model, served back safely, only to their owner', async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    const thread = await (await alice.post('/api/threads', {})).json()
    const image = Buffer.alloc(2_000)
    Buffer.from([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]).copy(image)
    image.writeUInt32BE(320, 16)
    image.writeUInt32BE(200, 20)
    const notes = '# Packing list\n- passport\n- charger <script>alert(1)</script>\n'
    const sent = await alice.post(`/api/threads/${thread.id}/messages`, {
      content: 'What did I send?',
      model: demo,
      attachments: [{ name: 'photo.png', data: image.toString('base64') }, { name: '../notes.md', data: Buffer.from(notes).toString('base64') }],
    })
    expect(sent.status).toBe(202)
    const { userMessage, jobId } = await sent.json()
    expect(userMessage.attachments).toEqual([
      { id: expect.any(String), name: 'photo.png', mediaType: 'image/png', kind: 'image', size: 2_000 },
      { id: expect.any(String), name: 'notes.md', mediaType: 'text/markdown', kind: 'text', size: Buffer.byteLength(notes) },
    ])
    const job = await waitForJobEnd(alice, jobId)
    expect(job.content).toContain('a PNG image, 320 × 200 pixels')
    expect(job.content).toContain('**notes.md**: Markdown text, 3 lines')

    // Served back: the image as itself, the text as plain text (never HTML), sandboxed; someone else gets 404.
    const [imageRef, notesRef] = userMessage.attachments
    const served = await alice.fetch(`/api/threads/${thread.id}/attachments/${imageRef.id}`)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(Buffer.from(await served.arrayBuffer()).equals(image)).toBe(true)
    const text = await alice.fetch(`/api/threads/${thread.id}/attachments/${notesRef.id}`)
    expect(text.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(text.headers.get('content-security-policy')).toContain('sandbox')
    expect(text.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await text.text()).toBe(notes)
    expect((await bob.fetch(`/api/threads/${thread.id}/attachments/${imageRef.id}`)).status).toBe(404)
    const other = await (await alice.post('/api/threads', {})).json()
    expect((await alice.fetch(`/api/threads/${other.id}/attachments/${imageRef.id}`)).status).toBe(404)

    // Answering again reads the same files; the thread lists them with the question.
    const again = await (await alice.post(`/api/threads/${thread.id}/messages/${(await alice.json(`/api/threads/${thread.id}`)).messages[1].id}/versions`, { model: demo })).json()
    expect((await waitForJobEnd(alice, again.jobId)).content).toContain('320 × 200 pixels')
    expect((await alice.json(`/api/threads/${thread.id}`)).messages[0].attachments).toHaveLength(2)

    // Refused files store nothing and say what to change.
    const refusals: Array<[unknown[], number, RegExp]> = [
      [[{ name: 'tool.exe', data: Buffer.from([0x4D, 0x5A, 0, 0, 0xFF]).toString('base64') }], 415, /"tool\.exe" is neither an image/],
      [[{ name: 'big.txt', data: Buffer.alloc(300 * 1024, 'a').toString('base64') }], 413, /text files may be at most 256 KiB/],
      [Array.from({ length: 5 }, (_, index) => ({ name: `${index}.txt`, data: 'YQ==' })), 400, /at most 4 files/],
      [[{ name: 'x.txt', data: '%%%' }], 400, /base64/],
    ]
    for (const [attachments, status, message] of refusals) {
      const response = await alice.post(`/api/threads/${other.id}/messages`, { content: 'hi', model: demo, attachments })
      expect(response.status).toBe(status)
      expect((await response.json()).message).toMatch(message)
    }
    expect((await alice.json(`/api/threads/${other.id}`)).messages).toEqual([])
  })

  it('cuts off a message body past its files\' limit with a 413 while it streams in, answering another client meanwhile', async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    const thread = await (await alice.post('/api/threads', {})).json()
    // 4 files of 4 MiB base64 at most, plus 1 MiB: a 40 MiB body is refused before it is read whole.
    const huge = JSON.stringify({ content: 'hi', model: demo, attachments: [{ name: 'a.png', data: 'A'.repeat(40 * 1024 * 1024) }] })
    const [refused, answered] = await Promise.all([
      alice.fetch(`/api/threads/${thread.id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: huge }).catch(() => undefined),
      bob.fetch('/api/threads'),
    ])
    if (refused) expect(refused.status).toBe(413)
    expect(answered.status).toBe(200)
    expect((await alice.json(`/api/threads/${thread.id}`)).messages).toEqual([])
  })

  it('renames, validates, and deletes a thread, stopping the answer still running in it', async () => {
    const alice = new SessionClient(app.url)
    const thread = await (await alice.post('/api/threads', {})).json()
    expect((await alice.json(`/api/threads/${thread.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: '  Trip plans ' }) })).title).toBe('Trip plans')

    const bad: Array<[string, RequestInit, RegExp]> = [
      [`/api/threads/${thread.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: '' }) }, /give the conversation a name/],
      [`/api/threads/${thread.id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: '   ', model: demo }) }, /write a message/],
      [`/api/threads/${thread.id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'hi' }) }, /model/],
      [`/api/threads/${thread.id}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ content: 'hi', model: 'openai/gpt-4o-mini' }) }, /needs an OpenRouter API key/],
    ]
    for (const [path, init, message] of bad) {
      const response = await alice.fetch(path, init)
      expect(response.status, path).toBe(400)
      expect((await response.json()).message).toMatch(message)
    }
    // A refused send stores nothing.
    expect((await alice.json(`/api/threads/${thread.id}`)).messages).toEqual([])

    const { jobId } = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'Write a long story', model: demo })).json()
    expect(await alice.json(`/api/threads/${thread.id}`, { method: 'DELETE' })).toEqual({ deleted: true })
    expect((await waitForJobEnd(alice, jobId)).status).toBe('aborted')
    expect((await alice.fetch(`/api/threads/${thread.id}`)).status).toBe(404)
  })

  it('searches a person\'s conversations by their words (SQLite FTS5), safely, and only their own', async () => {
    const alice = new SessionClient(app.url)
    const bob = new SessionClient(app.url)
    const thread = await (await alice.post('/api/threads', {})).json()
    const { jobId } = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'What time is it in Tokyo?', model: demo })).json()
    await waitForJobEnd(alice, jobId)
    // The answer's words are searchable once it is written back into the conversation.
    let hits: Array<{ thread: { id: string }, messageId?: string, role?: string, snippet: string }> = []
    for (let attempt = 0; attempt < 50 && hits.length === 0; attempt++) {
      hits = (await alice.json(`/api/threads/search?q=${encodeURIComponent('asia/tokyo')}`)).hits
      if (hits.length === 0) await new Promise(resolve => setTimeout(resolve, 100))
    }
    expect(hits).toEqual([expect.objectContaining({ thread: expect.objectContaining({ id: thread.id }), role: 'assistant', snippet: expect.stringMatching(/Tokyo/) })])
    expect((await bob.json(`/api/threads/search?q=tokyo`)).hits).toEqual([])
    // Search syntax from the query is only words; hostile or long input is answered, never a 500 or a hang.
    for (const q of ['"tokyo" OR NEAR(', '*', 'tokyo AND -time', ')(', '\u0000\u2028']) {
      const response = await alice.fetch(`/api/threads/search?q=${encodeURIComponent(q)}`)
      expect(response.status, q).toBe(200)
    }
    const tooLong = await alice.fetch(`/api/threads/search?q=${'a'.repeat(1_001)}`)
    expect(tooLong.status).toBe(400)
    expect(await tooLong.text()).toMatch(/at most 1,000 characters/)
    const missing = await alice.fetch('/api/threads/search')
    expect(missing.status).toBe(400)
  })

  it('gives a share link\'s anonymous reader no guest session, even with guests on', async () => {
    const alice = new SessionClient(app.url)
    const thread = await (await alice.post('/api/threads', {})).json()
    const sent = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'What is 6*7?', model: demo })).json()
    await waitForJobEnd(alice, sent.jobId)
    const link = await (await alice.post(`/api/threads/${thread.id}/share`, {})).json()
    // Accounts only (the default): a guest is not one, and none is started for the reader: read
    // 40 times from this address (past the 30 new guest sessions an address may start a minute),
    // it never counts against that rate, so a new guest here is still let in.
    for (let read = 0; read < 40; read++) expect((await fetch(`${app.url}/api/shared/${link.url.split('/share/')[1]}`)).status).toBe(401)
    expect((await new SessionClient(app.url).post('/api/threads', {})).status).toBe(201)
    // A guest who holds a session already is refused the same way.
    const bob = new SessionClient(app.url)
    await bob.json('/api/threads')
    expect(bob.cookie).not.toBe('')
    expect((await bob.fetch(`/api/shared/${link.url.split('/share/')[1]}`)).status).toBe(401)
  })
})
