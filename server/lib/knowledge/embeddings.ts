/**
 * Embeddings from an OpenAI-compatible `/embeddings` endpoint (OpenRouter, Ollama, vLLM, LM
 * Studio): texts in, one unit-length vector each out. Every answer is bounded before it is trusted
 * (its size, one vector per text, the same dimension throughout, finite numbers); the key goes in
 * the Authorization header and nowhere else (never in an error or a log line).
 */
import { postJson } from './json-endpoint'
import { unitLength } from '../stores/knowledge/vector-math'

export interface EmbedderSettings {
  /** The endpoint's base URL (`…/v1`); `/embeddings` is added. */
  baseUrl: string
  apiKey?: string
  model: string
  /** Texts per request. */
  batch: number
  timeoutMs: number
}

/** What a failed embedding request tells a person (without the key or the endpoint's body at length). */
export class EmbeddingError extends Error {
  override readonly name = 'EmbeddingError'
}

/** The largest answer read from the endpoint (a batch of 64 vectors of 4,096 numbers as JSON is ~6 MB). */
const MAX_RESPONSE_BYTES = 32 * 1024 * 1024
/** The largest vector taken (the biggest embedding models give 4,096 numbers). */
const MAX_DIMENSIONS = 8_192
/** Characters of one text sent (about 2,000 tokens; a passage is ~1,000 characters, a question fewer). */
const MAX_TEXT_CHARS = 8_000

export interface Embedder {
  readonly model: string
  /** One unit-length vector per text, in order. */
  embed(texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]>
}

/** The vectors of an endpoint's answer to `count` texts, checked. */
function vectorsOf(body: unknown, count: number): Float32Array[] {
  const data = (body as { data?: unknown })?.data
  if (!Array.isArray(data) || data.length !== count) throw new EmbeddingError(`The embeddings endpoint answered with ${Array.isArray(data) ? data.length : 'no'} vectors for ${count} texts.`)
  const vectors: Float32Array[] = new Array(count)
  let dimensions = 0
  for (const [position, item] of data.entries()) {
    const embedding = (item as { embedding?: unknown })?.embedding
    const index = typeof (item as { index?: unknown })?.index === 'number' ? (item as { index: number }).index : position
    if (!Array.isArray(embedding) || embedding.length === 0 || embedding.length > MAX_DIMENSIONS) throw new EmbeddingError('The embeddings endpoint answered with a vector that is not a list of up to 8,192 numbers.')
    if (!Number.isInteger(index) || index < 0 || index >= count || vectors[index]) throw new EmbeddingError('The embeddings endpoint answered with vectors out of order.')
    dimensions ||= embedding.length
    if (embedding.length !== dimensions) throw new EmbeddingError('The embeddings endpoint answered with vectors of different lengths.')
    const vector = new Float32Array(embedding.length)
    for (const [at, value] of embedding.entries()) {
      if (typeof value !== 'number' || !Number.isFinite(value)) throw new EmbeddingError('The embeddings endpoint answered with a vector holding something other than numbers.')
      vector[at] = value
    }
    vectors[index] = unitLength(vector)
  }
  return vectors
}

export function createEmbedder(settings: EmbedderSettings, fetcher: typeof fetch = fetch): Embedder {
  const url = `${settings.baseUrl.replace(/\/+$/, '')}/embeddings`
  const request = async (texts: readonly string[], signal?: AbortSignal): Promise<Float32Array[]> => {
    const body = await postJson({
      url, apiKey: settings.apiKey, fetcher, signal, timeoutMs: settings.timeoutMs, maxBytes: MAX_RESPONSE_BYTES,
      body: { model: settings.model, input: texts.map(text => text.slice(0, MAX_TEXT_CHARS)) },
      what: 'The embeddings endpoint', fail: message => new EmbeddingError(message),
    })
    return vectorsOf(body, texts.length)
  }
  return {
    model: settings.model,
    async embed(texts, signal) {
      const vectors: Float32Array[] = []
      for (let start = 0; start < texts.length; start += settings.batch) {
        vectors.push(...await request(texts.slice(start, start + settings.batch), signal))
      }
      if (vectors.length > 0 && vectors.some(vector => vector.length !== vectors[0]!.length)) throw new EmbeddingError('The embeddings endpoint answered with vectors of different lengths.')
      return vectors
    },
  }
}
