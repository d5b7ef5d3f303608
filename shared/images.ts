/**
 * Images an answer made with the `generate_image` tool: what its result says about them, read by
 * the server (the answer's files when it is written back) and by the app (the tool's card shows
 * them). One reader of one shape, so both agree on what an answer made.
 */
import type { MessageAttachment } from './types/attachment'

export const GENERATE_IMAGE_TOOL = 'generate_image'

/** What `generate_image` answers the model. */
export interface GenerateImageResult {
  images: MessageAttachment[]
  /** The prompt the image was made from. */
  prompt: string
  /** What the image model said besides the image, if anything. */
  modelText?: string
  /** The image edited, when it was an edit. */
  edited?: string
  /** For the model: the person sees it already, and how to change it. */
  note: string
}

const MAX_IMAGES_READ = 8

/** The images a `generate_image` result names and the prompt they were made from (none when it is not one: an error, a cut result). */
export function generatedImagesOf(result: string | undefined): { images: MessageAttachment[], prompt: string } {
  const none = { images: [], prompt: '' }
  if (!result || result.length > 20_000 || !result.trimStart().startsWith('{')) return none
  let parsed: unknown
  try {
    parsed = JSON.parse(result)
  } catch {
    return none
  }
  const { images, prompt } = (parsed ?? {}) as { images?: unknown, prompt?: unknown }
  if (!Array.isArray(images)) return none
  return {
    prompt: typeof prompt === 'string' ? prompt.slice(0, 300) : '',
    images: images.slice(0, MAX_IMAGES_READ).flatMap((image): MessageAttachment[] => {
      const { id, name, mediaType, size } = (image ?? {}) as Record<string, unknown>
      if (typeof id !== 'string' || !/^[\w-]{1,100}$/.test(id) || typeof name !== 'string' || typeof mediaType !== 'string' || typeof size !== 'number') return []
      if (!mediaType.startsWith('image/')) return []
      return [{ id, name: name.slice(0, 200), mediaType, size, kind: 'image' }]
    }),
  }
}
