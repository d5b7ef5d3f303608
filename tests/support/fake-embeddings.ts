/**
 * A deterministic embedding model for tests: each word's Porter stem, after a few synonyms are
 * mapped to one meaning ("automobile" and "vehicle" to "car"), hashed into one of 64 dimensions;
 * the counts scaled to length 1. Passages that share no word with a question but mean the same
 * (by these synonyms) come near it, which BM25 alone cannot find: what a hybrid search is for.
 */
import { stemOf } from '../../server/lib/stores/knowledge/search-words'

export const FAKE_EMBEDDING_DIMENSIONS = 64

/** Words the fake model takes as one meaning. */
const MEANINGS: Record<string, string> = { automobile: 'car', vehicle: 'car', motorcar: 'car', salary: 'pay', wage: 'pay', wages: 'pay', holiday: 'vacation', leave: 'vacation' }

function hash(text: string): number {
  let value = 2166136261
  for (let index = 0; index < text.length; index++) value = Math.imul(value ^ text.charCodeAt(index), 16777619)
  return (value >>> 0) % FAKE_EMBEDDING_DIMENSIONS
}

/** The fake model's vector of `text` (a plain number array, as an endpoint sends it). */
export function fakeEmbedding(text: string): number[] {
  const vector = Array.from({ length: FAKE_EMBEDDING_DIMENSIONS }, () => 0)
  for (const word of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (word.length < 3) continue
    vector[hash(stemOf(MEANINGS[word] ?? word))]! += 1
  }
  const length = Math.hypot(...vector) || 1
  return vector.map(value => value / length)
}

/** An OpenAI-compatible `/embeddings` answer to `input`. */
export function fakeEmbeddingsAnswer(model: string, input: string | string[]): { object: 'list', model: string, data: Array<{ object: 'embedding', index: number, embedding: number[] }> } {
  const texts = Array.isArray(input) ? input : [input]
  return { object: 'list', model, data: texts.map((text, index) => ({ object: 'embedding', index, embedding: fakeEmbedding(text) })) }
}
