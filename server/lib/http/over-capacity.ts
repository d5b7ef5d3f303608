/** Seconds a client refused for capacity is asked to wait. */
export const CAPACITY_RETRY_AFTER_SECONDS = 5

/**
 * A request refused because something it would hold is at its cap: 429 when the cap is the
 * client's own (its user, job or address), 503 when it is the server's, with the words to show and
 * how long to wait. Each kind of cap names its own subclass.
 */
export abstract class OverCapacityError extends Error {
  readonly retryAfterSeconds = CAPACITY_RETRY_AFTER_SECONDS
  constructor(readonly statusCode: 429 | 503, message: string) {
    super(message)
  }
}
