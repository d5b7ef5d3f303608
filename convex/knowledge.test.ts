import { convexTest } from 'convex-test'
import { beforeEach, describe, expect, it } from 'vitest'
import { api } from './_generated/api'
import schema from './schema'
import { createConvexKnowledgeStore } from '../server/lib/stores/knowledge/convex'
import type { ConvexFunctionClient } from '../server/lib/stores/jobs/convex'
import { baseOf, documentOf } from '../tests/support/knowledge-store-contract'

// What only the Convex knowledge store has to show (the shared contract runs in job-store.test.ts):
// large documents within Convex's per-transaction limits, and the staged versions of an indexing
// that never ended neither found nor left behind.

const modules = import.meta.glob('./**/*.ts')
const secret = 'a-convex-test-server-secret-of-enough-length'
const T = 1_700_000_000_000

beforeEach(() => {
  process.env.OR3_SERVER_SECRET = secret
})

function open() {
  const t = convexTest({ schema, modules, transactionLimits: true })
  return { t, store: createConvexKnowledgeStore({ client: t as unknown as ConvexFunctionClient, secret }) }
}

/** A unit vector of `length` numbers pointing mostly along `axis`. */
function vectorAlong(axis: number, length: number): Float32Array {
  const vector = new Float32Array(length).fill(0.001)
  vector[axis] = 1
  const norm = Math.hypot(...vector)
  return vector.map(value => value / norm)
}

async function rowsOf(t: ReturnType<typeof convexTest>) {
  return t.run(async ctx => ({
    passages: (await ctx.db.query('knowledge_passages').collect()).length,
    vectors: (await ctx.db.query('knowledge_vectors_768').collect()).length,
    versions: (await ctx.db.query('knowledge_versions').collect()).length,
    documents: (await ctx.db.query('knowledge_documents').collect()).length,
  }))
}

