/**
 * What every knowledge store does (memory, sqlite, Convex): bases listed for their owner and the groups
 * they are shared with, documents' indexing claimed by one holder and ended in one step only by
 * it and only for the version it claimed, search ranked by BM25 within the bases asked for, and
 * deleting a base or an owner taking everything of theirs.
 */
import { describe, expect, it } from 'vitest'
import type { KnowledgeBase, KnowledgeDocument } from '../../shared/types/knowledge'
import type { KnowledgeStore } from '../../server/lib/stores/knowledge/knowledge-store'
import { fakeEmbedding } from './fake-embeddings'

const vectorOf = (text: string) => Float32Array.from(fakeEmbedding(text))

const T = 1_700_000_000_000

export function baseOf(id: string, ownerId: string, sharedWith: KnowledgeBase['sharedWith'] = []): KnowledgeBase {
  return { id, ownerId, name: `Base ${id}`, sharedWith, createdAt: T, updatedAt: T }
}

export function documentOf(id: string, baseId: string, contentHash = `hash-${id}`): KnowledgeDocument {
  return { id, baseId, name: `${id}.md`, mediaType: 'text/markdown', bytes: 100, contentHash, status: 'queued', passages: 0, addedBy: 'ann', createdAt: T, updatedAt: T }
}

export function describeKnowledgeStoreContract(name: string, open: () => KnowledgeStore): void {
  describe(`${name} knowledge store`, () => {
    it('lists a person\'s own bases and those shared with their groups (any case), with their totals', async () => {
      const store = open()
      await store.saveBase(baseOf('a', 'ann'))
      await store.saveBase(baseOf('b', 'bob', [{ group: 'Sales', access: 'read' }]))
      await store.saveBase(baseOf('c', 'bob'))
      await store.saveDocument(documentOf('d1', 'b'))
      expect((await store.listBases({ ownerId: 'ann', groups: [] })).map(base => base.id)).toEqual(['a'])
      const withSales = await store.listBases({ ownerId: 'ann', groups: ['sales'] })
      expect(withSales.map(base => base.id)).toEqual(['a', 'b'])
      expect(withSales[1]).toMatchObject({ documents: 1, bytes: 100, passages: 0, sharedWith: [{ group: 'Sales', access: 'read' }] })
      // Unshared: gone from the group's list.
      await store.saveBase({ ...baseOf('b', 'bob'), updatedAt: T + 1 })
      expect((await store.listBases({ ownerId: 'ann', groups: ['sales'] })).map(base => base.id)).toEqual(['a'])
      await store.close()
    })

    it('lets one holder index a version, and keeps only its passages, written in one step', async () => {
      const store = open()
      await store.saveBase(baseOf('a', 'ann'))
      await store.saveDocument(documentOf('d', 'a', 'v1'))
      expect(await store.claimIndexing('d', 'v1', 'one', T + 1_000, T)).toBe(true)
      // Another holder cannot take it while the lease runs, nor finish it.
      expect(await store.claimIndexing('d', 'v1', 'two', T + 2_000, T + 500)).toBe(false)
      expect(await store.finishIndexing('d', 'v1', 'two', { status: 'ready', passages: [{ text: 'nope' }] }, T + 600)).toBe(false)
      // A claim for another version is refused.
      expect(await store.claimIndexing('d', 'v0', 'one', T + 2_000, T + 500)).toBe(false)
      expect(await store.finishIndexing('d', 'v1', 'one', { status: 'ready', passages: [{ text: 'Trains for trips under 500 km.', heading: 'Travel' }, { text: 'Meals up to 40 euros.', page: 2 }], pages: 2 }, T + 700)).toBe(true)
      expect(await store.getDocument('d')).toMatchObject({ status: 'ready', passages: 2, pages: 2 })
      expect(await store.readPassages('d', 0, 10)).toEqual([
        { id: 'd:0', documentId: 'd', baseId: 'a', seq: 0, text: 'Trains for trips under 500 km.', heading: 'Travel' },
        { id: 'd:1', documentId: 'd', baseId: 'a', seq: 1, text: 'Meals up to 40 euros.', page: 2 },
      ])
      // Finishing twice writes nothing more.
      expect(await store.finishIndexing('d', 'v1', 'one', { status: 'ready', passages: [{ text: 'again' }] }, T + 800)).toBe(false)
      expect(await store.readPassages('d', 0, 10)).toHaveLength(2)
      expect(await store.listUnindexed(10)).toEqual([])
      await store.close()
    })

    it('hands a lease that ran out to another holder, and drops an indexing whose version was replaced', async () => {
      const store = open()
      await store.saveBase(baseOf('a', 'ann'))
      await store.saveDocument(documentOf('d', 'a', 'v1'))
      expect(await store.claimIndexing('d', 'v1', 'dead', T + 1_000, T)).toBe(true)
      expect((await store.listUnindexed(10)).map(document => document.id)).toEqual(['d'])
      expect(await store.claimIndexing('d', 'v1', 'alive', T + 5_000, T + 1_000)).toBe(true)
      expect(await store.finishIndexing('d', 'v1', 'dead', { status: 'ready', passages: [{ text: 'late' }] }, T + 1_100)).toBe(false)
      // A new version arrives while "alive" reads the old one.
      await store.saveDocument({ ...documentOf('d', 'a', 'v2'), updatedAt: T + 1_200 })
      expect(await store.finishIndexing('d', 'v1', 'alive', { status: 'ready', passages: [{ text: 'old' }] }, T + 1_300)).toBe(false)
      expect(await store.claimIndexing('d', 'v2', 'alive', T + 9_000, T + 1_400)).toBe(true)
      expect(await store.finishIndexing('d', 'v2', 'alive', { status: 'failed', error: 'No text was found in it.' }, T + 1_500)).toBe(true)
      expect(await store.getDocument('d')).toMatchObject({ status: 'failed', error: 'No text was found in it.', passages: 0 })
      await store.close()
    })

    it('finds the passages that match best, only in the bases asked for, whatever the case, accents and word form', async () => {
      const store = open()
      for (const id of ['a', 'b']) await store.saveBase(baseOf(id, 'ann'))
      const passages = [
        { text: 'Employees book trains for any trip under 500 km; flights need a manager\'s approval.', heading: 'Travel' },
        { text: 'Meals are refunded up to 40 euros a day with receipts.', heading: 'Expenses' },
        { text: 'The café on the ground floor opens at eight.', heading: 'Office' },
      ]
      await store.saveDocument(documentOf('handbook', 'a'))
      await store.claimIndexing('handbook', 'hash-handbook', 'me', T + 1_000, T)
      await store.finishIndexing('handbook', 'hash-handbook', 'me', { status: 'ready', passages }, T)
      await store.saveDocument(documentOf('other', 'b'))
      await store.claimIndexing('other', 'hash-other', 'me', T + 1_000, T)
      await store.finishIndexing('other', 'hash-other', 'me', { status: 'ready', passages: [{ text: 'Refunds of meals are never given in base b.' }] }, T)

      const refund = await store.search(['a'], 'How much of my MEAL is REFUNDED?', 5)
      expect(refund.map(hit => hit.id)).toEqual(['handbook:1'])
      expect(refund[0]).toMatchObject({ documentName: 'handbook.md', heading: 'Expenses', baseId: 'a' })
      expect((await store.search(['a'], 'cafe', 5)).map(hit => hit.id)).toEqual(['handbook:2'])
      const both = await store.search(['a', 'b'], 'meals refunded', 5)
      expect(both.map(hit => hit.id).sort()).toEqual(['handbook:1', 'other:0'])
      expect(both[0]!.score).toBeGreaterThanOrEqual(both[1]!.score)
      // Words that are operators to a search engine are words here.
      expect(await store.search(['a'], '" OR * NEAR( AND -', 5)).toEqual([])
      expect(await store.search([], 'meals', 5)).toEqual([])
      await store.close()
    })

    it('finds the passages nearest a vector, of the model asked for, in the bases asked for, and only a document\'s current version', async () => {
      const store = open()
      for (const id of ['a', 'b']) await store.saveBase(baseOf(id, 'ann'))
      const texts = ['Company cars are returned with a full tank.', 'Wages are paid on the last day of the month.', 'The office closes at six.']
      const index = async (id: string, base: string, passages: string[], model = 'fake-embed', hash = `hash-${id}`) => {
        await store.saveDocument({ ...documentOf(id, base, hash), updatedAt: T + 1 })
        expect(await store.claimIndexing(id, hash, 'me', T + 10_000, T + 1)).toBe(true)
        expect(await store.finishIndexing(id, hash, 'me', { status: 'ready', passages: passages.map(text => ({ text })), vectors: { model, values: passages.map(vectorOf) } }, T + 2)).toBe(true)
      }
      await index('policy', 'a', texts)
      await index('elsewhere', 'b', ['Automobile rules of base b.'])
      await index('other-model', 'a', ['Vehicle rules by another model.'], 'another-embed')

      const nearest = await store.searchVectors(['a'], 'fake-embed', vectorOf('automobile'), 2)
      expect(nearest[0]).toMatchObject({ id: 'policy:0', documentName: 'policy.md', baseId: 'a', text: texts[0] })
      expect(nearest[0]!.score).toBeGreaterThan(nearest[1]?.score ?? -1)
      expect(nearest.every(hit => hit.documentId === 'policy')).toBe(true)
      expect((await store.searchVectors(['a', 'b'], 'fake-embed', vectorOf('vehicle'), 3)).map(hit => hit.id)).toContain('elsewhere:0')
      expect((await store.searchVectors(['a'], 'another-embed', vectorOf('vehicle'), 3)).map(hit => hit.id)).toEqual(['other-model:0'])
      expect(await store.searchVectors([], 'fake-embed', vectorOf('vehicle'), 3)).toEqual([])

      // A new version replaces the old one's passages and vectors once its indexing ends, not before.
      await store.saveDocument({ ...documentOf('policy', 'a', 'v2'), updatedAt: T + 3 })
      expect((await store.search(['a'], 'tank', 5)).map(hit => hit.id)).toEqual(['policy:0'])
      await store.claimIndexing('policy', 'v2', 'me', T + 10_000, T + 3)
      await store.finishIndexing('policy', 'v2', 'me', { status: 'ready', passages: [{ text: 'Pool cars are booked online.' }], vectors: { model: 'fake-embed', values: [vectorOf('Pool cars are booked online.')] } }, T + 4)
      expect(await store.search(['a'], 'tank', 5)).toEqual([])
      expect((await store.search(['a'], 'booked', 5)).map(hit => hit.text)).toEqual(['Pool cars are booked online.'])
      expect((await store.searchVectors(['a'], 'fake-embed', vectorOf('automobile'), 5)).map(hit => hit.text)).toEqual(['Pool cars are booked online.'])
      expect(await store.readPassages('policy', 0, 10)).toEqual([{ id: 'policy:0', documentId: 'policy', baseId: 'a', seq: 0, text: 'Pool cars are booked online.' }])
      await store.close()
    })

    it('keeps a document\'s passages in order across many, and reads them from a place', async () => {
      const store = open()
      await store.saveBase(baseOf('a', 'ann'))
      await store.saveDocument(documentOf('long', 'a'))
      await store.claimIndexing('long', 'hash-long', 'me', T + 10_000, T)
      const passages = Array.from({ length: 250 }, (_, index) => ({ text: `Passage number ${index} about ${index % 2 ? 'trains' : 'meals'}.`, page: 1 + Math.floor(index / 10) }))
      expect(await store.finishIndexing('long', 'hash-long', 'me', { status: 'ready', passages, pages: 25 }, T)).toBe(true)
      expect(await store.getBase('a')).toMatchObject({ documents: 1, passages: 250 })
      const read = await store.readPassages('long', 120, 50)
      expect(read.map(passage => passage.seq)).toEqual(Array.from({ length: 50 }, (_, index) => 120 + index))
      expect(read[0]).toMatchObject({ text: 'Passage number 120 about meals.', page: 13 })
      expect(await store.search(['a'], 'trains', 4)).toHaveLength(4)
      await store.close()
    })

    it('deletes a document, a base and an owner\'s bases with their passages, and counts what an owner keeps', async () => {
      const store = open()
      await store.saveBase(baseOf('a', 'ann'))
      await store.saveBase(baseOf('b', 'ann'))
      await store.saveBase(baseOf('c', 'bob'))
      for (const [id, base] of [['d1', 'a'], ['d2', 'a'], ['d3', 'b'], ['d4', 'c']] as const) {
        await store.saveDocument(documentOf(id, base))
        await store.claimIndexing(id, `hash-${id}`, 'me', T + 1_000, T)
        await store.finishIndexing(id, `hash-${id}`, 'me', { status: 'ready', passages: [{ text: `words of ${id}` }, { text: 'shared words' }] }, T)
      }
      expect(await store.usage('ann')).toEqual({ documents: 3, bytes: 300, passages: 6 })
      await store.deleteDocument('d1')
      expect(await store.readPassages('d1', 0, 10)).toEqual([])
      expect((await store.search(['a'], 'words', 10)).map(hit => hit.documentId)).toEqual(['d2', 'd2'])
      await store.deleteBase('a')
      expect(await store.getBase('a')).toBeNull()
      expect(await store.getDocument('d2')).toBeNull()
      await store.deleteOwner('ann')
      expect(await store.listBases({ ownerId: 'ann', groups: [] })).toEqual([])
      expect(await store.usage('ann')).toEqual({ documents: 0, bytes: 0, passages: 0 })
      expect((await store.search(['c'], 'shared', 10)).map(hit => hit.documentId)).toEqual(['d4'])
      await store.close()
    })
  })
}
