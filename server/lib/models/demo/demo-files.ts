/**
 * What the offline demo model says about files it was sent: for an image, its format, size and
 * pixel dimensions (read from its header); for a text file, its name, type, lines, words and how
 * it begins. It cannot see what a picture shows, and says so.
 */
import { fileInTextPart } from '../../attachments/attachments'

/** A file as the demo model received it in a user turn's content parts. */
export type ReceivedFile =
  | { kind: 'image', mediaType: string, bytes: Uint8Array }
  | { kind: 'text', name: string, mediaType: string, text: string }

/** The files among a user turn's content parts. */
export function filesIn(parts: ReadonlyArray<Record<string, unknown>>): ReceivedFile[] {
  const files: ReceivedFile[] = []
  for (const part of parts) {
    if (part.type === 'image_url') {
      const url = (part.image_url as { url?: unknown } | undefined)?.url
      const match = typeof url === 'string' ? /^data:(image\/[\w.+-]+);base64,/.exec(url.slice(0, 100)) : null
      if (match) files.push({ kind: 'image', mediaType: match[1]!, bytes: new Uint8Array(Buffer.from((url as string).slice(match[0].length), 'base64')) })
    } else if (part.type === 'text' && typeof part.text === 'string') {
      const file = fileInTextPart(part.text)
      if (file) files.push({ kind: 'text', ...file })
    }
  }
  return files
}

/** Width and height from an image's header (PNG, GIF, WebP, JPEG), if it says. */
export function imageSize(bytes: Uint8Array): { width: number, height: number } | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (bytes.length >= 24 && bytes[0] === 0x89 && bytes[1] === 0x50) return { width: view.getUint32(16), height: view.getUint32(20) }
  if (bytes.length >= 10 && bytes[0] === 0x47 && bytes[1] === 0x49) return { width: view.getUint16(6, true), height: view.getUint16(8, true) }
  if (bytes.length >= 30 && bytes[8] === 0x57 && bytes[9] === 0x45) {
    const chunk = String.fromCharCode(bytes[12]!, bytes[13]!, bytes[14]!, bytes[15]!)
    if (chunk === 'VP8X') return { width: 1 + (bytes[24]! | bytes[25]! << 8 | bytes[26]! << 16), height: 1 + (bytes[27]! | bytes[28]! << 8 | bytes[29]! << 16) }
    if (chunk === 'VP8 ') return { width: view.getUint16(26, true) & 0x3FFF, height: view.getUint16(28, true) & 0x3FFF }
    if (chunk === 'VP8L') {
      const bits = view.getUint32(21, true)
      return { width: (bits & 0x3FFF) + 1, height: ((bits >> 14) & 0x3FFF) + 1 }
    }
    return undefined
  }
  if (bytes[0] === 0xFF && bytes[1] === 0xD8) {
    // Walk the JPEG's segments to its frame header (SOF0…SOF15 but DHT, JPG, DAC), within the first 256 KiB.
    let offset = 2
    const end = Math.min(bytes.length, 256 * 1024)
    while (offset + 9 < end) {
      if (bytes[offset] !== 0xFF) return undefined
      const marker = bytes[offset + 1]!
      const length = view.getUint16(offset + 2)
      if (marker >= 0xC0 && marker <= 0xCF && marker !== 0xC4 && marker !== 0xC8 && marker !== 0xCC) {
        return { width: view.getUint16(offset + 7), height: view.getUint16(offset + 5) }
      }
      if (length < 2) return undefined
      offset += 2 + length
    }
  }
  return undefined
}

const sizeText = (bytes: number) => bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MB` : bytes >= 1024 ? `${Math.round(bytes / 1024)} KB` : `${bytes} bytes`
const FORMATS: Record<string, string> = { 'image/png': 'PNG', 'image/jpeg': 'JPEG', 'image/gif': 'GIF', 'image/webp': 'WebP' }
const TEXT_KINDS: Record<string, string> = { 'text/markdown': 'Markdown text', 'text/csv': 'a CSV table', 'application/json': 'JSON' }

/**
 * Counts lines and words in `text` in one pass, reading at most its first 300,000 characters. A
 * newline ends a line, so the one most files end with does not start another.
 */
export function countText(text: string): { lines: number, words: number } {
  const end = Math.min(text.length, 300_000)
  let lines = end > 0 && text.charCodeAt(end - 1) !== 10 ? 1 : 0
  let words = 0
  let inWord = false
  for (let index = 0; index < end; index++) {
    const code = text.charCodeAt(index)
    if (code === 10) lines++
    const space = code === 32 || code === 9 || code === 10 || code === 13
    if (!space && !inWord) words++
    inWord = !space
  }
  return { lines, words }
}

/** One line about one file. */
function describeFile(file: ReceivedFile, index: number): string {
  if (file.kind === 'image') {
    const size = imageSize(file.bytes)
    return `- Image ${index + 1}: a ${FORMATS[file.mediaType] ?? file.mediaType} image${size ? `, ${size.width} × ${size.height} pixels` : ''}, ${sizeText(file.bytes.length)}.`
  }
  const { lines, words } = countText(file.text)
  const opening = file.text.slice(0, 200).replace(/\s+/g, ' ').trim().slice(0, 80)
  const kind = TEXT_KINDS[file.mediaType] ?? 'plain text'
  const csv = file.mediaType === 'text/csv' ? `, ${Math.max(0, lines - 1)} rows under a header of ${(file.text.slice(0, 2_000).split('\n')[0] ?? '').split(',').length} columns` : ''
  return `- **${file.name.replace(/[*_`[\]]/g, '')}**: ${kind}, ${lines} line${lines === 1 ? '' : 's'}, ${words} word${words === 1 ? '' : 's'}${csv}${opening ? `, beginning “${opening.replace(/[*_`[\]<>]/g, '')}${file.text.length > 80 ? '…' : ''}”` : ''}.`
}

/** The demo model's answer to a message with files. */
export function describeFiles(files: readonly ReceivedFile[]): string {
  const images = files.some(file => file.kind === 'image')
  return [
    `I received ${files.length === 1 ? 'one file' : `${files.length} files`}:`,
    ...files.map(describeFile),
    '',
    images
      ? 'I am the offline demo model: I can tell what the files are, not what a picture shows. Choose a model that reads images (with an OpenRouter key in Settings) to ask about its content.'
      : 'I am the offline demo model: I can describe the files, not read them closely. Choose a real model (with an OpenRouter key in Settings) to ask about what they say.',
  ].join('\n')
}
