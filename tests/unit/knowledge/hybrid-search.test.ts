/**
 * Searching by meaning as well as by words: the embeddings client against a real HTTP endpoint
 * (what it sends, what answers it refuses), reciprocal rank fusion, and the knowledge bases with an
 * embedding model finding what BM25 alone cannot, falling back to words when the endpoint fails.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createEmbedder, EmbeddingError, type Embedder } from '../../../server/lib/knowledge/embeddings'
import { KnowledgeIndexer } from '../../../server/lib/knowledge/indexer'
import { KnowledgeBases } from '../../../server/lib/knowledge/knowledge-bases'
import { fuseByRank, PassageSearch } from '../../../server/lib/knowledge/passage-search'
import { createReranker } from '../../../server/lib/knowledge/rerank'
import { createMemoryKnowledgeStore } from '../../../server/lib/stores/knowledge/memory'
import { createSqliteKnowledgeStore } from '../../../server/lib/stores/knowledge/sqlite'
import { createMemoryWorkspaceStore } from '../../../server/lib/stores/workspaces/memory'
import type { KnowledgeHit } from '../../../shared/types/knowledge'
import { fakeEmbeddingsAnswer } from '../../support/fake-embeddings'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** What the endpoint answers next: the fake model's vectors, or whatever a test sets. */
let answer: (body: { model: string, input: string[] }) => { status: number, body: string } = body => ({ status: 200, body: JSON.stringify(fakeEmbeddingsAnswer(body.model, body.input)) })
const seen: Array<{ headers: IncomingHttpHeaders, inputs: number }> = []
/** What the rerank endpoint answers next (the fake cross-encoder: the candidates in reverse), and what it was asked. */
let rerankAnswer: (body: { query: string, documents: string[] }) => { status: number, body: string } = body => ({ status: 200, body: JSON.stringify({ results: body.documents.map((_, index) => ({ index, relevance_score: index / body.documents.length })).reverse() }) })
const reranks: Array<{ authorization?: string, model: string, query: string, documents: string[] }> = []
let server: Server
let baseUrl = ''

