/**
 * Files picked in the composer: checked against the server's limits before anything is sent (the
 * server checks again, by the files' bytes), read as base64 for the message body, and named with
 * their sizes for people.
 */
import type { AttachmentLimits } from '../../shared/types/attachment'

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

/** A size as people read it. */
export function fileSize(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KB`
  return `${bytes} B`
}

/**
 * Why `file` cannot be added to a message holding `count` files already, or undefined when it
 * can. `imagesAccepted`: whether the chosen model reads images.
 */
export function fileProblem(file: Pick<File, 'name' | 'size' | 'type'>, count: number, rules: ComposerAttachmentRules, imagesAccepted: boolean): string | undefined {
  if (rules.maxFiles === 0) return 'This server does not take attachments.'
  if (count >= rules.maxFiles) return `A message may carry at most ${rules.maxFiles} files.`
  if (file.size === 0) return `"${file.name}" is empty.`
  if (file.type === 'image/svg+xml') return `"${file.name}" is an SVG, which is not taken (it can carry script); export it as PNG.`
  if (isImageFile(file)) {
    if (!listed(rules.types, file.type)) return `"${file.name}" is ${file.type}, which this server does not take.`
    if (!imagesAccepted) return `The chosen model does not read images. Pick one that does to send "${file.name}".`
    if (file.size > rules.maxImageBytes) return `"${file.name}" is ${fileSize(file.size)}; images may be at most ${fileSize(rules.maxImageBytes)}.`
    return undefined
  }
  if (file.type.startsWith('image/') || file.type.startsWith('video/') || file.type.startsWith('audio/')) return `"${file.name}" is ${file.type}; attach PNG, JPEG, GIF or WebP images, or text files.`
  if (!listed(rules.types, 'text/plain')) return 'This server takes images only.'
  if (file.size > rules.maxTextBytes) return `"${file.name}" is ${fileSize(file.size)}; text files may be at most ${fileSize(rules.maxTextBytes)}.`
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
