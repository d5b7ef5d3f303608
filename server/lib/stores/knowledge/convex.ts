/**
 * Knowledge bases on Convex (functions in convex/knowledge.ts, tables and versioning in
 * convex/lib/knowledgeTables.ts). Ending an indexing writes the version's passages and vectors a
 * batch at a time under a fresh version id, each batch only while this holder still holds the
 * indexing, then makes that version the document's in one mutation: a crash or a lost claim
 * before it leaves the old passages searchable and the staged ones unread (dropped later).
 * Searching by words sends the question's Porter stems (Convex's search index does not stem; the
 * passages are indexed by theirs); by meaning, a Convex vector index (an action), for vectors of
 * up to 2,048 numbers: a longer model's vectors are not kept, and its documents are found by words.
 */
import { api } from '../../../../convex/_generated/api'
import { vectorTableFor } from '../../../../convex/lib/knowledgeTables'
import type { KnowledgeFileType } from '../../../../shared/types/knowledge'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { KnowledgeStore, NewKnowledgePassage } from './knowledge-store'
import { knowledgeSearchWords, searchStems, stemOf } from './search-words'

/** Passages per staging call, and the text they may carry together (a call's arguments stay far under Convex's limits). */
const PASSAGES_PER_CALL = 100
const PASSAGE_CHARS_PER_CALL = 400_000
/** Numbers per staging call of vectors (100 vectors of 2,048). */
const VECTOR_NUMBERS_PER_CALL = 204_800
/** Words Convex's search takes in one query. */
const SEARCH_TERMS = 16

/** `items` cut into runs of at most `count` whose `size` adds up to at most `budget` (each run has one at least). */
function batches<T>(items: readonly T[], count: number, budget: number, size: (item: T) => number): T[][] {
  const runs: T[][] = []
  let run: T[] = []
  let used = 0
  for (const item of items) {
    const cost = size(item)
    if (run.length > 0 && (run.length >= count || used + cost > budget)) {
      runs.push(run)
      run = []
      used = 0
    }
    run.push(item)
    used += cost
  }
  if (run.length > 0) runs.push(run)
  return runs
}

const stagedPassage = (passage: NewKnowledgePassage, seq: number) => ({
  seq,
  text: passage.text,
  ...(passage.heading ? { heading: passage.heading } : {}),
  ...(passage.page ? { page: passage.page } : {}),
  stems: searchStems(`${passage.heading ?? ''} ${passage.text}`).join(' '),
})

export function createConvexKnowledgeStore(options: { client: ConvexFunctionClient, secret: string }): KnowledgeStore {
  const { client, secret } = options
  return {
    async saveBase(base) {
      await client.mutation(api.knowledge.saveBase, { secret, base })
    },
    async getBase(id) {
      return client.query(api.knowledge.getBase, { secret, id })
    },
    async listBases({ ownerId, groups }) {
      return client.query(api.knowledge.listBases, { secret, ownerId, groups: [...groups] })
    },
    async deleteBase(id) {
      await client.mutation(api.knowledge.deleteBase, { secret, id })
    },
    async saveDocument(document) {
      await client.mutation(api.knowledge.saveDocument, { secret, document })
    },
    async getDocument(id) {
      const found = await client.query(api.knowledge.getDocument, { secret, id })
      return found ? { ...found, mediaType: found.mediaType as KnowledgeFileType } : null
    },
    async listDocuments(baseId) {
      const found = await client.query(api.knowledge.listDocuments, { secret, baseId })
      return found.map(document => ({ ...document, mediaType: document.mediaType as KnowledgeFileType }))
    },
    async deleteDocument(id) {
      await client.mutation(api.knowledge.deleteDocument, { secret, id })
    },
    async claimIndexing(id, contentHash, holder, until, now) {
      return client.mutation(api.knowledge.claimIndexing, { secret, id, contentHash, holder, until, now })
    },
    async finishIndexing(id, contentHash, holder, result, now) {
      const claim = { secret, id, contentHash, holder, version: crypto.randomUUID() }
      if (result.status === 'failed') {
        return client.mutation(api.knowledge.finishIndexing, { ...claim, status: 'failed', error: result.error, passages: 0, now })
      }
      const passages = result.passages.map(stagedPassage)
      for (const run of batches(passages, PASSAGES_PER_CALL, PASSAGE_CHARS_PER_CALL, passage => passage.text.length + passage.stems.length)) {
        if (!await client.mutation(api.knowledge.stagePassages, { ...claim, passages: run })) return false
      }
      const vectors = result.vectors
      const target = vectors && vectors.values.length === passages.length && vectors.values.length > 0 ? vectorTableFor(vectors.values[0]!.length) : null
      if (vectors && target) {
        const padded = vectors.values.map((values, seq) => {
          const vector = Array.from(values)
          while (vector.length < target.size) vector.push(0)
          return { seq, vector }
        })
        for (const run of batches(padded, PASSAGES_PER_CALL, VECTOR_NUMBERS_PER_CALL, item => item.vector.length)) {
          if (!await client.mutation(api.knowledge.stageVectors, { ...claim, table: target.table, model: vectors.model, vectors: run })) return false
        }
      }
      return client.mutation(api.knowledge.finishIndexing, { ...claim, status: 'ready', passages: passages.length, ...(result.pages ? { pages: result.pages } : {}), now })
    },
    async listUnindexed(limit) {
      const found = await client.query(api.knowledge.listUnindexed, { secret, limit })
      return found.map(document => ({ ...document, mediaType: document.mediaType as KnowledgeFileType }))
    },
    async search(baseIds, query, limit) {
      const stems = [...new Set(knowledgeSearchWords(query).map(stemOf))].slice(0, SEARCH_TERMS)
      if (stems.length === 0 || baseIds.length === 0) return []
      return client.query(api.knowledge.search, { secret, baseIds: [...baseIds], stems: stems.join(' '), limit })
    },
    async searchVectors(baseIds, model, vector, limit) {
      if (baseIds.length === 0 || !vectorTableFor(vector.length)) return []
      return client.action(api.knowledge.searchVectors, { secret, baseIds: [...baseIds], model, vector: Array.from(vector), limit })
    },
    async readPassages(documentId, fromSeq, limit) {
      return client.query(api.knowledge.readPassages, { secret, documentId, fromSeq, limit })
    },
    async usage(ownerId) {
      return client.query(api.knowledge.usage, { secret, ownerId })
    },
    async deleteOwner(ownerId) {
      await client.mutation(api.knowledge.deleteOwner, { secret, ownerId })
    },
    async close() {},
  }
}
