import { createError, getHeader, readBody, type H3Event } from 'h3'
import { z } from 'zod'
import { MAX_STREAM_BODY_BYTES, streamRequestSchema, type StreamRequest } from '../agent/stream-request-schema'

/** The validated body of `POST /api/openrouter/stream`; 413 when too large, 400 naming what to fix. */
export async function readStreamRequest(event: H3Event): Promise<StreamRequest> {
  const length = Number(getHeader(event, 'content-length') ?? 0)
  if (length > MAX_STREAM_BODY_BYTES) {
    throw createError({ statusCode: 413, statusMessage: `Request body is over ${MAX_STREAM_BODY_BYTES / 1024} KiB; send fewer or shorter messages.` })
  }
  let raw: unknown
  try {
    raw = await readBody(event)
  } catch {
    throw createError({ statusCode: 400, statusMessage: 'Invalid request: the body is not valid JSON.' })
  }
  const body = streamRequestSchema.safeParse(raw)
  if (!body.success) {
    throw createError({ statusCode: 400, statusMessage: `Invalid request: ${z.prettifyError(body.error).replaceAll('\n', ' ')}`, data: { issues: body.error.issues } })
  }
  return body.data
}
