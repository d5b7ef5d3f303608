import { describe, expect, it } from 'vitest'
import { KnowledgeBases, type KnowledgeOwnerLimits } from '../../../server/lib/knowledge/knowledge-bases'
import { KnowledgeIndexer } from '../../../server/lib/knowledge/indexer'
import { searchKnowledgeTool, withKnowledgeBases, withKnowledgeGate } from '../../../server/lib/knowledge/knowledge-tool'
import { createMemoryKnowledgeStore } from '../../../server/lib/stores/knowledge/memory'
import { createMemoryWorkspaceStore } from '../../../server/lib/stores/workspaces/memory'
import type { ToolAccessCheck } from '../../../server/lib/tools/policy/tool-policy'
import { docxOf, pdfOf } from '../../support/documents'

const LIMITS = { enabled: true, fileBytes: 1_000_000, basesPerPerson: 3, perOwner: async () => ({ documents: 5, bytes: 2_000_000, passages: 100_000 }) }
// Time limits far above any machine's: the tests wait on the indexer going idle, not on time (a lease of 10 s ran out on a CI machine loaded by two runs at once, and a document stayed unindexed).
const INDEXING = { parseTimeoutMs: 300_000, parseMemoryMb: 128, passagesPerDocument: 1_000, leaseMs: 600_000 }
const text = (value: string) => new TextEncoder().encode(value)
const HANDBOOK = '# Handbook\n\n## Travel\n\nBook trains for any trip under 500 km.\n\n## Expenses\n\nMeals are refunded up to 40 euros a day.'

function setUp(groups: Record<string, string[]> = {}, { indexOnAdd = true } = {}) {
  const store = createMemoryKnowledgeStore()
  const files = createMemoryWorkspaceStore()
  let indexer: KnowledgeIndexer
  const knowledge = new KnowledgeBases(store, files, LIMITS, async userId => groups[userId] ?? [], () => indexOnAdd && indexer.nudge())
  indexer = new KnowledgeIndexer(store, document => knowledge.readFile(document), INDEXING)
  return { store, files, knowledge, indexer: indexer! }
}

