import type { H3Event } from 'h3'
import { MAX_STREAM_BODY_BYTES, streamRequestSchema, type StreamRequest } from '../agent/stream-request-schema'
import { readJsonBody } from './read-json-body'

/** The validated body of `POST /api/openrouter/stream`: 413 when too large, 415 when not JSON, 400 naming what to fix. */
export function readStreamRequest(event: H3Event): Promise<StreamRequest> {
  return readJsonBody(event, streamRequestSchema, { maxBytes: MAX_STREAM_BODY_BYTES })
}