beforeAll(async () => {
  server = createServer(async (request, response) => {
    const parts: Buffer[] = []
    for await (const part of request) parts.push(part as Buffer)
    const body = JSON.parse(Buffer.concat(parts).toString('utf8')) as { model: string, input: string[], query: string, documents: string[] }
    if (request.url === '/v1/rerank') {
      reranks.push({ authorization: request.headers.authorization, model: body.model, query: body.query, documents: body.documents })
      const reply = rerankAnswer(body)
      return void response.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body)
    }
    seen.push({ headers: request.headers, inputs: body.input.length })
    if (request.url !== '/v1/embeddings') return void response.writeHead(404).end('{}')
    const { status, body: text } = answer(body)
    if (status === 0) return // never answers
    response.writeHead(status, { 'content-type': 'application/json' }).end(text)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
})

const embedderOf = (settings: Partial<Parameters<typeof createEmbedder>[0]> = {}): Embedder => createEmbedder({ baseUrl: `${baseUrl}/`, apiKey: 'sk-secret-key', model: 'fake/embed', batch: 2, timeoutMs: 5_000, ...settings })
const fakeModel = (body: { model: string, input: string[] }) => ({ status: 200, body: JSON.stringify(fakeEmbeddingsAnswer(body.model, body.input)) })

describe('the embeddings client', () => {
  it('asks in batches with the key, and gives one unit-length vector per text in order', async () => {
    answer = fakeModel
    seen.length = 0
    const vectors = await embedderOf().embed(['cars', 'meals', 'vacation days'])
    expect(seen.map(request => request.inputs)).toEqual([2, 1])
    expect(seen[0]!.headers.authorization).toBe('Bearer sk-secret-key')
    expect(vectors).toHaveLength(3)
    for (const vector of vectors) expect(Math.hypot(...vector)).toBeCloseTo(1, 5)
    expect(vectors[0]).not.toEqual(vectors[1])
  })

  it('refuses an answer it cannot trust, saying what was wrong and never the key', async () => {
    const refusals: Array<[string, (body: { model: string, input: string[] }) => { status: number, body: string }, RegExp]> = [
      ['too few vectors', () => ({ status: 200, body: JSON.stringify({ data: [{ embedding: [1, 0] }] }) }), /1 vectors for 2 texts/],
      ['lengths differ', () => ({ status: 200, body: JSON.stringify({ data: [{ embedding: [1, 0] }, { embedding: [1, 0, 0] }] }) }), /different lengths/],
      ['not numbers', () => ({ status: 200, body: JSON.stringify({ data: [{ embedding: [1, 'x'] }, { embedding: [1, 0] }] }) }), /other than numbers/],
      ['not JSON', () => ({ status: 200, body: '<html>' }), /other than JSON/],
      ['refused', () => ({ status: 401, body: '{"error":"bad key"}' }), /answered 401/],
      ['too large', () => ({ status: 200, body: `{"data":[],"pad":"${'x'.repeat(33 * 1024 * 1024)}"}` }), /more than \d+ bytes/],
    ]
    for (const [what, reply, message] of refusals) {
      answer = reply
      const error = await embedderOf().embed(['a car', 'a meal']).then(() => undefined, (error: unknown) => error)
      expect(error, what).toBeInstanceOf(EmbeddingError)
      expect((error as Error).message, what).toMatch(message)
      expect((error as Error).message, what).not.toContain('sk-secret-key')
    }
    answer = () => ({ status: 0, body: '' })
    await expect(embedderOf({ timeoutMs: 1_000 }).embed(['slow'])).rejects.toThrow(/did not answer within 1000 ms/)
    await expect(createEmbedder({ baseUrl: 'http://127.0.0.1:1/v1', model: 'm', batch: 1, timeoutMs: 5_000 }).embed(['x'])).rejects.toThrow(/could not be reached/)
    answer = fakeModel
  })
})

describe('a rerank model', () => {
  const hit = (seq: number): KnowledgeHit => ({ id: `d:${seq}`, documentId: 'd', baseId: 'b', seq, text: `passage ${seq}`, documentName: 'd', score: 1 })
  const fused = [hit(1), hit(2), hit(3), hit(4)]
  const store = { search: async () => fused } as unknown as ConstructorParameters<typeof PassageSearch>[0]
  const reranker = (settings: Partial<Parameters<typeof createReranker>[0]> = {}) => createReranker({ baseUrl, apiKey: 'sk-rerank-key', model: 'fake/rerank', timeoutMs: 5_000, ...settings })

  it('puts the fused candidates in its order with its scores, asked with the question and their texts', async () => {
    reranks.length = 0
    const search = new PassageSearch(store, undefined, () => {}, { reranker: reranker(), candidates: 4 })
    const hits = await search.search(['b'], 'which passage?', 3)
    expect(hits.map(item => item.seq)).toEqual([4, 3, 2])
    expect(hits[0]!.score).toBe(0.75)
    expect(reranks).toEqual([{ authorization: 'Bearer sk-rerank-key', model: 'fake/rerank', query: 'which passage?', documents: ['passage 1', 'passage 2', 'passage 3', 'passage 4'] }])
  })

  it('keeps the fused order when the endpoint fails or answers what it was not asked, saying why without the key', async () => {
    const warnings: string[] = []
    const search = new PassageSearch(store, undefined, message => warnings.push(message), { reranker: reranker(), candidates: 4 })
    for (const reply of [{ status: 500, body: '{"error":"down"}' }, { status: 200, body: '{"results":[{"index":9,"relevance_score":1}]}' }, { status: 200, body: '{"results":[{"index":0,"relevance_score":"high"}]}' }, { status: 200, body: 'not json' }]) {
      rerankAnswer = () => reply
      expect((await search.search(['b'], 'q', 3)).map(item => item.seq)).toEqual([1, 2, 3])
    }
    expect(warnings).toEqual([
      expect.stringContaining('answered 500'),
      expect.stringContaining('an index it was not given'),
      expect.stringContaining('not a number'),
      expect.stringContaining('other than JSON'),
    ])
    expect(warnings.join(' ')).not.toContain('sk-rerank-key')
    rerankAnswer = body => ({ status: 200, body: JSON.stringify({ results: body.documents.map((_, index) => ({ index, relevance_score: index / body.documents.length })).reverse() }) })
  })
})

describe('reciprocal rank fusion', () => {
  const hit = (id: string): KnowledgeHit => ({ id, documentId: id.split(':')[0]!, baseId: 'b', seq: Number(id.split(':')[1]), text: id, documentName: 'd', score: 99 })
  it('ranks first what both lists rank high, and keeps what only one found', () => {
    const fused = fuseByRank([[hit('d:1'), hit('d:2'), hit('d:3')], [hit('d:4'), hit('d:2'), hit('d:1')]], 3)
    expect(fused.map(entry => entry.id)).toEqual(['d:1', 'd:2', 'd:4'])
    expect(fused[0]!.score).toBeCloseTo(1 / 61 + 1 / 63, 10)
    expect(fuseByRank([[], []], 5)).toEqual([])
  })
})

const HANDBOOK = '# Handbook\n\n## Fleet\n\nCompany cars are booked through the fleet desk on the second floor.\n\n## Expenses\n\nMeals are refunded up to 40 euros a day.\n\n## Time off\n\nEveryone has 25 vacation days a year.'
const LIMITS = { enabled: true, fileBytes: 1_000_000, basesPerPerson: 3, perOwner: async () => ({ documents: 5, bytes: 2_000_000, passages: 100_000 }) }
const INDEXING = { parseTimeoutMs: 30_000, parseMemoryMb: 128, passagesPerDocument: 1_000, leaseMs: 10_000, embeddingRetryMs: [0, 0] }

for (const [name, openStore] of [['memory', () => createMemoryKnowledgeStore()], ['sqlite', () => createSqliteKnowledgeStore({ path: join(mkdtempSync(join(tmpdir(), 'or3-hybrid-')), 'app.sqlite') })]] as const) {
  describe(`knowledge bases with an embedding model (${name})`, () => {
    function setUp(embedder: Embedder | undefined) {
      const store = openStore()
      const warnings: string[] = []
      let indexer: KnowledgeIndexer
      const knowledge = new KnowledgeBases(store, createMemoryWorkspaceStore(), LIMITS, async () => [], () => indexer.nudge(), { search: new PassageSearch(store, embedder, message => warnings.push(message)) })
      indexer = new KnowledgeIndexer(store, document => knowledge.readFile(document), { ...INDEXING, embedder }, { warn: message => warnings.push(message), info: () => {} })
      return { knowledge, indexer: indexer!, warnings, store }
    }

    it('finds a passage by what it means where its words differ, which words alone do not', async () => {
      answer = fakeModel
      const question = 'Who do I ask for an automobile?'
      const hybrid = setUp(embedderOf())
      const base = await hybrid.knowledge.create('ann', { name: 'Handbook' })
      await hybrid.knowledge.addDocument('ann', base.id, { name: 'handbook.md', bytes: new TextEncoder().encode(HANDBOOK) })
      await hybrid.indexer.whenIdle()
      expect((await hybrid.knowledge.search('ann', [base.id], question, 3)).hits[0]).toMatchObject({ heading: 'Handbook › Fleet' })
      // A question words find keeps its best passage first.
      expect((await hybrid.knowledge.search('ann', [base.id], 'how much are meals refunded', 3)).hits[0]).toMatchObject({ heading: 'Handbook › Expenses' })

      const wordsOnly = setUp(undefined)
      const plain = await wordsOnly.knowledge.create('ann', { name: 'Handbook' })
      await wordsOnly.knowledge.addDocument('ann', plain.id, { name: 'handbook.md', bytes: new TextEncoder().encode(HANDBOOK) })
      await wordsOnly.indexer.whenIdle()
      expect((await wordsOnly.knowledge.search('ann', [plain.id], question, 3)).hits.map(hit => hit.heading)).not.toContain('Handbook › Fleet')
      await hybrid.store.close()
      await wordsOnly.store.close()
    })

    it('searches by words when the endpoint fails, and indexes a document by its words after three failed tries', async () => {
      answer = () => ({ status: 503, body: '{"error":"down"}' })
      const { knowledge, indexer, warnings, store } = setUp(embedderOf())
      const base = await knowledge.create('ann', { name: 'Handbook' })
      await knowledge.addDocument('ann', base.id, { name: 'handbook.md', bytes: new TextEncoder().encode(HANDBOOK) })
      await indexer.whenIdle()
      expect((await knowledge.documents('ann', base.id)).documents[0]).toMatchObject({ status: 'ready', passages: 3 })
      expect(warnings).toEqual([expect.stringMatching(/is searched by its words only: The embeddings endpoint answered 503/)])
      expect((await knowledge.search('ann', [base.id], 'meals refunded', 3)).hits[0]).toMatchObject({ heading: 'Handbook › Expenses' })
      expect(warnings[1]).toMatch(/A knowledge search used words only/)
      expect(warnings.join(' ')).not.toContain('sk-secret-key')
      answer = fakeModel
      await store.close()
    })

    it('writes nothing when it is closed while waiting to try the endpoint again: the document is left to its lease', async () => {
      let tries = 0
      const failing: Embedder = { model: 'fake/embed', embed: async () => {
        tries++
        throw new EmbeddingError('The embeddings endpoint answered 503.')
      } }
      const store = openStore()
      let indexer: KnowledgeIndexer
      const knowledge = new KnowledgeBases(store, createMemoryWorkspaceStore(), LIMITS, async () => [], () => indexer.nudge())
      // The next try an hour away: only closing ends the wait.
      indexer = new KnowledgeIndexer(store, document => knowledge.readFile(document), { ...INDEXING, embeddingRetryMs: [3_600_000], embedder: failing })
      const base = await knowledge.create('ann', { name: 'Handbook' })
      const { document } = await knowledge.addDocument('ann', base.id, { name: 'handbook.md', bytes: new TextEncoder().encode(HANDBOOK) })
      await vi.waitFor(() => expect(tries).toBe(1))
      indexer.close()
      await indexer.whenIdle()
      expect(tries).toBe(1)
      expect(await store.getDocument(document.id)).toMatchObject({ status: 'indexing', passages: 0 })
      expect(await store.readPassages(document.id, 0, 10)).toEqual([])
      await store.close()
    })
  })
}