describe('knowledge bases', () => {
  it('indexes a document in the background and finds its passages, with where they are', async () => {
    const { knowledge, indexer } = setUp()
    const base = await knowledge.create('ann', { name: '  Company   handbook ' })
    expect(base).toMatchObject({ name: 'Company handbook', access: 'owner', documents: 0 })
    const { document } = await knowledge.addDocument('ann', base.id, { name: 'handbook.md', bytes: text(HANDBOOK) })
    expect(document).toMatchObject({ status: 'queued', mediaType: 'text/markdown', passages: 0 })
    await indexer.whenIdle()
    const { documents } = await knowledge.documents('ann', base.id)
    expect(documents[0]).toMatchObject({ status: 'ready', passages: 2 })
    const { hits } = await knowledge.search('ann', [base.id], 'how much are meals refunded?', 5)
    expect(hits[0]).toMatchObject({ documentName: 'handbook.md', heading: 'Handbook › Expenses', text: 'Meals are refunded up to 40 euros a day.' })
    const view = await knowledge.read('ann', base.id, document.id, 1)
    expect(view.passages.map(passage => passage.seq)).toEqual([1])
  })

  it('indexes PDF pages and Word headings, and marks a file it cannot read as failed, saying why', async () => {
    const { knowledge, indexer } = setUp()
    const base = await knowledge.create('ann', { name: 'Docs' })
    await knowledge.addDocument('ann', base.id, { name: 'policy.pdf', bytes: pdfOf(['Travel', 'Meals are refunded up to 40 euros.']) })
    await knowledge.addDocument('ann', base.id, { name: 'guide.docx', bytes: docxOf(['# Guide', 'Parking is free on Fridays.']) })
    await knowledge.addDocument('ann', base.id, { name: 'broken.pdf', bytes: text('%PDF-1.4 broken') })
    await indexer.whenIdle()
    const { documents } = await knowledge.documents('ann', base.id)
    expect(documents.map(document => [document.name, document.status])).toEqual([['broken.pdf', 'failed'], ['guide.docx', 'ready'], ['policy.pdf', 'ready']])
    expect(documents[0]!.error).toMatch(/^This PDF could not be read: /)
    expect(documents[2]!.pages).toBe(2)
    expect((await knowledge.search('ann', [base.id], 'meals', 5)).hits[0]).toMatchObject({ page: 2, documentName: 'policy.pdf' })
    expect((await knowledge.search('ann', [base.id], 'parking', 5)).hits[0]).toMatchObject({ heading: 'Guide', documentName: 'guide.docx' })
  })

  it('does not index the same file again; a changed one is a new version, searchable as the old until indexed', async () => {
    const { knowledge, indexer, store } = setUp()
    const base = await knowledge.create('ann', { name: 'Docs' })
    const first = await knowledge.addDocument('ann', base.id, { name: 'notes.txt', bytes: text('The office opens at eight.') })
    await indexer.whenIdle()
    const again = await knowledge.addDocument('ann', base.id, { name: 'notes.txt', bytes: text('The office opens at eight.') })
    expect(again.changed).toBe(false)
    expect(again.document).toMatchObject({ id: first.document.id, status: 'ready' })
    const changed = await knowledge.addDocument('ann', base.id, { name: 'notes.txt', bytes: text('The office opens at nine.') })
    expect(changed).toMatchObject({ changed: true, document: { id: first.document.id, status: 'queued' } })
    await indexer.whenIdle()
    expect((await store.readPassages(first.document.id, 0, 10)).map(passage => passage.text)).toEqual(['The office opens at nine.'])
    expect((await knowledge.documents('ann', base.id)).documents).toHaveLength(1)
  })

  it('shares a base with a group to read or to edit; anyone else gets 404 as for an unknown base', async () => {
    const { knowledge } = setUp({ bob: ['Sales'], cat: ['Support'] })
    const base = await knowledge.create('ann', { name: 'Pricing', sharedWith: [{ group: 'sales', access: 'read' }] })
    expect((await knowledge.list('bob')).bases.map(view => [view.name, view.access])).toEqual([['Pricing', 'read']])
    expect((await knowledge.list('cat')).bases).toEqual([])
    await expect(knowledge.open('cat', base.id)).rejects.toMatchObject({ statusCode: 404 })
    await expect(knowledge.addDocument('bob', base.id, { name: 'a.txt', bytes: text('x') })).rejects.toMatchObject({ statusCode: 403 })
    await expect(knowledge.update('bob', base.id, { name: 'Mine now' })).rejects.toMatchObject({ statusCode: 403 })
    await knowledge.update('ann', base.id, { name: 'Pricing', sharedWith: [{ group: 'Sales', access: 'edit' }] })
    expect((await knowledge.addDocument('bob', base.id, { name: 'a.txt', bytes: text('Prices rise in May.') })).document.addedBy).toBe('bob')
    await expect(knowledge.remove('bob', base.id)).rejects.toMatchObject({ statusCode: 403 })
    // A search names only the bases its person may read.
    expect((await knowledge.search('cat', [base.id], 'prices', 5)).hits).toEqual([])
  })

  it('refuses what is past the limits, with a message that says what to do', async () => {
    const { knowledge } = setUp()
    const base = await knowledge.create('ann', { name: 'One' })
    await expect(knowledge.addDocument('ann', base.id, { name: 'photo.png', bytes: text('x') })).rejects.toMatchObject({ statusCode: 415 })
    await expect(knowledge.addDocument('ann', base.id, { name: 'big.txt', bytes: new Uint8Array(1_000_001) })).rejects.toMatchObject({ statusCode: 413, message: expect.stringContaining('at most') })
    await expect(knowledge.addDocument('ann', base.id, { name: 'empty.txt', bytes: new Uint8Array(0) })).rejects.toMatchObject({ statusCode: 400 })
    for (let index = 0; index < 5; index++) await knowledge.addDocument('ann', base.id, { name: `n${index}.txt`, bytes: text(`note ${index}`) })
    await expect(knowledge.addDocument('ann', base.id, { name: 'n5.txt', bytes: text('one more') })).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining('Delete some first') })
    await expect(knowledge.create('ann', { name: '   ' })).rejects.toMatchObject({ statusCode: 400 })
    await knowledge.create('ann', { name: 'Two' })
    await knowledge.create('ann', { name: 'Three' })
    await expect(knowledge.create('ann', { name: 'Four' })).rejects.toMatchObject({ statusCode: 409 })
    expect((await knowledge.addDocument('ann', base.id, { name: '../../etc/n0.txt', bytes: text('note 0') })).changed).toBe(false)
  })

  it('counts what a base holds against its owner\'s limits (their role\'s, or a group\'s larger ones), passages when a document is cut', async () => {
    const allowed: Record<string, KnowledgeOwnerLimits> = { ann: { documents: 2, bytes: 1_000_000, passages: 3 }, bob: { documents: 100, bytes: 1_000_000, passages: 1_000 } }
    const store = createMemoryKnowledgeStore()
    let indexer: KnowledgeIndexer
    const knowledge = new KnowledgeBases(store, createMemoryWorkspaceStore(), { ...LIMITS, perOwner: async owner => allowed[owner]! }, async userId => (userId === 'bob' ? ['Sales'] : []), () => indexer.nudge())
    indexer = new KnowledgeIndexer(store, document => knowledge.readFile(document), { ...INDEXING, passagesRefusal: (document, count) => knowledge.passagesRefusal(document, count) })
    const base = await knowledge.create('ann', { name: 'Shared', sharedWith: [{ group: 'Sales', access: 'edit' }] })
    await knowledge.addDocument('ann', base.id, { name: 'a.md', bytes: text('# A\n\nThe first note.') })
    // Bob adds to Ann's base: it counts against Ann, not Bob.
    await knowledge.addDocument('bob', base.id, { name: 'b.md', bytes: text('# B\n\nThe second note.') })
    await expect(knowledge.addDocument('bob', base.id, { name: 'c.md', bytes: text('# C\n\nOne too many.') })).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining('their role and groups allow') })
    await indexer.whenIdle()

    // A group of Ann's gives more documents (taken at once); her passages stay at 3.
    allowed.ann = { ...allowed.ann!, documents: 10 }
    const long = text('# Long\n\n## One\n\nFirst part.\n\n## Two\n\nSecond part.\n\n## Three\n\nThird part.')
    const { document } = await knowledge.addDocument('bob', base.id, { name: 'long.md', bytes: long })
    await indexer.whenIdle()
    expect(await store.getDocument(document.id)).toMatchObject({ status: 'failed', passages: 0, error: expect.stringMatching(/^It has 3 passages; with them the owner of this base would keep more than the 3 passages their role and groups allow/) })
    expect((await store.usage('ann')).passages).toBe(2)
    // More passages allowed: the same file again is indexed.
    allowed.ann = { ...allowed.ann!, passages: 10 }
    expect((await knowledge.addDocument('bob', base.id, { name: 'long.md', bytes: long })).changed).toBe(true)
    await indexer.whenIdle()
    expect(await store.getDocument(document.id)).toMatchObject({ status: 'ready', passages: 3 })
    // At the limit, nothing more is added until documents go.
    allowed.ann = { ...allowed.ann!, passages: 5 }
    await expect(knowledge.addDocument('ann', base.id, { name: 'd.md', bytes: text('# D\n\nMore.') })).rejects.toMatchObject({ statusCode: 409, message: expect.stringContaining('passages') })
  })

  it('picks up, after a crash, a document whose indexer died, and indexes it once', async () => {
    const { knowledge, store } = setUp({}, { indexOnAdd: false })
    const base = await knowledge.create('ann', { name: 'Docs' })
    const { document } = await knowledge.addDocument('ann', base.id, { name: 'notes.md', bytes: text('# Notes\n\nThe wifi password is on the fridge.') })
    // An indexer claimed it and died before writing anything.
    let now = 1_000_000
    expect(await store.claimIndexing(document.id, document.contentHash, 'dead-instance', now + 10_000, now)).toBe(true)
    const restarted = new KnowledgeIndexer(store, doc => knowledge.readFile(doc), { ...INDEXING, leaseMs: 10_000 }, undefined, () => now)
    restarted.nudge()
    await restarted.whenIdle()
    expect((await store.getDocument(document.id))!.status).toBe('indexing')
    now += 10_001
    restarted.nudge()
    await restarted.whenIdle()
    expect(await store.getDocument(document.id)).toMatchObject({ status: 'ready', passages: 1 })
    restarted.nudge()
    await restarted.whenIdle()
    expect(await store.readPassages(document.id, 0, 10)).toHaveLength(1)
    restarted.close()
  })

  it('deletes a person\'s bases, documents and files with their account', async () => {
    const { knowledge, indexer, files } = setUp()
    const base = await knowledge.create('ann', { name: 'Docs' })
    await knowledge.addDocument('ann', base.id, { name: 'a.txt', bytes: text('words') })
    await indexer.whenIdle()
    expect((await files.usage('knowledge:ann')).files).toBe(1)
    await knowledge.deleteUser('ann')
    expect((await knowledge.list('ann')).bases).toEqual([])
    expect(await files.usage('knowledge:ann')).toEqual({ bytes: 0, files: 0 })
  })
})

