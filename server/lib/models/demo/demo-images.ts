/**
 * The offline demo model's pictures: "draw a sunset over the sea", "make an image of a house in a
 * forest" calls `generate_image`; after a picture, "add a moon", "make it night" or "remove the
 * sun" edits the newest one. Only when the tool is offered. One quantifier per pattern, on a
 * message already cut to the demo's 2,000 characters.
 */

export interface ImageCall {
  name: 'generate_image'
  arguments: { prompt: string, edit?: string }
}

const ASK_FOR_PICTURE = /^(?:please\s+|can you\s+|could you\s+)?(?:draw|paint|sketch|generate|create|make|show me)\s+(?:me\s+)?(?:an?\s+|the\s+)?(?:image|picture|drawing|painting|illustration|sketch|photo)?\s*(?:of\s+)?(.{1,400})/i
const PICTURE_WORD = /\b(?:image|picture|drawing|painting|illustration|sketch|photo)\b/i
const EDIT = /^(?:please\s+|now\s+)?(?:add|remove|make it|make the|change|turn it|take away|without|put)\b/i

/** The `generate_image` call `text` asks for, if it asks for a picture (or, after one, a change). */
export function imageCallFor(text: string, offered: ReadonlySet<string>, afterPicture: boolean): ImageCall | undefined {
  if (!offered.has('generate_image')) return undefined
  const ask = ASK_FOR_PICTURE.exec(text)
  if (ask && (/^(?:please\s+)?(?:draw|paint|sketch)\b/i.test(text) || PICTURE_WORD.test(text))) return { name: 'generate_image', arguments: { prompt: text.replace(/[.!?]+$/, '') } }
  if (afterPicture && EDIT.test(text)) return { name: 'generate_image', arguments: { prompt: text.replace(/[.!?]+$/, ''), edit: 'latest' } }
  return undefined
}

/** The demo's words about a picture it made. */
export function describeImageResult(name: string, data: Record<string, unknown>): string | undefined {
  if (name !== 'generate_image') return undefined
  const count = Array.isArray(data.images) ? data.images.length : 0
  const what = typeof data.modelText === 'string' ? data.modelText : 'A picture.'
  return `${data.edited ? 'Here it is, changed' : 'Here is your picture'}: ${what.charAt(0).toLowerCase()}${what.slice(1)}${count > 1 ? ` (${count} images)` : ''} Ask me to add or remove something (a moon, clouds, a boat) or to make it night, and I will change it.`
}
