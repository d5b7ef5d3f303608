/**
 * Files sent with a message: images (shown to models that read images) and text files (given to
 * the model as text). The bytes are stored with the thread; a message names its files.
 */

/** What a file is to the model: an image it looks at, or text it reads. */
export type AttachmentKind = 'image' | 'text'

/** A file of a message, as the thread stores and the app shows it. */
export interface MessageAttachment {
  id: string
  /** The file's name as the person's device gave it (cleaned: no path, no control characters). */
  name: string
  /** Its media type, checked against its content (an image's first bytes, text that is UTF-8). */
  mediaType: string
  kind: AttachmentKind
  /** Its size in bytes. */
  size: number
}

/** The limits of attachments, which the server enforces and the composer checks first (`runtimeConfig.public.attachments`). */
export interface AttachmentLimits {
  /** Files per message (0 switches attachments off). */
  maxFiles: number
  maxImageBytes: number
  maxTextBytes: number
}
