import { describe, expect, it } from 'vitest'
import { knowledgeFileTypeOf, readDocument } from '../../../server/lib/knowledge/read-document'
import { docxBomb, docxOf, pdfOf } from '../../support/documents'

const limits = { timeoutMs: 60_000, memoryMb: 128, maxChars: 1_000_000 }
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
const text = (value: string) => new TextEncoder().encode(value)

describe('reading a document file', () => {
  it('reads a PDF page by page', async () => {
    const read = await readDocument(pdfOf(['Travel policy', 'Meals are refunded up to 40 euros.']), 'application/pdf', limits)
    expect(read).toEqual({ kind: 'pages', pages: ['Travel policy', 'Meals are refunded up to 40 euros.'] })
  })

  it('reads a Word document and an HTML page as Markdown, headings kept, scripts and styles dropped', async () => {
    expect(await readDocument(docxOf(['# Handbook', 'Welcome.', '## Travel', 'Trains & buses.']), DOCX, limits)).toEqual({ kind: 'markdown', text: '# Handbook\n\nWelcome.\n\n## Travel\n\nTrains & buses.' })
    const html = await readDocument(text('<html><head><style>p{}</style></head><body><h1>Title</h1><p>Hello <b>there</b></p><script>alert(1)</script></body></html>'), 'text/html', limits)
    expect(html).toEqual({ kind: 'markdown', text: '# Title\n\nHello **there**' })
  })

  it('reads CSV with quoted cells and a semicolon delimiter, and text without its byte-order mark', async () => {
    expect(await readDocument(text('name,city\n"Smith, J","Paris ""centre"""\nDoe,Berlin\n'), 'text/csv', limits)).toEqual({ kind: 'table', header: ['name', 'city'], rows: [['Smith, J', 'Paris "centre"'], ['Doe', 'Berlin']] })
    expect(await readDocument(text('a;b\n1;2'), 'text/csv', limits)).toEqual({ kind: 'table', header: ['a', 'b'], rows: [['1', '2']] })
    expect(await readDocument(text('\uFEFFplain words'), 'text/plain', limits)).toEqual({ kind: 'markdown', text: 'plain words' })
  })

  it('refuses a broken PDF, a too long text and a zip bomb with a message, and the server keeps answering meanwhile', async () => {
    await expect(readDocument(text('%PDF-1.4 not really'), 'application/pdf', limits)).rejects.toThrow(/This PDF could not be read: /)
    await expect(readDocument(text('x'.repeat(2_000)), 'text/plain', { ...limits, maxChars: 1_000 })).rejects.toThrow('more than 1,000 characters of text')
    let ticks = 0
    const ticking = setInterval(() => ticks++, 5)
    try {
      await expect(readDocument(docxBomb(160), DOCX, { ...limits, memoryMb: 64 })).rejects.toThrow('needed more than 64 MiB of memory')
    } finally {
      clearInterval(ticking)
    }
    // The event loop ran while the bomb went off in its own process.
    expect(ticks).toBeGreaterThan(0)
  }, 120_000)

  it('ends a read that takes too long', async () => {
    await expect(readDocument(docxBomb(40), DOCX, { ...limits, memoryMb: 2_048, timeoutMs: 1 })).rejects.toThrow('took longer than 1 s, so it was stopped')
  })

  it('knows a file\'s type by its extension, else by what the browser said', () => {
    expect(knowledgeFileTypeOf('Handbook.PDF')).toBe('application/pdf')
    expect(knowledgeFileTypeOf('notes.md', 'application/octet-stream')).toBe('text/markdown')
    expect(knowledgeFileTypeOf('export', 'text/csv; charset=utf-8')).toBe('text/csv')
    expect(knowledgeFileTypeOf('photo.png', 'image/png')).toBeUndefined()
  })
})
