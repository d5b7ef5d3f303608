/**
 * The one way a route reads a JSON body. Every body is hostile until bounded:
 * - the byte limit is enforced while the body streams in (raw-body), so a chunked upload without
 *   a Content-Length is cut off at the limit with a 413, never read whole;
 * - only `application/json` is parsed (415 otherwise), which also keeps HTML forms (urlencoded,
 *   multipart, text/plain: what a cross-site form can send) from starting anything;
 * - nesting deeper than `maxDepth` is refused with a 400 before any code walks it (deep nesting
 *   otherwise overflows the stack in JSON.stringify, a 500);
 * - a body that fails its zod schema gets a 400 naming each field;
 * - with `reserve`, the body's bytes are counted against the client's and the server's bytes in
 *   flight while it is read and parsed (see body-budget.ts): over a cap it is refused before any
 *   of it is read, with a 429 or 503 and Retry-After.
 */
import getRawBody from 'raw-body'
import { createError, getRequestHeader, setResponseHeader, type H3Event } from 'h3'
import { z } from 'zod'
import type { ServerConfig } from '../config/server-config'
import { base64Length } from '../attachments/attachments'
import { OverCapacityError } from './over-capacity'

/** Largest JSON body of the app's routes unless a route says otherwise (1 MiB). */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024
/** The largest body a thread message may have (POST /api/threads/:id/messages): its files (base64) at their limits, plus text and fields. */
export function messageBodyBytes(config: ServerConfig): number {
  const { maxFiles, maxImageBytes, maxTextBytes } = config.public.attachments
  return DEFAULT_MAX_BODY_BYTES + maxFiles * (base64Length(Math.max(maxImageBytes, maxTextBytes)) + 2_048)
}

/** Deepest nesting of arrays and objects accepted in a body. */
export const MAX_JSON_DEPTH = 64

/** How deep arrays and objects nest in `value` (a scalar is 0), stopping once past `limit`. */
export function jsonDepth(value: unknown, limit = Number.POSITIVE_INFINITY): number {
  let deepest = 0
  const stack: Array<[unknown, number]> = [[value, 1]]
  while (stack.length > 0) {
    const [node, depth] = stack.pop()!
    if (typeof node !== 'object' || node === null) continue
    deepest = Math.max(deepest, depth)
    if (deepest > limit) return deepest
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push([child, depth + 1])
    }
  }
  return deepest
}

/** Options of one route's body. */
export interface ReadJsonBodyOptions {
  maxBytes?: number
  /** An empty body reads as `{}` (routes whose fields are all optional). */
  allowEmpty?: boolean
  /** Told the body's text as received, before it is parsed (a webhook checks its signature over it). */
  onText?: (text: string) => void
  /** Reserves the body's bytes for this client while it is read (a BodyBudget bound to the client); returns the release. */
  reserve?: (bytes: number) => () => void
}

/** Reads, bounds and parses the JSON body of `event`, and validates it against `schema`. */
export async function readJsonBody<T extends z.ZodType>(event: H3Event, schema: T, options: ReadJsonBodyOptions = {}): Promise<z.output<T>> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BODY_BYTES
  const contentType = getRequestHeader(event, 'content-type') ?? ''
  const declaredLength = Number(getRequestHeader(event, 'content-length') ?? 0)
  const hasBody = declaredLength > 0 || getRequestHeader(event, 'transfer-encoding') !== undefined || http2StreamHasBody(event)
  if (hasBody && !/^application\/(?:scim\+)?json\s*(;|$)/i.test(contentType)) {
    throw createError({ statusCode: 415, statusMessage: 'Send the body as JSON with "Content-Type: application/json".' })
  }
  if (declaredLength > maxBytes) throw tooLarge(event, maxBytes)
  const release = hasBody && options.reserve ? reserveBody(event, options.reserve, declaredLength > 0 ? declaredLength : maxBytes) : undefined
  try {
    return await readAndParse(event, schema, options, maxBytes, hasBody)
  } finally {
    release?.()
  }
}

