/** The reasons a job cannot start, as HTTP answers a person can act on. */
import { createError, setResponseHeader, type H3Event } from 'h3'
import { JobCapacityError } from '../jobs/admission'
import { MissingApiKeyError } from '../models/chat-endpoint'

/**
 * Over a cap → 503 (server) or 429 (this user) with `Retry-After`; a model that needs a key nobody
 * gave → 400. Rethrows anything else.
 */
export function throwJobStartError(event: H3Event, error: unknown): never {
  if (MissingApiKeyError.isInstance(error)) throw createError({ statusCode: 400, statusMessage: error.message })
  if (JobCapacityError.isInstance(error)) {
    setResponseHeader(event, 'Retry-After', error.retryAfterSeconds)
    throw createError({ statusCode: error.scope === 'server' ? 503 : 429, statusMessage: error.message, data: { scope: error.scope, limit: error.limit } })
  }
  throw error
}
