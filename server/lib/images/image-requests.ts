/**
 * One image request to an image-output model: OpenRouter's chat completions with
 * `modalities: ["image", "text"]` (a compatible server the same way), the prompt and the images to
 * edit as the user's turn. The answer is read bounded (its size before it is parsed), and only
 * inline images are taken (`data:` URLs of PNG, JPEG, GIF or WebP, checked by their bytes): a link
 * the model answers with is never fetched.
 */
import { buildRequestHeaders, endpointUrl, type ChatClientOptions, type ChatEndpoint } from '../openrouter/chat-client'
import { fetchWithRetry } from '../openrouter/fetch-with-retry'
import { OpenRouterError } from '../openrouter/errors'
import { readTextUpTo } from '../bounded-body'
import { imageTypeOf } from '../attachments/attachments'
import type { Usage } from '../../../shared/types/chat'
import { toUsage } from '../openrouter/stream-parser'

/** An image given to the model or made by it. */
export interface ImageBytes {
  mediaType: string
  bytes: Uint8Array
}

export interface ImageRequest {
  model: string
  prompt: string
  /** Images to edit (given to the model with the prompt). */
  sources: ImageBytes[]
  /** Largest image taken; a larger one fails the request. */
  maxImageBytes: number
  /** Images taken from one answer at most (the rest are dropped). */
  maxImages: number
  signal?: AbortSignal
}

export interface ImageAnswer {
  images: ImageBytes[]
  /** What the model said besides its images. */
  text: string
  usage?: Usage
}

type ImageCompletion = {
  choices?: Array<{ message?: { content?: unknown, images?: Array<{ image_url?: { url?: unknown } }> } }>
  usage?: Parameters<typeof toUsage>[0]
  error?: { message?: string }
}

const DATA_URL = /^data:(image\/[a-z0-9.+-]{1,40});base64,/i

/** The image a `data:` URL holds, checked by its bytes; why not, otherwise. */
function imageOfDataUrl(url: string, maxImageBytes: number): ImageBytes | string {
  const header = DATA_URL.exec(url.slice(0, 80))
  if (!header) return /^https?:/i.test(url) ? 'the model answered with a link instead of an image (links are not fetched)' : 'the model answered with something that is not an image'
  const base64 = url.slice(header[0].length)
  if (base64.length > Math.ceil(maxImageBytes / 3) * 4 + 4) return `the image is larger than ${Math.round(maxImageBytes / 1024 / 1024)} MiB`
  const bytes = new Uint8Array(Buffer.from(base64, 'base64'))
  const mediaType = imageTypeOf(bytes)
  if (!mediaType) return 'the model\'s image is not a PNG, JPEG, GIF or WebP file'
  return { mediaType, bytes }
}

/** Asks `endpoint` for images (see the module comment); throws an `OpenRouterError` saying what failed. */
export async function requestImages(endpoint: ChatEndpoint, request: ImageRequest, client: Pick<ChatClientOptions, 'retry' | 'appUrl' | 'appTitle'>): Promise<ImageAnswer> {
  const content = [
    { type: 'text', text: request.prompt },
    ...request.sources.map(source => ({ type: 'image_url', image_url: { url: `data:${source.mediaType};base64,${Buffer.from(source.bytes).toString('base64')}` } })),
  ]
  const response = await fetchWithRetry(endpointUrl(endpoint.baseUrl, 'chat/completions'), {
    method: 'POST',
    headers: { ...buildRequestHeaders(endpoint, client), Accept: 'application/json' },
    body: JSON.stringify({ model: request.model, messages: [{ role: 'user', content }], modalities: ['image', 'text'], stream: false, usage: { include: true } }),
  }, { label: endpoint.label, policy: client.retry, signal: request.signal, fetch: endpoint.fetch })
  // Base64 is 4/3 of the bytes; room for each image taken and the words around them.
  const body = await readTextUpTo(response, Math.ceil(request.maxImageBytes * 4 / 3) * request.maxImages + 1_000_000)
  if (body === undefined) throw new OpenRouterError({ kind: 'stream_error', message: `${endpoint.label}: the answer was larger than ${request.maxImages} images of ${Math.round(request.maxImageBytes / 1024 / 1024)} MiB` })
  let parsed: ImageCompletion
  try {
    parsed = JSON.parse(body) as ImageCompletion
  } catch {
    throw new OpenRouterError({ kind: 'stream_error', message: `${endpoint.label}: the image model's answer was not JSON` })
  }
  if (parsed.error) throw new OpenRouterError({ kind: 'stream_error', message: `${endpoint.label}: ${String(parsed.error.message ?? 'the image model failed').slice(0, 500)}` })
  const message = parsed.choices?.[0]?.message
  const images: ImageBytes[] = []
  let refused: string | undefined
  for (const part of (Array.isArray(message?.images) ? message.images : []).slice(0, request.maxImages)) {
    const url = part?.image_url?.url
    const image = typeof url === 'string' ? imageOfDataUrl(url, request.maxImageBytes) : 'the model answered without an image'
    if (typeof image === 'string') refused ??= image
    else images.push(image)
  }
  const text = typeof message?.content === 'string' ? message.content.slice(0, 4_000) : ''
  if (images.length === 0) throw new OpenRouterError({ kind: 'stream_error', message: `${endpoint.label}: ${refused ?? (text ? `no image came back; the model said: ${text.slice(0, 300)}` : 'no image came back; is the model one that makes images?')}` })
  return { images, text, ...(parsed.usage ? { usage: toUsage(parsed.usage) } : {}) }
}
