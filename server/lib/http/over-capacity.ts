import { CAPACITY_RETRY_AFTER_SECONDS, DomainError, type HttpAnswer } from '../domain-error'

/** What was at its cap: live streams (stream-slots.ts) or request bodies in flight (body-budget.ts). */
export type CapacityKind = 'streams' | 'bodies'

/**
 * A request refused because something it would hold is at its cap: 429 when the cap is the
 * client's own (its user, job or address), 503 when it is the server's, with the words to show and
 * how long to wait.
 */
export class OverCapacityError extends DomainError {
  override name = 'OverCapacityError'
  readonly retryAfterSeconds = CAPACITY_RETRY_AFTER_SECONDS
  constructor(readonly kind: CapacityKind, readonly statusCode: 429 | 503, message: string) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: this.statusCode, statusMessage: this.statusCode === 503 ? 'Server busy' : 'Too many at once', message: this.message, retryAfterSeconds: this.retryAfterSeconds, refusedBy: `${this.kind}_${this.statusCode === 503 ? 'server' : 'client'}` }
  }

  /** Whether `error` is one (of `kind`, when given). */
  static isInstance(error: unknown, kind?: CapacityKind): error is OverCapacityError {
    return error instanceof Error && error.name === 'OverCapacityError' && (kind === undefined || (error as OverCapacityError).kind === kind)
  }
}
