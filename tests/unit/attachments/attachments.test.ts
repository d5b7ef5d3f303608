import { describe, expect, it } from 'vitest'
import { acceptAttachment, acceptAttachments, cleanFileName, expandAttachments, typeAccepted, userTurn, type AttachmentRules } from '../../../server/lib/attachments/attachments'
import { describeFiles, filesIn, imageSize } from '../../../server/lib/models/demo/demo-files'
import { planDemoReply } from '../../../server/lib/models/demo/demo-planner'
import type { MessageAttachment } from '../../../shared/types/attachment'

const rules: AttachmentRules = { maxFiles: 2, maxImageBytes: 64 * 1024, maxTextBytes: 8 * 1024, types: 'image/png,image/jpeg,image/webp,image/gif,text/*' }
const b64 = (bytes: Uint8Array | string) => Buffer.from(bytes).toString('base64')

/** A minimal PNG header of `width` × `height` (signature + IHDR), enough for type and size. */
function png(width: number, height: number, extra = 0): Uint8Array {
  const bytes = new Uint8Array(33 + extra)
  bytes.set([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
  new DataView(bytes.buffer).setUint32(16, width)
  new DataView(bytes.buffer).setUint32(20, height)
  return bytes
}

describe('accepting files', () => {
  it('takes an image for what its bytes are, whatever its name says', () => {
    const accepted = acceptAttachment({ name: 'C:\\Users\\me\\holiday.txt', data: b64(png(640, 480)) }, rules)
    expect(accepted.attachment).toEqual({ name: 'holiday.txt', mediaType: 'image/png', kind: 'image', size: 33 })
    const jpeg = acceptAttachment({ name: 'a.jpg', data: b64(new Uint8Array([0xFF, 0xD8, 0xFF, 0xE0, 0, 16])) }, rules)
    expect(jpeg.attachment.mediaType).toBe('image/jpeg')
  })

  it('takes UTF-8 text as a text file typed by its extension, and refuses binaries, SVG and types the operator left out', () => {
    expect(acceptAttachment({ name: 'notes.md', data: b64('# Shopping\n- eggs') }, rules).attachment).toMatchObject({ kind: 'text', mediaType: 'text/markdown' })
    expect(acceptAttachment({ name: 'data.csv', data: b64('a,b\n1,2') }, rules).attachment.mediaType).toBe('text/csv')
    expect(acceptAttachment({ name: 'page.html', data: b64('<script>alert(1)</script>') }, rules).attachment.mediaType).toBe('text/plain')
    expect(() => acceptAttachment({ name: 'tool.exe', data: b64(new Uint8Array([0x4D, 0x5A, 0, 0, 0xFF])) }, rules)).toThrow(expect.objectContaining({ statusCode: 415, message: expect.stringMatching(/"tool\.exe" is neither an image/) }))
    expect(() => acceptAttachment({ name: 'bad.txt', data: b64(new Uint8Array([0xC3, 0x28])) }, rules)).toThrow(expect.objectContaining({ statusCode: 415 }))
    // An SVG is text to this app: it is stored and served as plain text, never as an image.
    expect(acceptAttachment({ name: 'logo.svg', data: b64('<svg onload="alert(1)"/>') }, rules).attachment).toMatchObject({ kind: 'text', mediaType: 'text/plain' })
    expect(() => acceptAttachment({ name: 'p.png', data: b64(png(1, 1)) }, { ...rules, types: 'text/*' })).toThrow(expect.objectContaining({ statusCode: 415, message: expect.stringContaining('does not accept') }))
    expect(typeAccepted('text/*', 'application/json')).toBe(true)
    expect(typeAccepted('image/png', 'image/gif')).toBe(false)
  })

  it('refuses what is too large, too many, empty, or not base64, naming the file', () => {
    expect(() => acceptAttachment({ name: 'big.png', data: b64(png(1, 1, 70 * 1024)) }, rules)).toThrow(expect.objectContaining({ statusCode: 413, message: expect.stringMatching(/"big\.png" is larger than 64 KiB/) }))
    expect(() => acceptAttachment({ name: 'big.png', data: b64(png(1, 1, 70 * 1024)) }, { ...rules, maxTextBytes: 128 * 1024 })).toThrow(expect.objectContaining({ statusCode: 413, message: expect.stringMatching(/"big\.png" is 71 KiB; images may be at most 64 KiB/) }))
    expect(() => acceptAttachment({ name: 'long.txt', data: b64('x'.repeat(9 * 1024)) }, rules)).toThrow(expect.objectContaining({ statusCode: 413, message: expect.stringMatching(/text files may be at most 8 KiB/) }))
    expect(() => acceptAttachment({ name: 'huge', data: 'A'.repeat(1024 * 1024) }, rules)).toThrow(expect.objectContaining({ statusCode: 413 }))
    expect(() => acceptAttachment({ name: 'x.txt', data: 'not base64!' }, rules)).toThrow(expect.objectContaining({ statusCode: 400 }))
    expect(() => acceptAttachments([{ name: 'a', data: b64('a') }, { name: 'b', data: b64('b') }, { name: 'c', data: b64('c') }], rules)).toThrow(/at most 2 files; this one has 3/)
    expect(() => acceptAttachments([{ name: 'a', data: b64('a') }], { ...rules, maxFiles: 0 })).toThrow(/does not take attachments/)
  })

  it('cleans names: no path, no control or direction-override characters, bounded', () => {
    expect(cleanFileName('../../etc/passwd')).toBe('passwd')
    expect(cleanFileName('evil\u202Egnp.exe')).toBe('evilgnp.exe')
    expect(cleanFileName('a\u0000b\nc.txt')).toBe('abc.txt')
    expect(cleanFileName('..')).toBe('file')
    const long = cleanFileName(`${'x'.repeat(300)}.md`)
    expect(long.length).toBeLessThanOrEqual(120)
    expect(long.endsWith('….md')).toBe(true)
  })
})

describe('files in model requests', () => {
  const image: MessageAttachment = { id: 'img', name: 'p.png', mediaType: 'image/png', kind: 'image', size: 33 }
  const text: MessageAttachment = { id: 'txt', name: 'n"<x>.md', mediaType: 'text/markdown', kind: 'text', size: 5 }

  it('keeps references in the conversation and puts each file\'s content in only when the model is asked, reading each once', async () => {
    const turn = userTurn('What are these?', [image, text])
    expect(turn).toEqual({ role: 'user', content: [{ type: 'text', text: 'What are these?' }, { type: 'or3_attachment', id: 'img' }, { type: 'or3_attachment', id: 'txt' }] })
    expect(userTurn('plain', [])).toEqual({ role: 'user', content: 'plain' })
    const reads: string[] = []
    const read = async (id: string) => {
      reads.push(id)
      if (id === 'img') return { attachment: image, bytes: png(2, 3) }
      if (id === 'txt') return { attachment: text, bytes: new TextEncoder().encode('hello') }
      return null
    }
    const cache = new Map()
    const messages = [turn, { role: 'assistant' as const, content: 'ok' }, userTurn('again', [{ ...image, id: 'gone' }])]
    const expanded = await expandAttachments(messages, read, cache)
    await expandAttachments(messages, read, cache)
    expect(reads).toEqual(['img', 'txt', 'gone'])
    expect(expanded[0]!.content).toEqual([
      { type: 'text', text: 'What are these?' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(png(2, 3))}` } },
      { type: 'text', text: '<file name="nx.md" type="text/markdown">\nhello\n</file>' },
    ])
    expect(expanded[2]!.content).toEqual([{ type: 'text', text: 'again' }, { type: 'text', text: '[An attached file is no longer available.]' }])
    expect(messages[0]).toEqual(turn)
  })

  it('the demo model says what it received: format, pixels, lines, words', async () => {
    const jpeg = new Uint8Array([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0, 0, 0xFF, 0xC0, 0x00, 0x11, 0x08, 0x01, 0xE0, 0x02, 0x80, 0x03])
    expect(imageSize(jpeg)).toEqual({ width: 640, height: 480 })
    expect(imageSize(png(1920, 1080))).toEqual({ width: 1920, height: 1080 })
    const gif = new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 10, 0, 20, 0])
    expect(imageSize(gif)).toEqual({ width: 10, height: 20 })
    const turn = { role: 'user' as const, content: [
      { type: 'text', text: 'What is in these? what is 2+2' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${b64(png(800, 600))}` } },
      { type: 'text', text: '<file name="list.csv" type="text/csv">\nname,qty\neggs,12\nmilk,1\n</file>' },
    ] }
    expect(filesIn(turn.content)).toHaveLength(2)
    const plan = planDemoReply({ messages: [turn] })
    expect(plan).toMatchObject({ kind: 'text' })
    const text = (plan as { text: string }).text
    expect(text).toContain('I received 2 files')
    expect(text).toContain('a PNG image, 800 × 600 pixels, 33 bytes')
    expect(text).toContain('**list.csv**: a CSV table, 3 lines, 3 words, 2 rows under a header of 2 columns')
    expect(text).toContain('not what a picture shows')
    expect(describeFiles([{ kind: 'text', name: 'a.txt', mediaType: 'text/plain', text: '' }])).toContain('0 lines')
  })
})