describe('knowledge bases on Convex', () => {
  it('writes a document of 1,500 passages with their vectors in batches, within the limits, and drops the version it replaced in passes', async () => {
    const { t, store } = open()
    await store.saveBase(baseOf('a', 'ann'))
    const index = async (hash: string, word: string, now: number) => {
      await store.saveDocument({ ...documentOf('big', 'a', hash), updatedAt: now })
      expect(await store.claimIndexing('big', hash, 'me', now + 60_000, now)).toBe(true)
      const passages = Array.from({ length: 1_500 }, (_, seq) => ({ text: `${word} passage ${seq}. ${'Filler words about the handbook. '.repeat(25)}`, page: 1 + Math.floor(seq / 5) }))
      const values = passages.map((_, seq) => vectorAlong(seq % 700, 700))
      expect(await store.finishIndexing('big', hash, 'me', { status: 'ready', passages, pages: 300, vectors: { model: 'm', values } }, now)).toBe(true)
    }
    await index('v1', 'Alpha', T)
    expect(await rowsOf(t)).toEqual({ passages: 1_500, vectors: 1_500, versions: 1, documents: 1 })
    const hits = await store.searchVectors(['a'], 'm', vectorAlong(42, 700), 3)
    expect(hits[0]).toMatchObject({ documentId: 'big', seq: 42 })

    await index('v2', 'Beta', T + 1)
    // The new version is the document's at once; the old one is never found, and goes in passes.
    expect((await store.search(['a'], 'alpha', 5))).toEqual([])
    expect((await store.search(['a'], 'beta', 5))).toHaveLength(5)
    expect((await store.readPassages('big', 1_499, 5))[0]!.text).toMatch(/^Beta passage 1499/)
    await t.finishAllScheduledFunctions(() => {})
    expect(await rowsOf(t)).toEqual({ passages: 1_500, vectors: 1_500, versions: 1, documents: 1 })
    // The base's totals are kept on it (a list of bases reads no documents), in step with each change.
    expect(await store.getBase('a')).toMatchObject({ documents: 1, passages: 1_500, bytes: 100 })
    await store.saveDocument({ ...documentOf('small', 'a'), bytes: 40 })
    await store.claimIndexing('small', 'hash-small', 'me', T + 60_000, T + 2)
    await store.finishIndexing('small', 'hash-small', 'me', { status: 'ready', passages: [{ text: 'One.' }, { text: 'Two.' }] }, T + 2)
    expect(await store.getBase('a')).toMatchObject({ documents: 2, passages: 1_502, bytes: 140 })
    await store.saveDocument({ ...documentOf('small', 'a', 'again'), bytes: 10, passages: 2 })
    await store.claimIndexing('small', 'again', 'me', T + 60_000, T + 3)
    await store.finishIndexing('small', 'again', 'me', { status: 'failed', error: 'No text was found in it.' }, T + 3)
    expect(await store.getBase('a')).toMatchObject({ documents: 2, passages: 1_500, bytes: 110 })
    await store.deleteDocument('big')
    expect(await store.getBase('a')).toMatchObject({ documents: 1, passages: 0, bytes: 10 })
    expect((await store.listBases({ ownerId: 'ann', groups: [] }))[0]).toMatchObject({ documents: 1, passages: 0, bytes: 10 })
  })

  it('never finds what an indexer that died while writing had staged, and drops it when the next indexing ends', async () => {
    const { t, store } = open()
    await store.saveBase(baseOf('a', 'ann'))
    await store.saveDocument(documentOf('d', 'a', 'v1'))
    expect(await store.claimIndexing('d', 'v1', 'dead', T + 1_000, T)).toBe(true)
    // The dead indexer wrote one batch and no more.
    expect(await t.mutation(api.knowledge.stagePassages, { secret, id: 'd', contentHash: 'v1', holder: 'dead', version: 'half', passages: [{ seq: 0, text: 'Half written.', stems: 'half written' }] })).toBe(true)
    expect(await store.search(['a'], 'half written', 5)).toEqual([])
    expect(await store.readPassages('d', 0, 5)).toEqual([])
    // Its lease runs out; another takes the indexing, and the dead one can write nothing more.
    expect(await store.claimIndexing('d', 'v1', 'alive', T + 9_000, T + 1_000)).toBe(true)
    expect(await t.mutation(api.knowledge.stagePassages, { secret, id: 'd', contentHash: 'v1', holder: 'dead', version: 'half', passages: [{ seq: 1, text: 'Late.', stems: 'late' }] })).toBe(false)
    expect(await store.finishIndexing('d', 'v1', 'alive', { status: 'ready', passages: [{ text: 'Written whole.' }] }, T + 2_000)).toBe(true)
    await t.finishAllScheduledFunctions(() => {})
    expect((await store.readPassages('d', 0, 5)).map(passage => passage.text)).toEqual(['Written whole.'])
    expect(await rowsOf(t)).toMatchObject({ passages: 1, versions: 1 })
  })

  it('forgets a deleted base\'s documents at once and deletes their rows in passes', async () => {
    const { t, store } = open()
    await store.saveBase(baseOf('a', 'ann', [{ group: 'Sales', access: 'read' }]))
    for (let index = 0; index < 250; index++) {
      const id = `d${index}`
      await store.saveDocument(documentOf(id, 'a'))
      await store.claimIndexing(id, `hash-${id}`, 'me', T + 1_000, T)
      await store.finishIndexing(id, `hash-${id}`, 'me', { status: 'ready', passages: [{ text: `Document ${index}.` }] }, T)
    }
    expect(await store.usage('ann')).toEqual({ documents: 250, bytes: 25_000, passages: 250 })
    await store.deleteOwner('ann')
    expect(await store.usage('ann')).toEqual({ documents: 0, bytes: 0, passages: 0 })
    expect(await store.getDocument('d7')).toBeNull()
    expect(await store.listBases({ ownerId: 'bob', groups: ['sales'] })).toEqual([])
    expect(await store.search(['a'], 'document', 5)).toEqual([])
    await t.finishAllScheduledFunctions(() => {})
    expect(await rowsOf(t)).toEqual({ passages: 0, vectors: 0, versions: 0, documents: 0 })
  })

  it('keeps no vectors longer than Convex\'s indexes take (2,048), and finds such a document by its words', async () => {
    const { t, store } = open()
    await store.saveBase(baseOf('a', 'ann'))
    await store.saveDocument(documentOf('d', 'a'))
    await store.claimIndexing('d', 'hash-d', 'me', T + 1_000, T)
    const long = vectorAlong(1, 3_072)
    expect(await store.finishIndexing('d', 'hash-d', 'me', { status: 'ready', passages: [{ text: 'Trains for short trips.' }], vectors: { model: 'large', values: [long] } }, T)).toBe(true)
    expect(await store.searchVectors(['a'], 'large', long, 5)).toEqual([])
    expect((await store.search(['a'], 'train', 5)).map(hit => hit.id)).toEqual(['d:0'])
    expect(await t.run(async ctx => (await ctx.db.query('knowledge_vectors_2048').collect()).length)).toBe(0)
  })
})
