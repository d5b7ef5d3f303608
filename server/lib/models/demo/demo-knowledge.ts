/**
 * The offline demo model's use of knowledge bases: in a conversation with bases attached (when
 * `search_knowledge` is offered), a question none of its other rules answers is searched, and the
 * answer quotes the best passage and cites each one found with its link, as a model would.
 */

/** Words that start a greeting or a request for help, which are not questions for the documents. */
const NOT_A_QUESTION = /^(?:hi|hello|hey|hiya|yo|thanks|thank you|good (?:morning|afternoon|evening)|help|who are you|what can you do|what are you)\b/i

/** The search the demo makes for `text`, when it may search and `text` is a question for the documents. */
export function knowledgeCallFor(text: string, offered: ReadonlySet<string>): { name: 'search_knowledge', arguments: { query: string } } | undefined {
  if (!offered.has('search_knowledge') || text.length < 3 || NOT_A_QUESTION.test(text)) return undefined
  return { name: 'search_knowledge', arguments: { query: text.slice(0, 500) } }
}

interface Found { n: number, source: string, text: string, cite: string }

/** The answer from a `search_knowledge` result, or undefined for another tool. */
export function describeKnowledgeResult(name: string, data: Record<string, any>): string | undefined {
  if (name !== 'search_knowledge') return undefined
  const results: Found[] = Array.isArray(data.results) ? data.results : []
  const searched = Array.isArray(data.searched) && data.searched.length > 0 ? data.searched.join(', ') : 'the attached knowledge bases'
  if (results.length === 0) return `I found nothing about "${String(data.query)}" in ${searched}.`
  const [best, ...others] = results
  const quote = best!.text.length > 600 ? `${best!.text.slice(0, 600)}…` : best!.text
  const lines = [`From ${searched}, ${best!.source}:`, '', quote.split('\n').map(line => `> ${line}`).join('\n'), '', `Source: ${best!.cite}`]
  if (others.length > 0) lines.push('', `Also about this: ${others.slice(0, 4).map(found => `${found.source} ${found.cite}`).join('; ')}.`)
  return lines.join('\n')
}
