/**
 * `#` in the composer: the word being typed after a `#` names a knowledge base to attach to the
 * conversation. Reads at most 60 characters before the caret, with a pattern of one bounded run.
 */

/** A base the person may attach. */
export interface KnowledgeChoice {
  id: string
  name: string
}

/** The `#word` the caret is at the end of: where its `#` is and the word so far; undefined when there is none. */
export function mentionAt(text: string, caret: number): { start: number, query: string } | undefined {
  const before = text.slice(Math.max(0, caret - 60), caret)
  const match = /(?:^|\s)#([\p{L}\p{N}_.-]{0,40})$/u.exec(before)
  if (!match) return undefined
  return { start: caret - match[1]!.length - 1, query: match[1]! }
}

/** The bases whose name has `query` in it (case and accents ignored), those starting with it first, at most `limit`. */
export function matchingBases(bases: readonly KnowledgeChoice[], query: string, limit = 8): KnowledgeChoice[] {
  const fold = (value: string) => value.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase()
  const wanted = fold(query)
  return bases
    .map(base => ({ base, at: fold(base.name).indexOf(wanted) }))
    .filter(entry => entry.at >= 0)
    .sort((a, b) => Number(a.at !== 0) - Number(b.at !== 0) || a.base.name.localeCompare(b.base.name))
    .slice(0, limit)
    .map(entry => entry.base)
}

/** `text` without the `#word` from `start` to `caret` (nothing left but spaces: empty). */
export function withoutMention(text: string, start: number, caret: number): string {
  const rest = `${text.slice(0, start)}${text.slice(caret)}`
  return rest.trim() ? rest : ''
}
