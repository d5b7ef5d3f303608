/**
 * Searching passages: BM25 over their words (the store's full-text index, offline), and with an
 * embeddings endpoint also their nearest vectors to the question's, the two lists fused by
 * reciprocal rank (each passage scores Σ 1/(60 + its rank in a list), so neither list's own scale
 * matters and a passage both find rises). The question's vector is asked once per question text
 * (kept for the next asker); an endpoint that fails leaves that search to BM25 alone. With a rerank
 * model, the best `rerankCandidates` of that list are put in its order (rerank.ts); one that fails
 * leaves the fused order.
 */
import { LRUCache } from 'lru-cache'
import type { KnowledgeHit } from '../../../shared/types/knowledge'
import type { KnowledgeStore } from '../stores/knowledge/knowledge-store'
import { EmbeddingError, type Embedder } from './embeddings'
import { MAX_RERANK_CANDIDATES, RerankError, type Reranker } from './rerank'

/** Reciprocal rank fusion's constant (the value its authors found best, and everyone uses). */
const RRF_K = 60
/** Candidates taken from each list, per passage asked for (at least 20). */
const POOL_PER_HIT = 4
/** Questions whose vectors are kept. */
const CACHED_QUESTIONS = 500

/** `lists` (each best first) fused by reciprocal rank: the best `limit`, each scored by its fused rank. */
export function fuseByRank(lists: ReadonlyArray<readonly KnowledgeHit[]>, limit: number): KnowledgeHit[] {
  const fused = new Map<string, KnowledgeHit>()
  for (const list of lists) {
    for (const [rank, hit] of list.entries()) {
      const kept = fused.get(hit.id)
      const score = 1 / (RRF_K + rank + 1)
      if (kept) kept.score += score
      else fused.set(hit.id, { ...hit, score })
    }
  }
  return [...fused.values()].sort((a, b) => b.score - a.score || a.documentId.localeCompare(b.documentId) || a.seq - b.seq).slice(0, limit)
}

export class PassageSearch {
  private readonly questions = new LRUCache<string, Float32Array>({ max: CACHED_QUESTIONS })

  constructor(
    private readonly store: KnowledgeStore,
    private readonly embedder?: Embedder,
    private readonly warn: (message: string) => void = () => {},
    private readonly reranking?: { reranker: Reranker, candidates: number },
  ) {}

  /** The passages of `baseIds` that best answer `query`, best first. */
  async search(baseIds: readonly string[], query: string, limit: number): Promise<KnowledgeHit[]> {
    if (baseIds.length === 0 || !query.trim()) return this.store.search(baseIds, query, limit)
    const wanted = this.reranking ? Math.min(MAX_RERANK_CANDIDATES, Math.max(limit, this.reranking.candidates)) : limit
    const found = await this.found(baseIds, query, wanted)
    return this.reranking ? (await this.reranked(this.reranking.reranker, query, found)).slice(0, limit) : found
  }

  /** The best `limit` by words, fused with the best by meaning when there is an embedding model. */
  private async found(baseIds: readonly string[], query: string, limit: number): Promise<KnowledgeHit[]> {
    if (!this.embedder) return this.store.search(baseIds, query, limit)
    const pool = Math.max(20, limit * POOL_PER_HIT)
    const [byWords, vector] = await Promise.all([this.store.search(baseIds, query, pool), this.vectorOf(this.embedder, query)])
    if (!vector) return byWords.slice(0, limit)
    const byMeaning = await this.store.searchVectors(baseIds, this.embedder.model, vector, pool)
    return fuseByRank([byWords, byMeaning], limit)
  }

  /** `hits` in the rerank model's order, each scored by it; unchanged when it fails. */
  private async reranked(reranker: Reranker, query: string, hits: KnowledgeHit[]): Promise<KnowledgeHit[]> {
    if (hits.length < 2) return hits
    try {
      const ranking = await reranker.rerank(query, hits.map(hit => hit.text))
      const ranked = ranking.map(({ index, score }) => ({ ...hits[index]!, score }))
      // Any it did not rank keep their fused order after those it did.
      return [...ranked, ...hits.filter((_, index) => !ranking.some(item => item.index === index))]
    } catch (error) {
      if (!(error instanceof RerankError)) throw error
      this.warn(`A knowledge search kept its fused order: ${error.message}`)
      return hits
    }
  }

  private async vectorOf(embedder: Embedder, query: string): Promise<Float32Array | undefined> {
    const kept = this.questions.get(query)
    if (kept) return kept
    try {
      const [vector] = await embedder.embed([query])
      if (vector) this.questions.set(query, vector)
      return vector
    } catch (error) {
      if (!(error instanceof EmbeddingError)) throw error
      this.warn(`A knowledge search used words only: ${error.message}`)
      return undefined
    }
  }
}
