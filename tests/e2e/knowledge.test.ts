/**
 * Knowledge bases against the built server (SQLite, FTS5): a person puts documents of every kind
 * in, attaches the base to a conversation, and the offline demo model answers from the right
 * passage with a link that opens the document there; a real model (the fake upstream) is offered
 * `search_knowledge` only where bases are attached. Another person never sees the base unless it
 * is shared with a group of theirs (to read, or to edit); the same file is not indexed again, a
 * changed one is; a zip bomb fails with a message while others are answered; and a document being
 * indexed when the server is killed is indexed once after the restart.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startFakeOpenRouter, textReply, toolCallReply, type FakeOpenRouter, type RecordedRequest } from '../support/fake-openrouter'
import { registerAccount, SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { startBuiltApp, useAppServers, useDataDirs, type RunningApp } from '../support/built-app'
import { docxBomb, docxOf, pdfOf } from '../support/documents'
import type { KnowledgeBaseView, KnowledgeDocument, KnowledgeDocumentView, KnowledgeList } from '../../shared/types/knowledge'
import { ask, citedLinks, encode, indexed, passageAt, upload } from '../support/knowledge-client'

let app: RunningApp
let fake: FakeOpenRouter
let admin: SessionClient
let ann: SessionClient
let bob: SessionClient
/** A local web site the knowledge bases fetch pages from (the operator allowed 127.0.0.1). */
let site: Server
let siteUrl = ''
let pageVersion = 1
/** A .docx zip bomb, made before any request: seconds of compressing between two requests would let the server close the idle keep-alive connection just as the next one starts on it. */
let bomb: Uint8Array

beforeAll(async () => {
  bomb = docxBomb(200)
  fake = await startFakeOpenRouter()
  site = createServer((request, response) => {
    if (request.url === '/policy.html') {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
      response.end(`<html><body><h1>Remote work</h1><p>Staff may work from home ${pageVersion === 1 ? 'two' : 'three'} days a week.</p></body></html>`)
    } else if (request.url === '/logo.png') {
      response.writeHead(200, { 'content-type': 'image/png' })
      response.end('png')
    } else {
      response.writeHead(404).end()
    }
  })
  await new Promise<void>(resolve => site.listen(0, '127.0.0.1', resolve))
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
  app = await startBuiltApp({ NUXT_TOOLS_WEB_ALLOWED_NETWORKS: '127.0.0.1', NUXT_OPENROUTER_BASE_URL: fake.url, NUXT_OPENROUTER_API_KEY: 'sk-or-test', NUXT_THREADS_GENERATE_TITLES: 'false', NUXT_KNOWLEDGE_FILE_BYTES: '3000000', NUXT_KNOWLEDGE_PARSE_MEMORY_MB: '96', NUXT_KNOWLEDGE_PASSAGES_UP_FRONT: '2' })
  admin = await registerAccount(app.url, 'Root')
  const opened = await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signup: 'open' }) })
  if (opened.status !== 200) throw new Error(`opening sign-up answered ${opened.status}`)
  ann = await registerAccount(app.url, 'Ann')
  bob = await registerAccount(app.url, 'Bob')
}, 240_000)
afterAll(async () => {
  await app?.stop()
  await fake?.close()
  await new Promise(resolve => site?.close(resolve))
})

