/**
 * The app's own errors as HTTP answers a person can act on: each error class declares its answer
 * (`DomainError.httpAnswer`: what happened and what to do, the status a client can branch on,
 * `Retry-After` where waiting helps). Used by routes that catch (`throwHttpError`) and by the
 * error handler for errors thrown anywhere else.
 */
import { createError, setResponseHeader, type H3Event } from 'h3'
import { DomainError, type HttpAnswer } from '../domain-error'
import { inLanguage } from '../i18n/server-text'
import { requestLocale } from './request-locale'

export type { HttpAnswer }

/** The answer for `error` when it is one of the app's own (each declares its answer), else undefined. */
export function httpAnswerFor(error: unknown): HttpAnswer | undefined {
  return DomainError.isDomainError(error) ? error.httpAnswer() : undefined
}

/** Throws the HTTP form of a domain error (setting `Retry-After`); rethrows anything else. */
export function throwHttpError(event: H3Event, error: unknown): never {
  const answer = httpAnswerFor(error)
  if (!answer) throw error
  if (answer.retryAfterSeconds !== undefined) setResponseHeader(event, 'Retry-After', answer.retryAfterSeconds)
  // The error keeps its cause, so the error handler (which counts refusals) knows what it was.
  throw createError({ statusCode: answer.statusCode, statusMessage: answer.statusMessage, message: answerMessage(event, answer), data: answer.data, cause: error })
}

/** The answer's message in the language of the person asking (English: the code's own sentence). */
export function answerMessage(event: H3Event, answer: HttpAnswer): string {
  return inLanguage(requestLocale(event), answer.message, answer.i18n)
}