/** Over HTTP/2 a body needs no length or chunking: a request has one unless its stream ended with its headers. */
function http2StreamHasBody(event: H3Event): boolean {
  const request = event.node.req as typeof event.node.req & { stream?: { endAfterHeaders?: boolean } }
  return request.httpVersionMajor >= 2 && request.stream?.endAfterHeaders === false
}

function reserveBody(event: H3Event, reserve: (bytes: number) => () => void, bytes: number): () => void {
  try {
    return reserve(bytes)
  } catch (error) {
    if (!OverCapacityError.isInstance(error, 'bodies')) throw error
    setResponseHeader(event, 'Retry-After', error.retryAfterSeconds)
    // The body is not kept: what is left of it is dropped for a moment, then the connection closes.
    lingerOnRefusedBody(event)
    throw createError({ statusCode: error.statusCode, statusMessage: error.message })
  }
}

async function readAndParse<T extends z.ZodType>(event: H3Event, schema: T, options: ReadJsonBodyOptions, maxBytes: number, hasBody: boolean): Promise<z.output<T>> {
  let text = ''
  if (hasBody) {
    try {
      text = await getRawBody(event.node.req, { limit: maxBytes, encoding: 'utf8' })
    } catch (error) {
      if ((error as { type?: string }).type === 'entity.too.large') throw tooLarge(event, maxBytes)
      throw createError({ statusCode: 400, statusMessage: 'The request body could not be read completely; send it again.' })
    }
  }

  options.onText?.(text)
  let raw: unknown
  if (text.trim() === '') {
    if (!options.allowEmpty) throw createError({ statusCode: 400, statusMessage: 'Invalid request: the body is empty; send a JSON object.' })
    raw = {}
  } else {
    try {
      raw = JSON.parse(text)
    } catch {
      throw createError({ statusCode: 400, statusMessage: 'Invalid request: the body is not valid JSON.' })
    }
  }
  const depth = jsonDepth(raw, MAX_JSON_DEPTH)
  if (depth > MAX_JSON_DEPTH) {
    throw createError({ statusCode: 400, statusMessage: `Invalid request: the body nests objects and arrays more than ${MAX_JSON_DEPTH} levels deep; flatten it.` })
  }
  const parsed = schema.safeParse(raw)
  if (!parsed.success) {
    throw createError({ statusCode: 400, statusMessage: 'Invalid request', message: `Invalid request: ${z.prettifyError(parsed.error).replaceAll('\n', ' ')}`, data: { issues: parsed.error.issues } })
  }
  return parsed.data
}

/** The 413, answered at once; the rest of the upload is dropped for a moment, never kept. */
function tooLarge(event: H3Event, maxBytes: number) {
  lingerOnRefusedBody(event)
  return createError({ statusCode: 413, statusMessage: `Request body is over ${Math.round(maxBytes / 1024)} KiB; send less.` })
}

/** How long, and how many more bytes, the rest of a refused body is read and dropped before its connection closes. */
const LINGER_MS = 2_000
const LINGER_BYTES = 16 * 1024 * 1024

/**
 * After refusing a body that is still coming in, reads and drops the rest of it for a moment (a
 * "lingering close"): a connection closed with the client's data unread is reset, and a client
 * still sending (a browser uploading a file) then loses the answer with it, and shows "connection
 * reset" instead of the 413 or 429 and its words. Bounded: past `LINGER_MS` or `LINGER_BYTES` more,
 * the connection is closed. A body that ends meanwhile leaves the connection open for the next request.
 */
function lingerOnRefusedBody(event: H3Event): void {
  const request = event.node.req
  const socket = request.socket
  if (request.complete || !socket) return
  const bytesBefore = socket.bytesRead
  const stop = () => {
    clearTimeout(deadline)
    clearInterval(watch)
  }
  const close = () => {
    stop()
    socket.destroy()
  }
  const deadline = setTimeout(close, LINGER_MS)
  const watch = setInterval(() => socket.bytesRead - bytesBefore > LINGER_BYTES && close(), 50)
  deadline.unref()
  watch.unref()
  request.once('end', stop)
  socket.once('close', stop)
  request.resume()
}
