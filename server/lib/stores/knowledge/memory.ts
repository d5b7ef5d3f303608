/** Knowledge bases in this process's memory (tests, and the `memory` backend): BM25 over the passages of the bases searched. */
import type { KnowledgeBase, KnowledgeDocument, KnowledgeHit, KnowledgePassage } from '../../../../shared/types/knowledge'
import type { KnowledgeStore, KnowledgeUsage, PassageVectors, StoredKnowledgeBase } from './knowledge-store'
import { dot } from './vector-math'
import { knowledgeSearchWords, searchStems, stemOf } from './search-words'

interface Lease { holder: string, until: number }

/** BM25's usual constants. */
const K1 = 1.2
const B = 0.75

export function createMemoryKnowledgeStore(): KnowledgeStore {
  const bases = new Map<string, KnowledgeBase>()
  const documents = new Map<string, KnowledgeDocument>()
  const passages = new Map<string, KnowledgePassage[]>()
  const leases = new Map<string, Lease>()
  const vectors = new Map<string, PassageVectors>()
  const totalsOf = (baseId: string): KnowledgeUsage => {
    const inBase = [...documents.values()].filter(document => document.baseId === baseId)
    return { documents: inBase.length, bytes: inBase.reduce((sum, document) => sum + document.bytes, 0), passages: inBase.reduce((sum, document) => sum + document.passages, 0) }
  }
  const withTotals = (base: KnowledgeBase): StoredKnowledgeBase => structuredClone({ ...base, ...totalsOf(base.id) })
  const removeDocument = (id: string) => {
    documents.delete(id)
    passages.delete(id)
    vectors.delete(id)
    leases.delete(id)
  }
  const deleteBase = (id: string) => {
    bases.delete(id)
    for (const document of [...documents.values()]) if (document.baseId === id) removeDocument(document.id)
  }
  return {
    async saveBase(base) {
      bases.set(base.id, structuredClone(base))
    },
    async getBase(id) {
      const base = bases.get(id)
      return base ? withTotals(base) : null
    },
    async listBases({ ownerId, groups }) {
      const mine = new Set(groups.map(group => group.toLowerCase()))
      return [...bases.values()]
        .filter(base => base.ownerId === ownerId || base.sharedWith.some(share => mine.has(share.group.toLowerCase())))
        .sort((a, b) => a.name.localeCompare(b.name))
        .map(withTotals)
    },
    async deleteBase(id) {
      deleteBase(id)
    },
    async saveDocument(document) {
      documents.set(document.id, structuredClone(document))
    },
    async getDocument(id) {
      const document = documents.get(id)
      return document ? structuredClone(document) : null
    },
    async listDocuments(baseId) {
      return [...documents.values()].filter(document => document.baseId === baseId).sort((a, b) => a.name.localeCompare(b.name)).map(document => structuredClone(document))
    },
    async deleteDocument(id) {
      removeDocument(id)
    },
    async claimIndexing(id, contentHash, holder, until, now) {
      const document = documents.get(id)
      if (!document || document.contentHash !== contentHash) return false
      const lease = leases.get(id)
      const free = document.status === 'queued' || (document.status === 'indexing' && (!lease || lease.until <= now || lease.holder === holder))
      if (!free) return false
      leases.set(id, { holder, until })
      document.status = 'indexing'
      return true
    },
    async finishIndexing(id, contentHash, holder, result, now) {
      const document = documents.get(id)
      if (!document || document.contentHash !== contentHash || document.status !== 'indexing' || leases.get(id)?.holder !== holder) return false
      leases.delete(id)
      document.updatedAt = now
      if (result.status === 'failed') {
        Object.assign(document, { status: 'failed', error: result.error, passages: 0 })
        delete document.pages
        passages.delete(id)
        vectors.delete(id)
        return true
      }
      if (result.vectors?.values.length === result.passages.length) vectors.set(id, { model: result.vectors.model, values: result.vectors.values.map(vector => Float32Array.from(vector)) })
      else vectors.delete(id)
      passages.set(id, result.passages.map((passage, seq) => ({ id: `${id}:${seq}`, documentId: id, baseId: document.baseId, seq, text: passage.text, ...(passage.heading ? { heading: passage.heading } : {}), ...(passage.page ? { page: passage.page } : {}) })))
      Object.assign(document, { status: 'ready', passages: result.passages.length, ...(result.pages ? { pages: result.pages } : {}) })
      delete document.error
      return true
    },
    async listUnindexed(limit) {
      return [...documents.values()].filter(document => document.status === 'queued' || document.status === 'indexing').sort((a, b) => a.updatedAt - b.updatedAt).slice(0, limit).map(document => structuredClone(document))
    },
    async search(baseIds, query, limit) {
      const wanted = new Set(knowledgeSearchWords(query).map(stemOf))
      if (wanted.size === 0 || baseIds.length === 0) return []
      const searched = new Set(baseIds)
      const candidates = [...documents.values()].filter(document => searched.has(document.baseId)).flatMap(document => (passages.get(document.id) ?? []).map(passage => ({ passage, document, stems: searchStems(`${passage.heading ?? ''} ${passage.text}`) })))
      if (candidates.length === 0) return []
      const averageLength = candidates.reduce((sum, candidate) => sum + candidate.stems.length, 0) / candidates.length
      const holding = new Map<string, number>()
      for (const { stems } of candidates) for (const stem of new Set(stems)) if (wanted.has(stem)) holding.set(stem, (holding.get(stem) ?? 0) + 1)
      const hits: KnowledgeHit[] = []
      for (const { passage, document, stems } of candidates) {
        let score = 0
        for (const stem of wanted) {
          const count = stems.filter(other => other === stem).length
          if (count === 0) continue
          const n = holding.get(stem)!
          const idf = Math.log(1 + (candidates.length - n + 0.5) / (n + 0.5))
          score += idf * (count * (K1 + 1)) / (count + K1 * (1 - B + B * stems.length / averageLength))
        }
        if (score > 0) hits.push({ ...structuredClone(passage), documentName: document.name, score })
      }
      return hits.sort((a, b) => b.score - a.score || a.seq - b.seq).slice(0, limit)
    },
    async searchVectors(baseIds, model, vector, limit) {
      const searched = new Set(baseIds)
      const hits: KnowledgeHit[] = []
      for (const document of documents.values()) {
        const kept = vectors.get(document.id)
        if (!searched.has(document.baseId) || kept?.model !== model) continue
        for (const [seq, values] of kept.values.entries()) {
          const passage = passages.get(document.id)?.[seq]
          if (passage && values.length === vector.length) hits.push({ ...structuredClone(passage), documentName: document.name, score: dot(values, vector) })
        }
      }
      return hits.sort((a, b) => b.score - a.score || a.seq - b.seq).slice(0, limit)
    },
    async readPassages(documentId, fromSeq, limit) {
      return (passages.get(documentId) ?? []).filter(passage => passage.seq >= fromSeq).slice(0, limit).map(passage => structuredClone(passage))
    },
    async usage(ownerId) {
      const owned = new Set([...bases.values()].filter(base => base.ownerId === ownerId).map(base => base.id))
      const mine = [...documents.values()].filter(document => owned.has(document.baseId))
      return { documents: mine.length, bytes: mine.reduce((sum, document) => sum + document.bytes, 0), passages: mine.reduce((sum, document) => sum + document.passages, 0) }
    },
    async deleteOwner(ownerId) {
      for (const base of [...bases.values()]) if (base.ownerId === ownerId) deleteBase(base.id)
    },
    async close() {},
  }
}