describe('web pages', () => {
  it('fetches a page for a person the policy lets reach the internet, named by its address', async () => {
    const store = createMemoryKnowledgeStore()
    const fetched: string[] = []
    const pages = {
      fetch: async (url: string) => {
        fetched.push(url)
        return { url: `${url}?redirected`, status: 200, contentType: 'text/html; charset=utf-8', body: text('<h1>Hi</h1>'), truncated: false }
      },
      denial: async (userId: string) => (userId === 'guest' ? 'guests may not' : undefined),
    }
    const knowledge = new KnowledgeBases(store, createMemoryWorkspaceStore(), LIMITS, async () => ['All'], () => {}, { pages })
    const base = await knowledge.create('ann', { name: 'Web', sharedWith: [{ group: 'All', access: 'edit' }] })
    expect((await knowledge.addPage('ann', base.id, 'https://example.org/team/handbook')).document).toMatchObject({ name: 'example.org-team-handbook.html', mediaType: 'text/html' })
    await expect(knowledge.addPage('guest', base.id, 'https://example.org/')).rejects.toMatchObject({ statusCode: 403, message: 'You may not fetch web pages: guests may not.' })
    expect(fetched).toEqual(['https://example.org/team/handbook'])
    const without = new KnowledgeBases(store, createMemoryWorkspaceStore(), LIMITS, async () => [])
    await expect(without.addPage('ann', base.id, 'https://example.org/')).rejects.toMatchObject({ statusCode: 404 })
  })
})

