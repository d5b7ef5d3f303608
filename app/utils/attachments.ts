/**
 * Files picked in the composer: checked against the server's limits before anything is sent (the
 * server checks again, by the files' bytes), read as base64 for the message body, and named with
 * their sizes for people.
 */
import type { AttachmentLimits } from '../../shared/types/attachment'
import { fileSize, tr } from './i18n'

/** The limits the composer checks, with the accepted media types (`runtimeConfig.public.attachments`). */
export type ComposerAttachmentRules = AttachmentLimits & { types: string }

/** A file waiting in the composer. */
export interface PendingFile {
  /** Local key for the list. */
  key: string
  file: File
  /** An image to show as a thumbnail (a `blob:` URL, revoked when the file is removed). */
  previewUrl?: string
}

const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif']
/** Extensions offered for text files (any UTF-8 text is taken; these make the picker show them). */
const TEXT_EXTENSIONS = ['.txt', '.md', '.markdown', '.csv', '.json', '.log', '.yaml', '.yml', '.xml', '.ts', '.js', '.py', '.go', '.rs', '.java', '.c', '.cpp', '.h', '.sh', '.sql', '.toml', '.ini', '.vue', '.css']

/** Whether the operator's list accepts a media type (exact, or `family/*`). */
function listed(types: string, mediaType: string): boolean {
  return types.split(',').map(type => type.trim().toLowerCase()).some(type => type === mediaType || (type.endsWith('/*') && mediaType.startsWith(type.slice(0, -1))))
}

/** Whether `file` is an image by what the browser says of it (the server checks its bytes). */
export function isImageFile(file: Pick<File, 'type'>): boolean {
  return IMAGE_TYPES.includes(file.type)
}

/** The file picker's `accept`: the images and text files the server takes. */
export function acceptAttribute(rules: ComposerAttachmentRules): string {
  const images = IMAGE_TYPES.filter(type => listed(rules.types, type))
  const text = listed(rules.types, 'text/plain') ? ['text/*', 'application/json', ...TEXT_EXTENSIONS] : []
  return [...images, ...text].join(',')
}


/**
 * Why `file` cannot be added to a message holding `count` files already, or undefined when it
 * can. `imagesAccepted`: whether the chosen model reads images.
 */
export function fileProblem(file: Pick<File, 'name' | 'size' | 'type'>, count: number, rules: ComposerAttachmentRules, imagesAccepted: boolean): string | undefined {
  if (rules.maxFiles === 0) return tr('attachments.noAttachments')
  if (count >= rules.maxFiles) return tr('attachments.tooMany', { max: rules.maxFiles })
  if (file.size === 0) return tr('attachments.empty', { name: file.name })
  if (file.type === 'image/svg+xml') return tr('attachments.svg', { name: file.name })
  if (isImageFile(file)) {
    if (!listed(rules.types, file.type)) return tr('attachments.typeRefused', { name: file.name, type: file.type })
    if (!imagesAccepted) return tr('attachments.noImages', { name: file.name })
    if (file.size > rules.maxImageBytes) return tr('attachments.imageTooBig', { name: file.name, size: fileSize(file.size), max: fileSize(rules.maxImageBytes) })
    return undefined
  }
  if (file.type.startsWith('image/') || file.type.startsWith('video/') || file.type.startsWith('audio/')) return tr('attachments.mediaRefused', { name: file.name, type: file.type })
  if (!listed(rules.types, 'text/plain')) return tr('attachments.imagesOnly')
  if (file.size > rules.maxTextBytes) return tr('attachments.textTooBig', { name: file.name, size: fileSize(file.size), max: fileSize(rules.maxTextBytes) })
  return undefined
}

/** Frees the thumbnails of files that are sent or removed (their `blob:` URLs hold the image in memory). */
export function releasePreviews(files: readonly PendingFile[]): void {
  for (const pending of files) if (pending.previewUrl) URL.revokeObjectURL(pending.previewUrl)
}

/** The file's bytes in base64, as the message body carries them. */
export async function fileToBase64(file: Blob): Promise<string> {
  const bytes = new Uint8Array(await file.arrayBuffer())
  let binary = ''
  // In slices: String.fromCharCode with millions of arguments overflows the stack.
  for (let offset = 0; offset < bytes.length; offset += 0x8000) binary += String.fromCharCode(...bytes.subarray(offset, offset + 0x8000))
  return btoa(binary)
}

/** The files of a message as its body sends them. */
export function attachmentsBody(files: readonly PendingFile[]): Promise<Array<{ name: string, data: string }>> {
  return Promise.all(files.map(async pending => ({ name: pending.file.name, data: await fileToBase64(pending.file) })))
}
