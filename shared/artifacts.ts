/**
 * Artifacts: what an answer builds in a fenced code block that is worth seeing as itself: an HTML
 * page, an SVG image, a Mermaid diagram, or a long Markdown document. The app opens them in a side
 * panel (HTML in a sandbox the server serves with its own CSP, see server/lib/threads/artifacts.ts);
 * the server finds the same ones in the stored answer with this same scanner.
 *
 * The scan is one pass over the lines (no regular expression runs over the whole text), bounded in
 * the artifacts it keeps and the characters each may have: an answer is the model's text, and as
 * hostile as any input.
 */

/** What kind of thing an artifact is. */
export type ArtifactKind = 'html' | 'svg' | 'mermaid' | 'markdown'

/** One artifact of an answer. */
export interface Artifact {
  /** Its place among the answer's artifacts (0, 1, …): how the app and the server name it. */
  index: number
  kind: ArtifactKind
  /** What it is called: the fence's `title=`, the page's or image's `<title>`, the document's first heading; else its kind. */
  title: string
  code: string
}

/** A Markdown block is an artifact from this many lines (a short one is just part of the answer). */
export const MIN_MARKDOWN_ARTIFACT_LINES = 20
/** Artifacts kept of one answer at most. */
export const MAX_ARTIFACTS = 20
/** Characters of one artifact at most (a larger block stays code). */
export const MAX_ARTIFACT_CHARS = 500_000
/** Characters of a title at most. */
const MAX_TITLE_CHARS = 80

const LANGUAGE_KINDS: Record<string, ArtifactKind> = { html: 'html', htm: 'html', xhtml: 'html', svg: 'svg', mermaid: 'mermaid', mmd: 'mermaid', md: 'markdown', markdown: 'markdown' }

/** The opening fence of a line (``` or ~~~, at most three spaces in), or undefined. */
function openingFence(line: string): { marker: string, info: string } | undefined {
  const trimmed = line.replace(/^ {0,3}/, '')
  const char = trimmed[0]
  if (char !== '`' && char !== '~') return undefined
  let length = 0
  while (trimmed[length] === char) length++
  if (length < 3) return undefined
  const info = trimmed.slice(length).trim()
  // A backtick fence's info may not hold a backtick (CommonMark).
  if (char === '`' && info.includes('`')) return undefined
  return { marker: char.repeat(length), info }
}

/** Whether `line` closes a block opened by `marker`. */
function closes(line: string, marker: string): boolean {
  const trimmed = line.trim()
  if (!trimmed.startsWith(marker)) return false
  for (const char of trimmed) if (char !== marker[0]) return false
  return true
}

/** The text between `<title>` and `</title>` near the start of `code`, if any. */
function tagTitle(code: string): string | undefined {
  const head = code.slice(0, 5_000)
  const lower = head.toLowerCase()
  const start = lower.indexOf('<title')
  if (start < 0) return undefined
  const open = lower.indexOf('>', start)
  const end = lower.indexOf('</title>', open)
  if (open < 0 || end < 0) return undefined
  return head.slice(open + 1, end)
}

/** The `title="…"` (or `filename=…`) of a fence's info string. */
function infoTitle(info: string): string | undefined {
  for (const name of ['title=', 'filename=', 'file=']) {
    const at = info.indexOf(name)
    if (at < 0) continue
    const rest = info.slice(at + name.length)
    const quote = rest[0] === '"' || rest[0] === '\'' ? rest[0] : undefined
    const value = quote ? rest.slice(1, rest.indexOf(quote, 1) > 0 ? rest.indexOf(quote, 1) : undefined) : rest.split(/\s/)[0]
    if (value) return value
  }
  return undefined
}

/** What a block of `language` holding `code` is, if it is an artifact. */
function kindOf(language: string, code: string): ArtifactKind | undefined {
  const named = LANGUAGE_KINDS[language]
  const start = code.trimStart().slice(0, 200).toLowerCase()
  if (named === 'markdown') return code.split('\n').length >= MIN_MARKDOWN_ARTIFACT_LINES ? 'markdown' : undefined
  if (named) return named === 'html' && start.startsWith('<svg') ? 'svg' : named
  if (language === 'xml' || language === '') {
    if (start.startsWith('<svg')) return 'svg'
    if (start.startsWith('<!doctype html') || start.startsWith('<html')) return 'html'
  }
  return undefined
}

function titleOf(kind: ArtifactKind, info: string, code: string): string {
  let title = infoTitle(info)
  if (!title && (kind === 'html' || kind === 'svg')) title = tagTitle(code)
  if (!title && kind === 'markdown') title = code.split('\n', 40).find(line => line.startsWith('# '))?.slice(2)
  if (!title && kind === 'mermaid') {
    const first = code.trimStart().split(/\s/, 1)[0]
    if (first) title = `${first} diagram`
  }
  const clean = (title ?? '').replace(/\s+/g, ' ').trim().slice(0, MAX_TITLE_CHARS)
  return clean || { html: 'HTML page', svg: 'SVG image', mermaid: 'Diagram', markdown: 'Document' }[kind]
}

/** The artifacts of an answer's Markdown, in order (at most `MAX_ARTIFACTS`). */
export function artifactsIn(text: string): Artifact[] {
  const found: Artifact[] = []
  const lines = text.split('\n')
  for (let at = 0; at < lines.length && found.length < MAX_ARTIFACTS; at++) {
    const fence = openingFence(lines[at]!)
    if (!fence) continue
    let end = at + 1
    while (end < lines.length && !closes(lines[end]!, fence.marker)) end++
    const code = lines.slice(at + 1, end).join('\n')
    const language = (fence.info.split(/\s/, 1)[0] ?? '').toLowerCase()
    const kind = code.length <= MAX_ARTIFACT_CHARS ? kindOf(language, code) : undefined
    if (kind) found.push({ index: found.length, kind, title: titleOf(kind, fence.info, code), code })
    at = end
  }
  return found
}

/** What makes two artifacts of a conversation versions of one thing: their kind and title. */
export function artifactKey(artifact: Pick<Artifact, 'kind' | 'title'>): string {
  return `${artifact.kind}:${artifact.title.toLowerCase()}`
}

/** The HTML page among an answer's artifacts at `index` (a route parameter, checked), if it is one. */
export function htmlArtifactAt(text: string, index: unknown): Artifact | undefined {
  const at = typeof index === 'string' && /^\d{1,2}$/.test(index) ? Number(index) : -1
  const artifact = at >= 0 ? artifactsIn(text)[at] : undefined
  return artifact?.kind === 'html' ? artifact : undefined
}
