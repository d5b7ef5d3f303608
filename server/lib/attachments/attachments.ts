/**
 * Files sent with a message. Each arrives base64-encoded in the message's body and is accepted
 * only for what its bytes are: an image by its signature (PNG, JPEG, GIF, WebP; never SVG, which
 * can carry script), a text file by being UTF-8 without NUL bytes. The name is cleaned, sizes and
 * counts are bounded, and the operator's list of types can narrow what is accepted.
 *
 * A stored message names its files; the job's request carries only references
 * (`{ type: 'or3_attachment', id }`), which become the model's content parts (an image as a data
 * URL, a text file as text) just before each model request, so a job record stays small however
 * large its files are.
 */
import { z } from 'zod'
import type { ChatMessage } from '../openrouter/types'
import type { AttachmentKind, AttachmentLimits, MessageAttachment } from '../../../shared/types/attachment'
import { DomainError, type HttpAnswer } from '../domain-error'

/** A file as the composer sends it. */
export const incomingAttachmentSchema = z.object({
  name: z.string().max(1_000),
  /** The file's bytes, base64. */
  data: z.string().min(1, 'the file is empty'),
}).strict()
export type IncomingAttachment = z.output<typeof incomingAttachmentSchema>

/** The limits of attachments with the operator's accepted types (comma-separated media types, `text/*` for any text). */
export type AttachmentRules = AttachmentLimits & { types: string }

/** A file accepted for storage: its description and bytes. */
export interface AcceptedAttachment {
  attachment: Omit<MessageAttachment, 'id'>
  bytes: Uint8Array
}

/** Why a file was refused: 400 (what to change), 413 too large, 415 a type not accepted. */
export class AttachmentError extends DomainError {
  readonly statusCode: 400 | 413 | 415
  constructor(message: string, statusCode: 400 | 413 | 415) {
    super(message)
    this.name = 'AttachmentError'
    this.statusCode = statusCode
  }

  httpAnswer(): HttpAnswer {
    const statusMessage = this.statusCode === 413 ? 'File too large' : this.statusCode === 415 ? 'File type not accepted' : 'Invalid file'
    return { statusCode: this.statusCode, statusMessage, message: this.message }
  }

  static isInstance(error: unknown): error is AttachmentError {
    return error instanceof Error && error.name === 'AttachmentError'
  }
}

/** The longest file name kept. */
const MAX_NAME_CHARS = 120

/** A file name without any path, control or bidirectional-override characters, at most 120 characters. */
export function cleanFileName(name: string): string {
  const base = name.split(/[/\\]/).pop() ?? ''
  // eslint-disable-next-line no-control-regex
  const clean = base.replace(/[\u0000-\u001F\u007F\u202A-\u202E\u2066-\u2069]/g, '').replace(/\s+/g, ' ').trim()
  if (!clean || clean === '.' || clean === '..') return 'file'
  if (clean.length <= MAX_NAME_CHARS) return clean
  const dot = clean.lastIndexOf('.')
  const extension = dot > 0 && clean.length - dot <= 10 ? clean.slice(dot) : ''
  return `${clean.slice(0, MAX_NAME_CHARS - extension.length - 1)}…${extension}`
}

/** The image type `bytes` begin with, if any this app accepts. */
export function imageTypeOf(bytes: Uint8Array): string | undefined {
  const starts = (...signature: number[]) => signature.every((byte, index) => bytes[index] === byte)
  if (starts(0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A)) return 'image/png'
  if (starts(0xFF, 0xD8, 0xFF)) return 'image/jpeg'
  if (starts(0x47, 0x49, 0x46, 0x38) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) return 'image/gif'
  if (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) return 'image/webp'
  return undefined
}

const TEXT_TYPES: Record<string, string> = { md: 'text/markdown', markdown: 'text/markdown', csv: 'text/csv', json: 'application/json' }

/** The media type of a text file, by its name's extension (anything else is plain text). */
function textTypeOf(name: string): string {
  const extension = /\.([a-z0-9]{1,10})$/i.exec(name)?.[1]?.toLowerCase()
  return (extension && TEXT_TYPES[extension]) ?? 'text/plain'
}

/** The text of `bytes` when they are UTF-8 without NUL bytes (not a binary file), else undefined. */
export function textOf(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return undefined
  }
}

/** Whether the operator's list `types` accepts `mediaType` (exact, or `text/*` for any text type). */
export function typeAccepted(types: string, mediaType: string): boolean {
  return types.split(',').map(type => type.trim().toLowerCase()).some(type => type === mediaType
    || (type.endsWith('/*') && mediaType.startsWith(type.slice(0, -1)))
    || (type === 'text/*' && mediaType === 'application/json'))
}