describe('knowledge bases', () => {
  let handbook: KnowledgeBaseView

  it('answers from the right passage of each kind of document, citing a link that opens the document there', async () => {
    const created = await ann.post('/api/knowledge', { name: 'Handbook', description: 'How we work' })
    expect(created.status).toBe(201)
    handbook = await created.json()
    const files: Array<[string, Uint8Array]> = [
      ['handbook.md', encode('# Handbook\n\n## Travel\n\nBook trains for any trip under 500 km; flights need approval.\n\n## Expenses\n\nMeals are refunded up to 40 euros a day.')],
      ['security.pdf', pdfOf(['Security policy', 'Laptops lock after five minutes without use.'])],
      ['parking.docx', docxOf(['# Parking', 'The garage on Elm Street is free for staff on Fridays.'])],
      ['kitchen.html', encode('<html><body><h1>Kitchen</h1><p>The espresso machine is descaled every Monday.</p><script>steal()</script></body></html>')],
      ['desks.csv', encode('person,desk\nAnn,12A\nBob,14C\n')],
      ['wifi.txt', encode('The guest wifi password changes every quarter.')],
    ]
    for (const [name, bytes] of files) expect((await upload(ann, handbook.id, name, bytes)).status).toBe(202)
    const documents = await indexed(ann, handbook.id, files.length)
    expect(documents.map(document => [document.name, document.status])).toEqual(files.map(([name]) => [name, 'ready']).sort())

    const questions: Array<[string, string, string]> = [
      ['How much are meals refunded?', 'handbook.md', 'Meals are refunded up to 40 euros a day.'],
      ['When do laptops lock?', 'security.pdf', 'Laptops lock after five minutes without use.'],
      ['Is the garage free?', 'parking.docx', 'The garage on Elm Street is free for staff on Fridays.'],
      ['When is the espresso machine descaled?', 'kitchen.html', 'The espresso machine is descaled every Monday.'],
      ['Which desk does Bob have?', 'desks.csv', 'person: Bob; desk: 14C'],
    ]
    for (const [question, name, text] of questions) {
      const answer = await ask(ann, question, [handbook.id])
      expect(answer.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'search_knowledge' })
      const [first] = citedLinks(answer.content)
      expect(first, answer.content).toBeDefined()
      const { document, passage } = await passageAt(ann, first!)
      expect(document.name).toBe(name)
      expect(passage.text).toContain(text)
    }
    const pdfAnswer = await ask(ann, 'When do laptops lock?', [handbook.id])
    expect((await passageAt(ann, citedLinks(pdfAnswer.content)[0]!)).passage.page).toBe(2)
  }, 180_000)

  it('offers a real model search_knowledge, and the best passages up front, only in a conversation with bases attached', async () => {
    fake.script(() => textReply('ok'))
    const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map(tool => tool.function.name)
    const systemOf = (request: RecordedRequest) => String(request.body.messages.find(message => message.role === 'system')?.content ?? '')
    let at = fake.requests.length
    await ask(ann, 'How much are meals refunded?', [handbook.id], 'openai/gpt-4o-mini')
    expect(toolNames(fake.requests[at]!)).toContain('search_knowledge')
    expect(systemOf(fake.requests[at]!)).toMatch(/\[1\] handbook\.md \(Handbook › Expenses\) — cite as \[1\]\(\/knowledge\/kb-[\w-]+\/kd-[\w-]+\?passage=1\)\nMeals are refunded up to 40 euros a day\./)
    at = fake.requests.length
    await ask(ann, 'How much are meals refunded?', [], 'openai/gpt-4o-mini')
    expect(toolNames(fake.requests[at]!)).not.toContain('search_knowledge')
    expect(systemOf(fake.requests[at]!)).not.toContain('Meals are refunded')
  }, 60_000)

  it('puts the passages up front again when an answer is asked again, for its stored question', async () => {
    fake.script(() => textReply('ok'))
    const systemOf = (request: RecordedRequest) => String(request.body.messages.find(message => message.role === 'system')?.content ?? '')
    const thread = await (await ann.post('/api/threads', {})).json()
    await ann.fetch(`/api/threads/${thread.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ settings: { knowledgeBaseIds: [handbook.id] } }) })
    const sent = await (await ann.post(`/api/threads/${thread.id}/messages`, { content: 'How much are meals refunded?', model: 'openai/gpt-4o-mini' })).json()
    await waitForJobEnd(ann, sent.jobId, 60_000)
    const at = fake.requests.length
    const again = await ann.post(`/api/threads/${thread.id}/messages/${sent.assistantMessage.id}/versions`, { model: 'openai/gpt-4o-mini' })
    expect(again.status).toBe(202)
    await waitForJobEnd(ann, (await again.json()).jobId, 60_000)
    expect(systemOf(fake.requests[at]!)).toContain('Meals are refunded up to 40 euros a day.')
  }, 60_000)

  it('lets a workflow agent step search its own bases (offered search_knowledge with them), and refuses a base its owner cannot read when saved', async () => {
    const toolNames = (request: RecordedRequest) => (request.body.tools ?? []).map(tool => tool.function.name)
    const step = (id: string, bases: string[]) => ({
      version: 1,
      name: `Knowledge ${id}`,
      defaultModel: 'openai/gpt-4o-mini',
      nodes: [
        { id: 'start', kind: 'start' },
        { id, kind: 'agent', model: 'openai/gpt-4o-mini', systemPrompt: `STEP-${id}`, tools: [], knowledgeBaseIds: bases },
        { id: 'out', kind: 'output' },
      ],
      edges: [{ from: 'start', to: id }, { from: id, to: 'out' }],
    })
    // Bob cannot read Ann's base: his workflow naming it is refused with the step named.
    const refused = await bob.post('/api/workflows', { definition: step('lookup', [handbook.id]) })
    expect(refused.status).toBe(400)
    expect(await refused.text()).toMatch(/Node \\?"lookup\\?" searches the knowledge base/)

    const saved = await ann.post('/api/workflows', { definition: step('lookup', [handbook.id]) })
    expect(saved.status).toBe(201)
    const workflowId = (await saved.json()).id as string
    const searches: string[] = []
    fake.script((request) => {
      const asked = request.body.messages.at(-1)
      if (asked?.role === 'tool') {
        searches.push(String(asked.content))
        return textReply('Meals: 40 euros a day [1].')
      }
      return toolCallReply([{ id: 'call-kb', name: 'search_knowledge', arguments: JSON.stringify({ query: 'meals refunded' }) }])
    })
    const at = fake.requests.length
    const started = await ann.post(`/api/workflows/${workflowId}/run`, { prompt: 'How much are meals refunded?' })
    expect(started.status).toBe(202)
    const run = await waitForJobEnd(ann, (await started.json()).jobId, 60_000)
    expect(run.status).toBe('complete')
    // The step's model was offered the search (the run has no conversation with bases attached)…
    expect(toolNames(fake.requests[at]!)).toEqual(['search_knowledge'])
    // …and the search read the step's base: the handbook's passage, with its link to cite.
    expect(searches).toHaveLength(1)
    expect(searches[0]).toContain('Meals are refunded up to 40 euros a day.')
    expect(searches[0]).toMatch(/\[1\]\(\/knowledge\/kb-[\w-]+\/kd-[\w-]+\?passage=\d+\)/)
    expect(run.content).toContain('Meals: 40 euros a day')
  }, 60_000)

  it('keeps a base from everyone else until it is shared with a group of theirs, to read or to edit', async () => {
    expect(await bob.json('/api/knowledge')).toMatchObject({ bases: [], groups: [] })
    expect((await bob.fetch(`/api/knowledge/${handbook.id}`)).status).toBe(404)
    const thread = await (await bob.post('/api/threads', {})).json()
    const attach = await bob.fetch(`/api/threads/${thread.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ settings: { knowledgeBaseIds: [handbook.id] } }) })
    expect(attach.status).toBe(404)
    expect((await upload(bob, handbook.id, 'mine.txt', encode('x'))).status).toBe(404)

    const users = await admin.json<Array<{ id: string, name: string }>>('/api/admin/users')
    const bobId = users.find(user => user.name === 'Bob')!.id
    expect((await admin.fetch('/api/admin/groups/Sales', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(200)
    expect((await admin.fetch(`/api/admin/users/${bobId}/groups`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ groups: ['Sales'] }) })).status).toBe(200)
    const shared = await ann.fetch(`/api/knowledge/${handbook.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Handbook', sharedWith: [{ group: 'sales', access: 'read' }] }) })
    expect(shared.status).toBe(200)
    expect(await bob.json<KnowledgeList>('/api/knowledge')).toMatchObject({ bases: [{ name: 'Handbook', access: 'read' }], groups: ['Sales'] })
    const answer = await ask(bob, 'How much are meals refunded?', [handbook.id])
    expect(answer.content).toContain('Meals are refunded up to 40 euros a day.')
    const refused = await upload(bob, handbook.id, 'mine.txt', encode('x'))
    expect(refused.status).toBe(403)
    expect(await refused.text()).toContain('ask its owner for edit access')
    expect((await bob.fetch(`/api/knowledge/${handbook.id}`, { method: 'DELETE' })).status).toBe(403)
  }, 120_000)

  it('counts documents against their owner\'s limits: the role\'s, or more from a group of theirs, with where each comes from', async () => {
    const json = (body: unknown) => ({ method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    const bobId = (await admin.json<Array<{ id: string, name: string }>>('/api/admin/users')).find(user => user.name === 'Bob')!.id
    expect((await admin.fetch('/api/admin/limits', json({ user: { knowledgeDocuments: 1 } }))).status).toBe(200)
    try {
      const base = await (await bob.post('/api/knowledge', { name: 'Bob notes' })).json() as KnowledgeBaseView
      expect((await upload(bob, base.id, 'one.txt', encode('The first note.'))).status).toBe(202)
      const refused = await upload(bob, base.id, 'two.txt', encode('The second note.'))
      expect(refused.status).toBe(409)
      expect(await refused.text()).toContain('the most their role and groups allow')
      // Sales (Bob's group) gives three.
      expect((await admin.fetch('/api/admin/groups/Sales', json({ limits: { knowledgeDocuments: 3, knowledgePassages: 500_000 } }))).status).toBe(200)
      await expect.poll(async () => (await upload(bob, base.id, 'two.txt', encode('The second note.'))).status, { timeout: 15_000 }).toBe(202)
      const view = await admin.json<{ limits: { knowledgeDocuments: number }, sources: Record<string, string> }>(`/api/admin/users/${bobId}/groups`)
      expect(view.limits.knowledgeDocuments).toBe(3)
      expect(view.sources).toMatchObject({ knowledgeDocuments: 'group:Sales', knowledgePassages: 'group:Sales', knowledgeMegabytes: 'role:user' })
      expect((await bob.fetch(`/api/knowledge/${base.id}`, { method: 'DELETE' })).status).toBe(204)
    } finally {
      await admin.fetch('/api/admin/limits', json({}))
      await admin.fetch('/api/admin/groups/Sales', json({}))
    }
  }, 60_000)

  it('does not index the same file again, and indexes a changed one once', async () => {
    const base = await (await ann.post('/api/knowledge', { name: 'Notes' })).json() as KnowledgeBaseView
    expect((await upload(ann, base.id, 'office.txt', encode('The office opens at eight.'))).status).toBe(202)
    const [first] = await indexed(ann, base.id, 1)
    const same = await upload(ann, base.id, 'office.txt', encode('The office opens at eight.'))
    expect(same.status).toBe(200)
    expect(await same.json()).toMatchObject({ id: first!.id, status: 'ready', updatedAt: first!.updatedAt })
    expect((await upload(ann, base.id, 'office.txt', encode('The office opens at nine.'))).status).toBe(202)
    const [changed] = await indexed(ann, base.id, 1)
    expect(changed).toMatchObject({ id: first!.id, status: 'ready', passages: 1 })
    const view = await ann.json<KnowledgeDocumentView>(`/api/knowledge/${base.id}/documents/${first!.id}`)
    expect(view.passages.map(passage => passage.text)).toEqual(['The office opens at nine.'])
    expect((await ann.fetch(`/api/knowledge/${base.id}/documents/${first!.id}/file`)).headers.get('content-disposition')).toContain('office.txt')
  }, 60_000)

  it('adds a file the model wrote in a conversation\'s workspace, again as a new version when it changed; never another person\'s', async () => {
    const written = await ask(ann, 'Save "Parking is free for staff on weekends." as notes/parking.md', [])
    expect(written.status).toBe('complete')
    const threadId = written.threadId
    const base = await (await ann.post('/api/knowledge', { name: 'From chats' })).json() as KnowledgeBaseView
    const add = (client: SessionClient, body: unknown) => client.post(`/api/knowledge/${base.id}/workspace-files`, body)
    expect((await add(ann, { threadId, path: 'notes/parking.md' })).status).toBe(202)
    const [document] = await indexed(ann, base.id, 1)
    expect(document).toMatchObject({ name: 'parking.md', status: 'ready', passages: 1 })
    expect((await add(ann, { threadId, path: 'notes/parking.md' })).status).toBe(200)
    // Refusals that say what to fix: no such file, a path above the workspace, another person's conversation or base.
    expect((await add(ann, { threadId, path: 'notes/missing.md' })).status).toBe(404)
    const above = await add(ann, { threadId, path: '../../etc/passwd' })
    expect(above.status).toBe(400)
    expect((await above.json()).message).toContain('above the workspace')
    expect((await add(bob, { threadId, path: 'notes/parking.md' })).status).toBe(404)
    const bobThread = (await ask(bob, 'Save "mine" as mine.md', [])).threadId
    expect((await add(ann, { threadId: bobThread, path: 'mine.md' })).status).toBe(404)
    // Changed (written again, here in another conversation), added again: a new version of the same document.
    const again = await ask(ann, 'Save "Parking costs 2 euros on weekends." as notes/parking.md', [])
    expect((await add(ann, { threadId: again.threadId, path: 'notes/parking.md' })).status).toBe(202)
    const [changed] = await indexed(ann, base.id, 1)
    expect(changed!.id).toBe(document!.id)
    const view = await ann.json<KnowledgeDocumentView>(`/api/knowledge/${base.id}/documents/${document!.id}`)
    expect(view.passages.map(passage => passage.text)).toEqual(['Parking costs 2 euros on weekends.'])
  }, 60_000)

  it('adds a web page through web_fetch\'s guard, again as a new version, and refuses what is not a document or not allowed', async () => {
    const base = await (await ann.post('/api/knowledge', { name: 'Intranet' })).json() as KnowledgeBaseView
    const added = await ann.post(`/api/knowledge/${base.id}/pages`, { url: `${siteUrl}/policy.html` })
    expect(added.status).toBe(202)
    expect(await added.json()).toMatchObject({ name: '127.0.0.1-policy.html', mediaType: 'text/html' })
    await indexed(ann, base.id, 1)
    expect((await ask(ann, 'How many days may staff work from home?', [base.id])).content).toContain('two days a week')
    pageVersion = 2
    expect((await ann.post(`/api/knowledge/${base.id}/pages`, { url: `${siteUrl}/policy.html` })).status).toBe(202)
    const [again] = await indexed(ann, base.id, 1)
    expect((await ann.json<KnowledgeDocumentView>(`/api/knowledge/${base.id}/documents/${again!.id}`)).passages[0]!.text).toContain('three days a week')
    const png = await ann.post(`/api/knowledge/${base.id}/pages`, { url: `${siteUrl}/logo.png` })
    expect([png.status, (await png.json()).message]).toEqual([415, expect.stringContaining('is image/png')])
    expect((await ann.post(`/api/knowledge/${base.id}/pages`, { url: `${siteUrl}/gone` })).status).toBe(400)
    const metadata = await ann.post(`/api/knowledge/${base.id}/pages`, { url: 'http://169.254.169.254/latest/meta-data/' })
    expect(metadata.status).toBe(400)
    expect(await metadata.text()).toMatch(/link-local|not allowed|refused/i)
    expect((await ann.post(`/api/knowledge/${base.id}/pages`, { url: 'not a url' })).status).toBe(400)
  }, 60_000)

  it('refuses bad files with a message, and fails a zip bomb while other requests are answered', async () => {
    const base = await (await ann.post('/api/knowledge', { name: 'Hostile' })).json() as KnowledgeBaseView
    const png = await upload(ann, base.id, 'photo.png', encode('x'))
    expect(png.status).toBe(415)
    expect(await png.text()).toContain('PDF, Word (.docx), Markdown, HTML, text and CSV')
    const big = await upload(ann, base.id, 'big.txt', new Uint8Array(3_001_000))
    expect(big.status).toBe(413)
    expect(await big.text()).toContain('a document may have at most 2.9 MB')
    expect((await ann.post(`/api/knowledge/${base.id}/documents`, { name: 'x.txt', data: 'aGk=', extra: true })).status).toBe(400)
    expect((await ann.post('/api/knowledge', { name: '' })).status).toBe(400)

    expect((await upload(ann, base.id, 'bomb.docx', bomb)).status).toBe(202)
    // While the bomb is read, others are answered.
    let answered = 0
    await vi.waitFor(async () => {
      expect((await bob.fetch('/api/knowledge')).status).toBe(200)
      answered++
      const [document] = (await ann.json<{ documents: KnowledgeDocument[] }>(`/api/knowledge/${base.id}`)).documents
      expect(document!.status).toBe('failed')
      expect(document!.error).toContain('needed more than 96 MiB of memory')
    }, { timeout: 60_000, interval: 100 })
    expect(answered).toBeGreaterThan(0)
    expect((await ann.fetch('/api/health')).status).toBe(200)
  }, 120_000)
})

describe('indexing across a kill -9', () => {
  const dirs = useDataDirs('or3-knowledge-')
  const servers = useAppServers(() => ({ NUXT_THREADS_GENERATE_TITLES: 'false', NUXT_KNOWLEDGE_INDEX_LEASE_MS: '1500' }))

  it('indexes a document being read when the server died once, after the restart', async () => {
    const dataDir = dirs.fresh()
    const first = await servers.start({ NUXT_DATA_DIR: dataDir })
    const kim = await registerAccount(first.url, 'Kim')
    const base = await (await kim.post('/api/knowledge', { name: 'Manual' })).json() as KnowledgeBaseView
    // Enough pages that reading takes a while: the kill lands while the document is being indexed.
    const pages = Array.from({ length: 1_500 }, (_, index) => `Page ${index + 1}\nChapter ${index + 1} explains valve number ${index + 1}.`)
    expect((await upload(kim, base.id, 'manual.pdf', pdfOf(pages))).status).toBe(202)
    try {
      await vi.waitFor(async () => {
        const [document] = (await kim.json<{ documents: KnowledgeDocument[] }>(`/api/knowledge/${base.id}`)).documents
        expect(document!.status).toBe('indexing')
      }, { timeout: 30_000, interval: 20 })
    } finally {
      await first.stop('SIGKILL')
    }
    const second = await servers.start({ NUXT_DATA_DIR: dataDir })
    const again = new SessionClient(second.url)
    again.cookie = kim.cookie
    const [document] = await indexed(again, base.id, 1)
    expect(document).toMatchObject({ status: 'ready', pages: 1_500 })
    // Once: every passage is there one time, numbered without a gap.
    const seqs: number[] = []
    for (let from = 0; from !== undefined;) {
      const view: KnowledgeDocumentView = await again.json(`/api/knowledge/${base.id}/documents/${document!.id}?from=${from}`)
      seqs.push(...view.passages.map(passage => passage.seq))
      from = view.nextSeq as number
    }
    expect(seqs).toEqual(Array.from({ length: document!.passages }, (_, index) => index))
    const hits = await ask(again, 'Which chapter explains valve number 1234?', [base.id])
    expect(hits.content).toContain('valve number 1234')
  }, 240_000)
})

describe('searching by meaning too (an embeddings endpoint: the fake upstream\'s deterministic model)', () => {
  const dirs = useDataDirs('or3-knowledge-embeddings-')
  const servers = useAppServers(() => ({ NUXT_THREADS_GENERATE_TITLES: 'false', NUXT_OPENROUTER_BASE_URL: fake.url, NUXT_OPENROUTER_API_KEY: 'sk-or-test', NUXT_KNOWLEDGE_EMBEDDINGS_MODEL: 'fake/embed', NUXT_KNOWLEDGE_EMBEDDINGS_TIMEOUT_MS: '5000' }))
  const HANDBOOK = '# Handbook\n\n## Fleet\n\nCompany cars are booked through the fleet desk on the second floor.\n\n## Expenses\n\nMeals are refunded up to 40 euros a day.\n\n## Time off\n\nEveryone has 25 vacation days a year.'

  it('answers a question whose words the document does not use, and by words alone while the endpoint is down', async () => {
    const server = await servers.start({ NUXT_DATA_DIR: dirs.fresh() })
    const lee = await registerAccount(server.url, 'Lee')
    const base = await (await lee.post('/api/knowledge', { name: 'Handbook' })).json() as KnowledgeBaseView
    const before = fake.embeddingRequests.length
    expect((await upload(lee, base.id, 'handbook.md', encode(HANDBOOK))).status).toBe(202)
    await indexed(lee, base.id, 1)
    // The passages went to the endpoint with the model and the key (the server's OpenRouter key: no key of its own was set).
    const indexing = fake.embeddingRequests.slice(before)
    expect(indexing[0]).toMatchObject({ model: 'fake/embed', inputs: 3 })
    expect(indexing[0]!.headers.authorization).toBe('Bearer sk-or-test')
    // "automobile": no passage has the word; its meaning finds the fleet desk, and the answer cites it.
    const answer = await ask(lee, 'Who do I ask for an automobile?', [base.id])
    expect(answer.status).toBe('complete')
    expect(answer.content).toContain('fleet desk')
    const [link] = citedLinks(answer.content)
    expect((await passageAt(lee, link!)).passage.heading).toBe('Handbook › Fleet')

    // The endpoint down: a new document is indexed by its words (after three tries), and questions are answered by words.
    fake.embeddingsDown(true)
    try {
      expect((await upload(lee, base.id, 'canteen.md', encode('# Canteen\n\nThe canteen serves lunch from noon to two.'))).status).toBe(202)
      const documents = await indexed(lee, base.id, 2)
      expect(documents.map(document => document.status)).toEqual(['ready', 'ready'])
      const byWords = await ask(lee, 'When does the canteen serve lunch?', [base.id])
      expect(byWords.content).toContain('noon to two')
    } finally {
      fake.embeddingsDown(false)
    }
  }, 120_000)
})
