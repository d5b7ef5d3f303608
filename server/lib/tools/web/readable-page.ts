/**
 * A fetched page as text a model reads well: an HTML page's article (Mozilla's Readability, as
 * Firefox's reader view finds it, on a linkedom document: no browser, no scripts run) as Markdown
 * (turndown); plain text, Markdown, CSV and XML as they are; JSON pretty-printed. Anything else (an
 * image, a PDF, an archive) is refused with its type. The text is cut at `maxChars`, saying so.
 */
import { Readability } from '@mozilla/readability'
import { parseHTML } from 'linkedom'
import TurndownService from 'turndown'

export interface ReadablePage {
  title?: string
  /** Markdown or plain text. */
  text: string
  /** The text was longer than `maxChars` and was cut there. */
  cut: boolean
}

const TEXT_TYPES = new Set(['text/plain', 'text/markdown', 'text/csv', 'text/xml', 'application/xml', 'application/rss+xml', 'application/atom+xml'])

/** The media type of a Content-Type header, lower-cased, without parameters. */
export function mediaTypeOf(contentType: string): string {
  return contentType.split(';')[0]!.trim().toLowerCase()
}

/** Whether a page of this type can be read. */
export function isReadableType(contentType: string): boolean {
  const type = mediaTypeOf(contentType)
  return type === '' || type === 'text/html' || type === 'application/xhtml+xml' || type === 'application/json' || type.endsWith('+json') || TEXT_TYPES.has(type)
}

function charsetOf(contentType: string): string {
  const charset = /charset=["']?([\w-]+)/i.exec(contentType)?.[1]?.toLowerCase()
  try {
    return charset ? new TextDecoder(charset).encoding : 'utf-8'
  } catch {
    return 'utf-8'
  }
}

function cut(text: string, maxChars: number): { text: string, cut: boolean } {
  return text.length > maxChars ? { text: `${text.slice(0, maxChars)}\n\n[… cut at ${maxChars.toLocaleString('en')} characters]`, cut: true } : { text, cut: false }
}

/** Reads `body` (of `contentType`) as text; throws for a type that is not a page. */
export function readablePage(body: Buffer, contentType: string, maxChars: number): ReadablePage {
  const type = mediaTypeOf(contentType)
  if (!isReadableType(contentType)) throw new Error(`The page is ${type}, not text or HTML, so it cannot be read as text.`)
  const source = new TextDecoder(charsetOf(contentType)).decode(body)
  if (type === 'application/json' || type.endsWith('+json')) {
    try {
      return cut(JSON.stringify(JSON.parse(source), null, 2), maxChars)
    } catch {
      return cut(source, maxChars)
    }
  }
  if (type !== 'text/html' && type !== 'application/xhtml+xml' && !(type === '' && /^\s*<(!doctype html|html)/i.test(source))) return cut(source, maxChars)
  // linkedom's document is a DOM Document as far as Readability is concerned.
  const { document } = parseHTML(source) as unknown as { document: { title?: string, body?: { textContent: string | null } } }
  const title = document.title?.trim() || undefined
  const article = new Readability(document as never, { charThreshold: 200 }).parse()
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' })
  turndown.remove(['script', 'style', 'noscript', 'iframe'])
  const markdown = article?.content ? turndown.turndown(article.content) : (document.body?.textContent ?? '').replace(/\s+\n/g, '\n').trim()
  return { title: article?.title?.trim() || title, ...cut(markdown.trim(), maxChars) }
}