const kib = (bytes: number) => bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(1)} MiB` : `${Math.ceil(bytes / 1024)} KiB`

/** The largest base64 text that can hold `bytes` bytes. */
export function base64Length(bytes: number): number {
  return Math.ceil(bytes / 3) * 4
}

/** Checks one incoming file against `rules`; throws `AttachmentError` saying what to change. */
export function acceptAttachment(input: IncomingAttachment, rules: AttachmentRules): AcceptedAttachment {
  const name = cleanFileName(input.name)
  const largest = Math.max(rules.maxImageBytes, rules.maxTextBytes)
  if (input.data.length > base64Length(largest) + 4) throw new AttachmentError(`"${name}" is larger than ${kib(largest)}, the largest file this server takes.`, 413)
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(input.data)) throw new AttachmentError(`"${name}": data must be the file's bytes in base64.`, 400)
  const bytes = new Uint8Array(Buffer.from(input.data, 'base64'))
  if (bytes.length === 0) throw new AttachmentError(`"${name}" is empty.`, 400)
  const image = imageTypeOf(bytes)
  let kind: AttachmentKind
  let mediaType: string
  if (image) {
    kind = 'image'
    mediaType = image
    if (bytes.length > rules.maxImageBytes) throw new AttachmentError(`"${name}" is ${kib(bytes.length)}; images may be at most ${kib(rules.maxImageBytes)}.`, 413)
  } else {
    if (textOf(bytes) === undefined) throw new AttachmentError(`"${name}" is neither an image (PNG, JPEG, GIF, WebP) nor a text file; attach one of those.`, 415)
    kind = 'text'
    mediaType = textTypeOf(name)
    if (bytes.length > rules.maxTextBytes) throw new AttachmentError(`"${name}" is ${kib(bytes.length)}; text files may be at most ${kib(rules.maxTextBytes)}.`, 413)
  }
  if (!typeAccepted(rules.types, mediaType)) throw new AttachmentError(`"${name}" is ${mediaType}, which this server does not accept (it takes ${rules.types}).`, 415)
  return { attachment: { name, mediaType, kind, size: bytes.length }, bytes }
}

/** Checks the files of one message: how many, then each (see `acceptAttachment`). */
export function acceptAttachments(inputs: readonly IncomingAttachment[], rules: AttachmentRules): AcceptedAttachment[] {
  if (inputs.length > 0 && rules.maxFiles === 0) throw new AttachmentError('This server does not take attachments.', 400)
  if (inputs.length > rules.maxFiles) throw new AttachmentError(`A message may carry at most ${rules.maxFiles} files; this one has ${inputs.length}.`, 400)
  return inputs.map(input => acceptAttachment(input, rules))
}

/** The part of a job's request that stands for a stored file until the model request. */
export type AttachmentReference = { type: 'or3_attachment', id: string }

/** A user turn with its files as references: the text first, then one reference per file. */
export function userTurn(content: string, attachments: readonly MessageAttachment[] | undefined): ChatMessage {
  if (!attachments?.length) return { role: 'user', content }
  return { role: 'user', content: [...(content ? [{ type: 'text', text: content }] : []), ...attachments.map((attachment): AttachmentReference => ({ type: 'or3_attachment', id: attachment.id }))] }
}

/** A stored file as the model is given it. */
export interface StoredAttachmentContent {
  attachment: MessageAttachment
  bytes: Uint8Array
}

/** How a text file is put before the model: its name and type, then its text. */
export function textFilePart(attachment: Pick<MessageAttachment, 'name' | 'mediaType'>, text: string): { type: 'text', text: string } {
  const name = attachment.name.replace(/["<>]/g, '')
  return { type: 'text', text: `<file name="${name}" type="${attachment.mediaType}">\n${text}\n</file>` }
}

const FILE_PART_HEADER = /^<file name="([^"]*)" type="([^"]*)">\n/

/** Whether a text part is a file `textFilePart` made (not words a person wrote). */
export function isTextFilePart(text: string): boolean {
  return FILE_PART_HEADER.test(text.slice(0, 400))
}

/** The file a text part holds when `textFilePart` made it (read from its first 400 characters), else undefined. */
export function fileInTextPart(text: string): { name: string, mediaType: string, text: string } | undefined {
  const header = FILE_PART_HEADER.exec(text.slice(0, 400))
  if (!header) return undefined
  return { name: header[1]!, mediaType: header[2]!, text: text.slice(header[0].length).replace(/\n<\/file>$/, '') }
}

/** The model's content part for a stored file. */
export function modelPart(file: StoredAttachmentContent): Record<string, unknown> {
  if (file.attachment.kind === 'image') {
    return { type: 'image_url', image_url: { url: `data:${file.attachment.mediaType};base64,${Buffer.from(file.bytes).toString('base64')}` } }
  }
  return textFilePart(file.attachment, new TextDecoder().decode(file.bytes))
}

/**
 * `messages` with every file reference replaced by the file's content part (read once per id
 * through `read`); a file no longer there becomes a note saying so.
 */
export async function expandAttachments(
  messages: readonly ChatMessage[],
  read: (id: string) => Promise<StoredAttachmentContent | null>,
  cache = new Map<string, Record<string, unknown>>(),
): Promise<ChatMessage[]> {
  if (!messages.some(message => message.role === 'user' && Array.isArray(message.content) && message.content.some(part => part.type === 'or3_attachment'))) return [...messages]
  const expanded: ChatMessage[] = []
  for (const message of messages) {
    if (message.role !== 'user' || !Array.isArray(message.content)) {
      expanded.push(message)
      continue
    }
    const parts: Array<Record<string, unknown>> = []
    for (const part of message.content) {
      if (part.type !== 'or3_attachment' || typeof part.id !== 'string') {
        parts.push(part)
        continue
      }
      let content = cache.get(part.id)
      if (!content) {
        const file = await read(part.id)
        content = file ? modelPart(file) : { type: 'text', text: '[An attached file is no longer available.]' }
        cache.set(part.id, content)
      }
      parts.push(content)
    }
    expanded.push({ role: 'user', content: parts })
  }
  return expanded
}
