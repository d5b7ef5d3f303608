/**
 * A snippet cut into pieces, those that start with a searched word marked, for rendering as text
 * (`<mark>` around the marked ones; never HTML from the snippet itself).
 */
export interface SnippetPiece { text: string, mark: boolean }

function fold(text: string): string {
  return text.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase()
}

/** The snippet without Markdown's emphasis and code marks (`**`, `__`, `~~`, backticks, heading hashes). */
export function plainSnippet(text: string): string {
  return text.replace(/\*\*|__|~~|`+|(?:^|\s)#{1,6}\s/g, match => (match.trim().startsWith('#') ? ' ' : ''))
}

/** `snippet` as pieces (Markdown marks removed), the words that begin with one of the query's words marked. */
export function highlightTerms(snippet: string, query: string): SnippetPiece[] {
  snippet = plainSnippet(snippet)
  const terms = (fold(query.slice(0, 200)).match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 8)
  const pieces: SnippetPiece[] = []
  for (const part of snippet.split(/([\p{L}\p{N}]+)/u)) {
    if (!part) continue
    const mark = /[\p{L}\p{N}]/u.test(part) && terms.some(term => fold(part).startsWith(term))
    const last = pieces.at(-1)
    if (last && last.mark === mark && !mark) last.text += part
    else pieces.push({ text: part, mark })
  }
  return pieces
}
