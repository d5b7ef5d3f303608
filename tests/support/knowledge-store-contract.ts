/**
 * What every knowledge store does (memory, sqlite): bases listed for their owner and the groups
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
