/**
 * Small real documents made in the test, for the knowledge-base readers: a PDF of text pages
 * (hand-written PDF 1.4 objects, as any PDF writer makes them), a Word .docx (the zip of XML parts
 * mammoth reads), and a .docx zip bomb (one part that expands to hundreds of megabytes).
 */
import { strToU8, Zip, ZipDeflate, zipSync } from 'fflate'

/** A PDF with one page per entry of `pages`, each line of it a line of text. */
export function pdfOf(pages: string[]): Uint8Array {
  const objects: string[] = []
  const add = (body: string) => objects.push(body)
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>')
  const pagesId = 2 + pages.length * 2
  const pageIds: number[] = []
  for (const text of pages) {
    const stream = text.split('\n').map((line, index) => `BT /F1 12 Tf 72 ${720 - index * 16} Td (${line.replace(/[()\\]/g, '\\$&')}) Tj ET`).join('\n')
    add(`<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`)
    add(`<< /Type /Page /Parent ${pagesId} 0 R /MediaBox [0 0 612 792] /Contents ${objects.length} 0 R /Resources << /Font << /F1 1 0 R >> >> >>`)
    pageIds.push(objects.length)
  }
  add(`<< /Type /Pages /Kids [${pageIds.map(id => `${id} 0 R`).join(' ')}] /Count ${pageIds.length} >>`)
  add(`<< /Type /Catalog /Pages ${pagesId} 0 R >>`)
  let out = '%PDF-1.4\n'
  const offsets: number[] = []
  objects.forEach((body, index) => {
    offsets.push(out.length)
    out += `${index + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = out.length
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map(offset => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')}`
  out += `trailer\n<< /Size ${objects.length + 1} /Root ${objects.length} 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return new Uint8Array(Buffer.from(out, 'latin1'))
}

const CONTENT_TYPES = '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
const RELS = '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>'

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** A .docx of `blocks`: `# ` and `## ` start headings (Word's Heading 1 and 2 styles), anything else a paragraph. */
export function docxOf(blocks: string[]): Uint8Array {
  const body = blocks.map((block) => {
    const level = /^(#{1,2}) /.exec(block)?.[1]?.length
    const text = level ? block.slice(level + 1) : block
    return `<w:p>${level ? `<w:pPr><w:pStyle w:val="Heading${level}"/></w:pPr>` : ''}<w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r></w:p>`
  }).join('')
  const document = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>${body}</w:body></w:document>`
  return zipSync({ '[Content_Types].xml': strToU8(CONTENT_TYPES), '_rels/.rels': strToU8(RELS), 'word/document.xml': strToU8(document) })
}

/** A .docx whose document part expands to `megabytes` of one repeated paragraph (a few megabytes zipped), compressed a piece at a time. */
export function docxBomb(megabytes: number): Uint8Array {
  const parts: Uint8Array[] = []
  const zip = new Zip((error, chunk) => {
    if (error) throw error
    parts.push(chunk)
  })
  for (const [name, text] of [['[Content_Types].xml', CONTENT_TYPES], ['_rels/.rels', RELS]] as const) {
    const file = new ZipDeflate(name)
    zip.add(file)
    file.push(strToU8(text), true)
  }
  const document = new ZipDeflate('word/document.xml', { level: 1 })
  zip.add(document)
  document.push(strToU8('<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'))
  const piece = strToU8('<w:p><w:r><w:t>boom boom boom boom boom boom boom boom boom boom</w:t></w:r></w:p>'.repeat(16_384))
  for (let written = 0; written < megabytes * 1024 * 1024; written += piece.length) document.push(piece)
  document.push(strToU8('</w:body></w:document>'), true)
  zip.end()
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let offset = 0
  for (const part of parts) {
    out.set(part, offset)
    offset += part.length
  }
  return out
}
