/**
 * A document file read as text with its structure, in a process of its own with a time and a
 * heap limit: PDF (unpdf, Mozilla's pdf.js built for servers) page by page; Word (mammoth) and
 * HTML (linkedom, turndown) as Markdown, headings kept; Markdown and text as they are; CSV as a
 * header and rows. A hostile file (a PDF that never ends, a zip bomb of a .docx, a page that
 * needs gigabytes) stops its process, not the server, and fails with a message that says why.
 *
 * A process, not a worker thread: a worker past its heap limit in one large allocation (a zip
 * bomb's expanded part) aborts the whole server (V8's fatal out-of-memory), a child process only
 * itself. It gets no environment (no secret of the server's reaches it) and talks over IPC.
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { KNOWLEDGE_FILE_TYPES, type KnowledgeFileType } from '../../../shared/types/knowledge'
import type { ReadDocument } from './passages'

export interface ReadLimits {
  timeoutMs: number
  memoryMb: number
  /** Most characters of text a document may give. */
  maxChars: number
}

/** Why a file could not be read: the person's to fix (a broken or too large file), never the server's fault. */
export class UnreadableDocumentError extends Error {}

/** What the reading process runs (CommonJS; the file and the packages' paths come in its one message). */
const READER = String.raw`
process.once('message', ({ bytes, mediaType, maxChars, paths }) => {
const tooLong = () => { throw new Error('TOO_LONG') }
const decode = () => {
  const text = new TextDecoder('utf-8').decode(bytes)
  return text.charCodeAt(0) === 0xFEFF ? text.slice(1) : text
}
const toMarkdown = (html) => {
  const { parseHTML } = require(paths.linkedom)
  const TurndownService = require(paths.turndown)
  const { document } = parseHTML(/<body[\s>]/i.test(html.slice(0, 100000)) ? html : '<!doctype html><html><head></head><body>' + html + '</body></html>')
  for (const node of [...document.querySelectorAll('script, style, noscript, iframe, template, svg, nav')]) node.remove()
  const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' })
  const body = document.body || document.documentElement
  return body ? turndown.turndown(body.innerHTML || '') : ''
}
const csvRows = (text) => {
  const rows = []
  let row = []
  let cell = ''
  let quoted = false
  const delimiter = (text.split('\n', 1)[0].match(/;/g) || []).length > (text.split('\n', 1)[0].match(/,/g) || []).length ? ';' : ','
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++ }
      else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"' && cell === '') quoted = true
    else if (c === delimiter) { row.push(cell.trim()); cell = '' }
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++
      row.push(cell.trim()); cell = ''
      if (row.some(value => value !== '')) rows.push(row)
      row = []
    } else cell += c
  }
  row.push(cell.trim())
  if (row.some(value => value !== '')) rows.push(row)
  return rows
}
async function read() {
  switch (mediaType) {
    case 'application/pdf': {
      const { getDocumentProxy, extractText } = require(paths.unpdf)
      const pdf = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 })
      const { text } = await extractText(pdf, { mergePages: false })
      const pages = text.map(page => String(page))
      if (pages.reduce((sum, page) => sum + page.length, 0) > maxChars) tooLong()
      return { kind: 'pages', pages }
    }
    case 'application/vnd.openxmlformats-officedocument.wordprocessingml.document': {
      const mammoth = require(paths.mammoth)
      const { value } = await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })
      const text = toMarkdown(value)
      if (text.length > maxChars) tooLong()
      return { kind: 'markdown', text }
    }
    case 'text/html': {
      const text = toMarkdown(decode())
      if (text.length > maxChars) tooLong()
      return { kind: 'markdown', text }
    }
    case 'text/csv': {
      const rows = csvRows(decode())
      const [header = [], ...rest] = rows
      return { kind: 'table', header, rows: rest }
    }
    default: {
      const text = decode()
      if (text.length > maxChars) tooLong()
      return { kind: 'markdown', text }
    }
  }
}
read().then(
  document => process.send({ document }, () => process.exit(0)),
  error => process.send({ error: error && error.message === 'TOO_LONG' ? 'TOO_LONG' : String((error && error.message) || error).slice(0, 300).replace(/[.\s]+$/, '') }, () => process.exit(0)),
)
})
`

