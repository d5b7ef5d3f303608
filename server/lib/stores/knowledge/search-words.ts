/**
 * The words a knowledge search looks for: at most 32 of a query's first 2,000 characters, folded
 * (case and accents, as SQLite's tokenizer folds them), without the little words every passage has
 * ("the", "what", "is"), so a question asked in a sentence ranks passages by what it is about. No
 * operator, quote or wildcard of the person's reaches the search engine.
 */
import { stemmer } from 'stemmer'
import { foldText } from '../../../../shared/search-terms'

const MAX_QUERY_CHARS = 2_000
const MAX_WORDS = 32
const MAX_WORD_CHARS = 40

const LITTLE_WORDS = new Set(('a an and are as at be but by can could did do does for from had has have how i if in into is it its me my '
  + 'of on or our should so than that the their them then there these they this to was we were what when where which who why will with would you your '
  + 'about tell please give show know').split(' '))

/** The words of `query` to search for; empty when there is nothing to search. */
export function knowledgeSearchWords(query: string): string[] {
  const words = foldText(query.slice(0, MAX_QUERY_CHARS)).match(/[\p{L}\p{N}]+/gu) ?? []
  const kept = [...new Set(words.map(word => word.slice(0, MAX_WORD_CHARS)))]
  const meaningful = kept.filter(word => !LITTLE_WORDS.has(word))
  return (meaningful.length > 0 ? meaningful : kept).slice(0, MAX_WORDS)
}

/** An FTS5 query for `words`: any of them (BM25 ranks passages with more, and rarer, words first); word forms meet through the tokenizer's Porter stems. */
export function knowledgeFtsQuery(words: readonly string[]): string {
  return words.map(word => `"${word}"`).join(' OR ')
}

/** A word's Porter stem, as SQLite's `porter` tokenizer makes it: "refunded" → "refund". */
export function stemOf(word: string): string {
  return stemmer(word)
}

/** The Porter stems of every word of `text`, folded: what a passage is searched by where the engine does not stem (memory, Convex). */
export function searchStems(text: string): string[] {
  return (foldText(text).match(/[\p{L}\p{N}]+/gu) ?? []).map(word => stemOf(word.slice(0, MAX_WORD_CHARS)))
}
