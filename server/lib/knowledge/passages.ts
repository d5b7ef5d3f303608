/**
 * A read document cut into passages a search finds and a model reads: about a thousand characters
 * each, along the document's own structure (a Markdown heading starts a new passage and names the
 * ones under it; a PDF's passages stay within their page; a table's rows stay whole, its header
 * repeated in every passage), each starting with the end of the one before in the same section, so
 * a sentence cut at a boundary is whole in one of them. Linear in the text; no pattern that can
 * backtrack.
 */
import type { NewKnowledgePassage } from '../stores/knowledge/knowledge-store'

/** What reading a file gives (read-document.ts). */
export type ReadDocument =
  | { kind: 'markdown', text: string }
  | { kind: 'pages', pages: string[] }
  | { kind: 'table', header: string[], rows: string[][] }

/** How long passages are. */
export interface PassageShape {
  /** Most characters of one passage. */
  maxChars: number
  /** Characters of the previous passage's end repeated at the start of the next (same section). */
  overlapChars: number
}

export const DEFAULT_PASSAGE_SHAPE: PassageShape = { maxChars: 1_000, overlapChars: 150 }

const HEADING = /^(#{1,6})[ \t]+(\S.*)$/

/** The passages of `read`, in order. */
export function passagesOf(read: ReadDocument, shape: PassageShape = DEFAULT_PASSAGE_SHAPE): NewKnowledgePassage[] {
  switch (read.kind) {
    case 'markdown': return markdownPassages(read.text, shape)
    case 'pages': return read.pages.flatMap((page, index) => sectionPassages(paragraphsOf(page), shape).map(text => ({ text, page: index + 1 })))
    case 'table': return tablePassages(read.header, read.rows, shape)
  }
}

/** Blocks of text separated by blank lines, each with its spaces tidied. */
function paragraphsOf(text: string): string[] {
  const paragraphs: string[] = []
  let current: string[] = []
  for (const line of text.split('\n')) {
    if (line.trim() === '') {
      if (current.length) paragraphs.push(current.join('\n'))
      current = []
    } else current.push(line.trimEnd())
  }
  if (current.length) paragraphs.push(current.join('\n'))
  return paragraphs
}

function markdownPassages(text: string, shape: PassageShape): NewKnowledgePassage[] {
  const passages: NewKnowledgePassage[] = []
  const headings: string[] = []
  let body: string[] = []
  let fence = false
  const flush = () => {
    const heading = headings.filter(Boolean).join(' › ') || undefined
    for (const piece of sectionPassages(paragraphsOf(body.join('\n')), shape)) passages.push({ text: piece, ...(heading ? { heading } : {}) })
    body = []
  }
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (line.startsWith('```') || line.startsWith('~~~')) fence = !fence
    const heading = fence ? null : HEADING.exec(line.length <= 300 ? line : '')
    if (!heading) {
      body.push(line)
      continue
    }
    flush()
    const level = heading[1]!.length
    headings.length = level
    headings[level - 1] = heading[2]!.replace(/[#\s]+$/, '').trim()
  }
  flush()
  return passages
}

/** One section's paragraphs as passages of at most `maxChars`, each after the first starting with the end of the one before. */
function sectionPassages(paragraphs: string[], shape: PassageShape): string[] {
  const pieces = paragraphs.flatMap(paragraph => splitLong(paragraph, shape.maxChars - shape.overlapChars))
  const passages: string[] = []
  let current = ''
  for (const piece of pieces) {
    if (current && current.length + 2 + piece.length > shape.maxChars) {
      passages.push(current)
      const overlap = tailOf(current, shape.overlapChars)
      current = overlap && overlap.length + 2 + piece.length <= shape.maxChars ? `${overlap}\n\n${piece}` : piece
    } else current = current ? `${current}\n\n${piece}` : piece
  }
  if (current.trim()) passages.push(current)
  return passages
}

/** `text` cut into pieces of at most `max` characters, at a sentence's end or a space where there is one. */
function splitLong(text: string, max: number): string[] {
  const pieces: string[] = []
  let rest = text
  while (rest.length > max) {
    const window = rest.slice(0, max)
    let cut = Math.max(window.lastIndexOf('. '), window.lastIndexOf('! '), window.lastIndexOf('? '), window.lastIndexOf('\n'))
    if (cut < max / 2) cut = window.lastIndexOf(' ')
    if (cut < max / 2) cut = max - 1
    pieces.push(rest.slice(0, cut + 1).trim())
    rest = rest.slice(cut + 1).trimStart()
  }
  if (rest.trim()) pieces.push(rest)
  return pieces
}

/** About the last `chars` characters of `text`, from a sentence's start (else a word's). */
function tailOf(text: string, chars: number): string {
  if (chars <= 0 || text.length <= chars) return ''
  const tail = text.slice(-chars)
  const sentence = tail.search(/[.!?]\s/)
  if (sentence >= 0 && sentence < tail.length - 20) return tail.slice(sentence + 2).trim()
  const space = tail.indexOf(' ')
  return space >= 0 ? tail.slice(space + 1).trim() : ''
}

function tablePassages(header: string[], rows: string[][], shape: PassageShape): NewKnowledgePassage[] {
  const passages: NewKnowledgePassage[] = []
  const headerLine = header.join(' | ')
  let lines: string[] = []
  let first = 0
  const flush = (last: number) => {
    if (lines.length) passages.push({ text: `${headerLine}\n${lines.join('\n')}`, heading: `Rows ${first + 1}–${last + 1}` })
    lines = []
  }
  for (const [index, row] of rows.entries()) {
    const line = row.map((cell, column) => (header[column] ? `${header[column]}: ${cell}` : cell)).join('; ').slice(0, shape.maxChars)
    if (lines.length && headerLine.length + lines.join('\n').length + line.length + 2 > shape.maxChars) {
      flush(index - 1)
      first = index
    }
    lines.push(line)
  }
  flush(rows.length - 1)
  return passages
}
