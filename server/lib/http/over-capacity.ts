import { CAPACITY_RETRY_AFTER_SECONDS, DomainError, type HttpAnswer } from '../domain-error'

/**
 * A request refused because something it would hold is at its cap: 429 when the cap is the
 * client's own (its user, job or address), 503 when it is the server's, with the words to show and
 * how long to wait. Each kind of cap names its own subclass.
 */
export abstract class OverCapacityError extends DomainError {
  readonly retryAfterSeconds = CAPACITY_RETRY_AFTER_SECONDS
  constructor(readonly statusCode: 429 | 503, message: string) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: this.statusCode, statusMessage: this.statusCode === 503 ? 'Server busy' : 'Too many at once', message: this.message, retryAfterSeconds: this.retryAfterSeconds }
  }
}
