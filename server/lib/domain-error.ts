/**
 * Errors of the app's own that a person can act on: each says what happened and what to do, and
 * declares how it is answered over HTTP (status, a short status text, data a client can branch
 * on, `Retry-After` where waiting helps). `lib/http/domain-errors.ts` sends that answer; nothing
 * else maps errors to statuses.
 */

/** Seconds a client refused for capacity (a cap it or the server is at) is asked to wait. */
export const CAPACITY_RETRY_AFTER_SECONDS = 5

/** A message of the server's by its key (`budget.exceeded`), with what fills its placeholders (lib/i18n). */
export interface LocalizedText {
  key: string
  params?: Record<string, string | number>
}

/** How one domain error is answered over HTTP. */
export interface HttpAnswer {
  statusCode: number
  statusMessage: string
  message: string
  data?: Record<string, unknown>
  retryAfterSeconds?: number
  /** `message` as a key of the server's messages, for a person who reads another language (lib/i18n). */
  i18n?: LocalizedText
  /**
   * The limit that refused the request, when a limit did (`job_starts_user`, `daily_budget_cost`,
   * …): a fixed name, never input, counted by the metrics' refusal series.
   */
  refusedBy?: string
}

export abstract class DomainError extends Error {
  /** The HTTP answer for this error. */
  abstract httpAnswer(): HttpAnswer

  /** Whether `error` is one (by its `httpAnswer`, not `instanceof`: a bundle may hold two copies of a module). */
  static isDomainError(error: unknown): error is DomainError {
    return error instanceof Error && typeof (error as { httpAnswer?: unknown }).httpAnswer === 'function'
  }
}

/** The short status text of each status a plain refusal answers with. */
const REFUSAL_TEXTS = { 400: 'Bad request', 401: 'Sign-in required', 403: 'Not allowed', 404: 'Not found', 409: 'Limit reached', 413: 'Too large', 415: 'Unsupported file type', 429: 'Too many requests' } as const

/**
 * A plain refusal: a status and words a person can act on, nothing more (a thing that is not
 * there, one too many, a request that cannot apply). Errors with data of their own subclass
 * DomainError instead.
 */
export class RefusalError extends DomainError {
  override name = 'RefusalError'
  constructor(message: string, readonly statusCode: keyof typeof REFUSAL_TEXTS) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: this.statusCode, statusMessage: REFUSAL_TEXTS[this.statusCode], message: this.message }
  }
}