type ReaderPaths = Record<'linkedom' | 'turndown' | 'unpdf' | 'mammoth', string>
let readerPaths: ReaderPaths | undefined
/** Where the reading packages are (resolved at the first use, as readable-page.ts does). */
function readers(): ReaderPaths {
  const require = createRequire(import.meta.url)
  return readerPaths ??= { linkedom: require.resolve('linkedom'), turndown: require.resolve('turndown'), unpdf: require.resolve('unpdf'), mammoth: require.resolve('mammoth') }
}

const KIND_NAMES: Record<KnowledgeFileType, string> = {
  'application/pdf': 'PDF',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document': 'Word document',
  'text/markdown': 'Markdown file',
  'text/html': 'HTML page',
  'text/plain': 'text file',
  'text/csv': 'CSV file',
}

/** Reads `bytes` of `mediaType` in a process of its own; throws UnreadableDocumentError saying why it could not. */
export async function readDocument(bytes: Uint8Array, mediaType: KnowledgeFileType, limits: ReadLimits): Promise<ReadDocument> {
  const kind = KIND_NAMES[mediaType]
  const child = spawn(process.execPath, [`--max-old-space-size=${limits.memoryMb}`, `--max-semi-space-size=${Math.min(32, Math.max(2, Math.round(limits.memoryMb / 16)))}`, '-e', READER], {
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
    serialization: 'advanced',
    env: {},
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    if (stderr.length < 4_096) stderr += chunk
  })
  // A pdf.js parse that loops never answers: the timer here ends it.
  let timer: ReturnType<typeof setTimeout> | undefined
  try {
    const answer = await new Promise<{ document?: ReadDocument, error?: string }>((resolve, reject) => {
      timer = setTimeout(() => reject(new UnreadableDocumentError(`Reading this ${kind} took longer than ${Math.ceil(limits.timeoutMs / 1000)} s, so it was stopped.`)), limits.timeoutMs)
      child.once('message', answer => resolve(answer as { document?: ReadDocument, error?: string }))
      child.once('error', error => reject(new UnreadableDocumentError(`This ${kind} could not be read: ${error.message}`)))
      child.once('exit', () => reject(new UnreadableDocumentError(/heap out of memory|allocation failed/i.test(stderr)
        ? `Reading this ${kind} needed more than ${limits.memoryMb} MiB of memory, so it was stopped (a compressed file that expands without end is refused this way).`
        : `This ${kind} could not be read.`)))
      child.send({ bytes, mediaType, maxChars: limits.maxChars, paths: readers() })
    })
    if (answer.error === 'TOO_LONG') throw new UnreadableDocumentError(`This ${kind} has more than ${limits.maxChars.toLocaleString('en')} characters of text, more than one document may hold. Split it into parts.`)
    if (answer.error || !answer.document) throw new UnreadableDocumentError(`This ${kind} could not be read: ${answer.error ?? 'nothing came of it'}.`)
    return answer.document
  } finally {
    clearTimeout(timer)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}

/** The file type of a file by its name (and, for a browser's vague type, its name only), or undefined when a base does not take it. */
export function knowledgeFileTypeOf(name: string, declared?: string): KnowledgeFileType | undefined {
  const lower = name.toLowerCase()
  for (const [type, extensions] of Object.entries(KNOWLEDGE_FILE_TYPES)) {
    if (extensions.some(extension => lower.endsWith(extension))) return type as KnowledgeFileType
  }
  const plain = declared?.split(';')[0]!.trim().toLowerCase()
  return plain && plain in KNOWLEDGE_FILE_TYPES ? plain as KnowledgeFileType : undefined
}
