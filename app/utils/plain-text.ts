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

/** Characters of an answer read aloud at most. */
export const MAX_SPOKEN_CHARS = 20_000

/**
 * An answer as it is read aloud: its words without its code blocks (code is not read out), in
 * plain text (see `plainPreview`), at most `MAX_SPOKEN_CHARS`.
 */
export function speakableText(markdown: string): string {
  const kept: string[] = []
  let fence: string | undefined
  for (const line of markdown.slice(0, MAX_SPOKEN_CHARS * 4).split('\n')) {
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence) {
      if (marker && marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) fence = undefined
    } else if (marker) {
      fence = marker
    } else {
      kept.push(line)
    }
  }
  return plainPreview(kept.join('\n'), MAX_SPOKEN_CHARS)
}

/**
 * `text` in parts of at most `maxChars` characters for a speech service, each ending at a sentence's
 * end where one fits (else at a space, else cut), in order, none empty.
 */
export function speechParts(text: string, maxChars: number): string[] {
  const parts: string[] = []
  let rest = text.trim()
  while (rest.length > maxChars) {
    const window = rest.slice(0, maxChars + 1)
    let cut = Math.max(window.lastIndexOf('. '), window.lastIndexOf('! '), window.lastIndexOf('? '), window.lastIndexOf('。'))
    cut = cut > maxChars / 3 ? cut + 1 : window.lastIndexOf(' ')
    if (cut <= 0) cut = maxChars
    parts.push(rest.slice(0, cut).trim())
    rest = rest.slice(cut).trim()
  }
  if (rest) parts.push(rest)
  return parts.filter(Boolean)
}
