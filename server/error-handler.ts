/**
 * Runs before Nuxt's error handler: an app error thrown anywhere (a store quota, a busy
 * database, a job cap) becomes its HTTP answer (lib/http/domain-errors.ts) instead of a 500
 * "Server Error". The error is rewritten in place and left for the next handler to send, so
 * pages and JSON requests are answered as usual, just with the right status and words. A refusal
 * by a limit is counted in the metrics (when they are on).
 */
import { setResponseHeader, type H3Error, type H3Event } from 'h3'
import { answerMessage, httpAnswerFor } from './lib/http/domain-errors'
import { currentServerRuntime } from './lib/runtime/current'

export default function answerDomainErrors(error: H3Error, event: H3Event): void {
  const answer = httpAnswerFor(error.cause) ?? httpAnswerFor(error)
  if (!answer) return
  if (answer.refusedBy) currentServerRuntime()?.metrics.refused(answer.refusedBy)
  error.statusCode = answer.statusCode
  error.statusMessage = answer.statusMessage
  error.message = answerMessage(event, answer)
  error.data = answer.data
  error.unhandled = false
  if (answer.retryAfterSeconds !== undefined) setResponseHeader(event, 'Retry-After', answer.retryAfterSeconds)
}
