/**
 * Markdown as the plain words a short preview (a toast, a notification) shows: code fences,
 * emphasis marks, headings, list and quote markers and link targets dropped, whitespace folded.
 * Each rule is a plain scan with bounded repetition, so a hostile answer cannot make it slow.
 */
export function plainPreview(markdown: string, maxChars = 140): string {
  const text = markdown
    // Read well past what is shown, never the whole of a long answer.
    .slice(0, maxChars * 4)
    .replace(/^ {0,3}(?:```|~~~)[^\n]*$/gm, '')
    .replace(/!\[([^\]\n]{0,300})\]\([^)\n]{0,1000}\)/g, '$1')
    .replace(/\[([^\]\n]{0,300})\]\([^)\n]{0,1000}\)/g, '$1')
    .replace(/^ {0,3}(?:#{1,6} +|> ?|[-*+] +|\d{1,9}[.)] +)/gm, '')
    .replace(/\*\*|__|`|~~/g, '')
    .replace(/(^|[\s(])[*_]([^\s*_])/g, '$1$2')
    .replace(/([^\s*_])[*_](?=[\s.,;:!?)]|$)/g, '$1')
    .replace(/\s+/g, ' ')
    .trim()
  return text.length > maxChars ? `${text.slice(0, maxChars - 1).trimEnd()}…` : text
}
