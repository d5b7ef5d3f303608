/**
 * A fetched page as text a model reads well: an HTML page's article (Mozilla's Readability, as
 * Firefox's reader view finds it, on a linkedom document: no browser, no scripts run) as Markdown
 * (turndown); plain text, Markdown, CSV and XML as they are; JSON pretty-printed. Anything else (an
 * image, a PDF, an archive) is refused with its type. The text is cut at `maxChars`, saying so.
 *
 * Parsing a page of 2 MB takes a second or more: it runs in a worker thread of its own (time- and
 * heap-limited), never on the server's event loop.
 */
import { createRequire } from 'node:module'
import { Worker } from 'node:worker_threads'

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

/** Longest one page's parsing may take. */
const PARSE_TIMEOUT_MS = 15_000

/** What the parsing worker runs (CommonJS; the packages' paths come in `workerData`). */
const HTML_WORKER = String.raw`
const { parentPort, workerData } = require('node:worker_threads')
const { parseHTML } = require(workerData.paths.linkedom)
const { Readability } = require(workerData.paths.readability)
const TurndownService = require(workerData.paths.turndown)
const { document } = parseHTML(workerData.html)
const title = (document.title || '').trim() || undefined
const article = new Readability(document, { charThreshold: 200 }).parse()
const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' })
turndown.remove(['script', 'style', 'noscript', 'iframe'])
const markdown = article && article.content ? turndown.turndown(article.content) : ((document.body && document.body.textContent) || '').replace(/\s+\n/g, '\n').trim()
parentPort.postMessage({ title: ((article && article.title) || '').trim() || title, markdown: markdown.trim() })
`

let parserPaths: Record<'linkedom' | 'readability' | 'turndown', string> | undefined
/** Where the parsing packages are (resolved at the first use: see quickjs-sandbox.ts for why not at load). */
function parsers(): Record<'linkedom' | 'readability' | 'turndown', string> {
  const require = createRequire(import.meta.url)
  return parserPaths ??= { linkedom: require.resolve('linkedom'), readability: require.resolve('@mozilla/readability'), turndown: require.resolve('turndown') }
}

/** An HTML page's article as Markdown, parsed in a worker (ended when it answers, fails or runs out of time). */
async function htmlToMarkdown(html: string): Promise<{ title?: string, markdown: string }> {
  const worker = new Worker(HTML_WORKER, { eval: true, workerData: { html, paths: parsers() }, resourceLimits: { maxOldGenerationSizeMb: 512 } })
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    return await new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`The page could not be read within ${PARSE_TIMEOUT_MS / 1000} s.`)), PARSE_TIMEOUT_MS)
      worker.once('message', resolve)
      worker.once('error', (error: Error) => reject(new Error(`The page could not be read: ${error.message}`)))
      worker.once('exit', () => reject(new Error('The page could not be read.')))
    })
  } finally {
    clearTimeout(timer)
    void worker.terminate()
  }
}

/** `body` decoded by the charset its Content-Type names (UTF-8 otherwise), cut at `maxChars`. */
export function pageText(body: Buffer, contentType: string, maxChars: number): { text: string, cut: boolean } {
  return cut(new TextDecoder(charsetOf(contentType)).decode(body), maxChars)
}

/** Reads `body` (of `contentType`) as text; throws for a type that is not a page. */
export async function readablePage(body: Buffer, contentType: string, maxChars: number): Promise<ReadablePage> {
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
  const { title, markdown } = await htmlToMarkdown(source)
  return { ...(title ? { title } : {}), ...cut(markdown, maxChars) }
}
