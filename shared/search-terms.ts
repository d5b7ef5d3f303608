/**
 * Searching conversations: a person's query made safe and bounded (at most 8 words of letters and
 * digits, each at most 40 characters: no operator, quote or wildcard of theirs reaches a search
 * engine), how each store matches them (every word, as a word prefix, case and accents ignored; a
 * one-character word only as a whole word, so "a" cannot make SQLite rank every message it holds),
 * and the snippet shown around the first match.
 */

/** Longest query read (characters); longer input is cut, never rejected. */
export const MAX_SEARCH_QUERY_CHARS = 200
const MAX_TERMS = 8
const MAX_TERM_CHARS = 40
const SNIPPET_CHARS = 160

/** Folds case and accents, as SQLite's `unicode61 remove_diacritics 2` tokenizer does. */
export function foldText(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase()
}

/** The words of `query` to look for; empty when there is nothing to search. */
export function searchTerms(query: string): string[] {
  const words = foldText(query.slice(0, MAX_SEARCH_QUERY_CHARS)).match(/[\p{L}\p{N}]+/gu) ?? []
  return [...new Set(words.map(word => word.slice(0, MAX_TERM_CHARS)))].slice(0, MAX_TERMS)
}

/** Shortest word matched as a prefix; shorter ones match whole words only. */
const MIN_PREFIX_CHARS = 2

/** An FTS5 query for `terms`: each a quoted prefix (a whole word when very short), all required. */
export function ftsQuery(terms: readonly string[]): string {
  return terms.map(term => (term.length >= MIN_PREFIX_CHARS ? `"${term}"*` : `"${term}"`)).join(' ')
}

/** Whether every term starts a word of `text` (the memory store's match, same as FTS5's). */
export function matchesAll(text: string, terms: readonly string[]): boolean {
  if (terms.length === 0) return false
  const words = foldText(text).match(/[\p{L}\p{N}]+/gu) ?? []
  return terms.every(term => words.some(word => (term.length >= MIN_PREFIX_CHARS ? word.startsWith(term) : word === term)))
}

/** About `SNIPPET_CHARS` characters of `text` around the first term found, on one line. */
export function snippetAround(text: string, terms: readonly string[]): string {
  const flat = text.slice(0, 100_000).replace(/\s+/g, ' ').trim()
  const folded = foldText(flat)
  const at = Math.min(...terms.map(term => folded.indexOf(term)).filter(index => index >= 0), Number.POSITIVE_INFINITY)
  const start = Number.isFinite(at) ? Math.max(0, at - SNIPPET_CHARS / 3) : 0
  const end = Math.min(flat.length, start + SNIPPET_CHARS)
  return `${start > 0 ? '…' : ''}${flat.slice(start, end).trim()}${end < flat.length ? '…' : ''}`
}
