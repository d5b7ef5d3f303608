import type { H3Event } from 'h3'
import { modelRequestFields, type StreamRequest } from '../../lib/chat/stream-request-schema'
import { JobCapacityError } from '../../lib/background-jobs/job-manager'
import { MissingApiKeyError } from '../chat/chat-endpoint'
import type { BackgroundJob } from './types'

/**
 * Turns the reasons a job cannot start into HTTP answers: over a cap → 503 (server) or 429
 * (this user) with `Retry-After`; a model that needs a key nobody gave → 400. Rethrows the rest.
 */
export function throwJobStartError(event: H3Event, error: unknown): never {
  if (error instanceof MissingApiKeyError) throw createError({ statusCode: 400, statusMessage: error.message })
  if (JobCapacityError.isInstance(error)) {
    setResponseHeader(event, 'Retry-After', error.retryAfterSeconds)
    throw createError({ statusCode: error.scope === 'server' ? 503 : 429, statusMessage: error.message, data: { scope: error.scope, limit: error.limit } })
  }
  throw error
}

/** Starts a chat job for the session user from a validated request (4xx as `throwJobStartError`). */
export async function startChatJobForRequest(event: H3Event, request: StreamRequest): Promise<BackgroundJob> {
  const user = await requireSessionUser(event)
  try {
    return await useBackgroundJobs().startChatJob({
      userId: user.id,
      threadId: request._threadId,
      messageId: request._messageId,
      userApiKey: getHeader(event, 'x-openrouter-key')?.trim() || undefined,
      request: { model: request.model, messages: request.messages, fields: modelRequestFields(request), toolNames: request._tools },
    })
  } catch (error) {
    throwJobStartError(event, error)
  }
}
