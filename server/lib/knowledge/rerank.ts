/**
 * An optional rerank model (a cross-encoder such as Cohere's, Jina's, or a local one served by
 * TEI, vLLM or Infinity) behind the standard `/rerank` endpoint: given the question and the fused
 * candidates' texts, it scores each against the question, and the passages are put in its order.
 * Bounded like the embeddings client: the texts sent (count, characters), the answer read (size,
 * one known index each, finite scores), the time; the key goes in the Authorization header only.
 * A failure leaves the fused order (the search goes on, the operator is told why).
 */
import { postJson } from './json-endpoint'

export interface RerankerSettings {
  /** The endpoint's base URL (`…/v1`); `/rerank` is added. */
  baseUrl: string
  apiKey?: string
  model: string
  timeoutMs: number
}

/** Why a rerank could not be used (without the key, and with at most the start of the endpoint's answer). */
export class RerankError extends Error {
  override readonly name = 'RerankError'
}

/** Characters of one passage sent (passages are about a thousand). */
const MAX_TEXT_CHARS = 4_000
/** Candidates one request scores at most. */
export const MAX_RERANK_CANDIDATES = 100
const MAX_RESPONSE_BYTES = 1024 * 1024

export interface Reranker {
  readonly model: string
  /** The indexes of `texts`, most relevant to `query` first, each with its score. */
  rerank(query: string, texts: readonly string[], signal?: AbortSignal): Promise<Array<{ index: number, score: number }>>
}

/** The ranking an endpoint answered for `count` texts, checked. */
function rankingOf(body: unknown, count: number): Array<{ index: number, score: number }> {
  const results = (body as { results?: unknown, data?: unknown })?.results ?? (body as { data?: unknown })?.data
  if (!Array.isArray(results)) throw new RerankError('The rerank endpoint answered without results.')
  const seen = new Set<number>()
  const ranking = results.slice(0, count).map((item) => {
    const { index, relevance_score: relevance, score } = (item ?? {}) as { index?: unknown, relevance_score?: unknown, score?: unknown }
    const value = typeof relevance === 'number' ? relevance : score
    if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= count || seen.has(index)) throw new RerankError('The rerank endpoint answered with an index it was not given.')
    if (typeof value !== 'number' || !Number.isFinite(value)) throw new RerankError('The rerank endpoint answered with a score that is not a number.')
    seen.add(index)
    return { index, score: value }
  })
  return ranking.sort((a, b) => b.score - a.score)
}

export function createReranker(settings: RerankerSettings, fetcher: typeof fetch = fetch): Reranker {
  const url = `${settings.baseUrl.replace(/\/+$/, '')}/rerank`
  return {
    model: settings.model,
    async rerank(query, texts, signal) {
      const documents = texts.slice(0, MAX_RERANK_CANDIDATES).map(text => text.slice(0, MAX_TEXT_CHARS))
      if (documents.length === 0) return []
      const body = await postJson({
        url, apiKey: settings.apiKey, fetcher, signal, timeoutMs: settings.timeoutMs, maxBytes: MAX_RESPONSE_BYTES,
        body: { model: settings.model, query: query.slice(0, MAX_TEXT_CHARS), documents, top_n: documents.length },
        what: 'The rerank endpoint', fail: message => new RerankError(message),
      })
      return rankingOf(body, documents.length)
    },
  }
}