describe('passages up front', () => {
  it('puts the best passages for a question, with their links, into the instructions when the operator says so', async () => {
    const store = createMemoryKnowledgeStore()
    const files = createMemoryWorkspaceStore()
    let indexer: KnowledgeIndexer
    const knowledge = new KnowledgeBases(store, files, { ...LIMITS, passagesUpFront: 1 }, async () => [], () => indexer.nudge())
    indexer = new KnowledgeIndexer(store, document => knowledge.readFile(document), INDEXING)
    const base = await knowledge.create('ann', { name: 'Handbook' })
    const { document } = await knowledge.addDocument('ann', base.id, { name: 'handbook.md', bytes: text(HANDBOOK) })
    await indexer.whenIdle()
    const prompt = await knowledge.promptFor('ann', [base.id], 'How much are meals refunded?')
    expect(prompt).toContain(`[1] handbook.md (Handbook › Expenses) — cite as [1](/knowledge/${base.id}/${document.id}?passage=1)\nMeals are refunded up to 40 euros a day.`)
    expect(prompt).not.toContain('trains')
    expect(await knowledge.promptFor('ann', [base.id], 'zebras')).toBeUndefined()
    expect(await knowledge.promptFor('bob', [base.id], 'meals')).toBeUndefined()
    const { knowledge: none } = setUp()
    expect(await none.promptFor('ann', [base.id], 'meals')).toBeUndefined()
  })
})

describe('search_knowledge', () => {
  it('searches the conversation\'s bases and gives each passage a source and a link to cite', async () => {
    const { knowledge, indexer } = setUp()
    const base = await knowledge.create('ann', { name: 'Handbook' })
    const { document } = await knowledge.addDocument('ann', base.id, { name: 'handbook.md', bytes: text(HANDBOOK) })
    await indexer.whenIdle()
    const tool = searchKnowledgeTool(knowledge, async (_userId, threadId) => (threadId === 'thread-1' ? [base.id] : []))
    const context = { userId: 'ann', threadId: 'thread-1', jobId: 'job-1', credentials: { get: () => undefined } } as never
    const result = await tool.handler({ query: 'meals refunded' }, context)
    expect(result).toMatchObject({
      searched: ['Handbook'],
      results: [{ n: 1, source: 'handbook.md (Handbook › Expenses)', text: 'Meals are refunded up to 40 euros a day.', cite: `[1](/knowledge/${base.id}/${document.id}?passage=1)` }],
    })
    const elsewhere = await tool.handler({ query: 'meals' }, { ...(context as object), threadId: 'thread-2' } as never)
    expect(elsewhere).toMatchObject({ results: [], note: expect.stringContaining('Nothing') })
    // A workflow agent step brings its own bases: searched whatever its run's conversation has.
    const stepOwn = await tool.handler({ query: 'meals refunded' }, { ...(context as object), threadId: 'thread-2', knowledgeBaseIds: [base.id] } as never)
    expect(stepOwn).toMatchObject({ searched: ['Handbook'], results: [{ n: 1, text: 'Meals are refunded up to 40 euros a day.' }] })
  })

  it('is denied in a conversation without a knowledge base, leaving every other tool to the policy', () => {
    const check = Object.assign(() => undefined, { needsApproval: () => false }) as unknown as ToolAccessCheck
    const gated = withKnowledgeGate(check, false)
    expect(gated({ name: 'search_knowledge', source: { kind: 'builtin' }, capabilities: ['knowledge'] })).toMatch('no knowledge base')
    expect(gated({ name: 'calculate', source: { kind: 'builtin' } })).toBeUndefined()
    expect(withKnowledgeGate(check, true)).toBe(check)
    // A run that brings its bases (a workflow agent step) gets the policy's own word back.
    expect(withKnowledgeBases(gated)).toBe(check)
    expect(withKnowledgeBases(check)).toBe(check)
  })
})
