/**
 * SQLite answers "busy" when another connection (another process on the same file, a backup, the
 * sqlite3 shell) holds the write lock. better-sqlite3 is synchronous, so its own busy timeout
 * would wait with the whole event loop blocked: every other request froze for seconds per write.
 * Here the connection waits at most `SQLITE_BUSY_TIMEOUT_MS` inside SQLite, and a store call
 * that still finds the database busy is retried asynchronously (the loop serves others between
 * tries) until `deadlineMs`, then fails with `StoreBusyError` (503 with `Retry-After`).
 */
import { DomainError, type HttpAnswer } from '../../domain-error'
import { isSubStore } from '../sub-store'

/** Longest one statement waits for the lock inside SQLite (blocking the loop); tries are spaced out after it. */
export const SQLITE_BUSY_TIMEOUT_MS = 20

/** How long a store call keeps retrying a busy database, and its first pause. */
export interface BusyRetryOptions {
  deadlineMs: number
  firstDelayMs: number
}

const DEFAULT_BUSY_RETRY: BusyRetryOptions = { deadlineMs: 2_000, firstDelayMs: 10 }

/** Raised when the database stayed locked for the whole retry deadline. */
export class StoreBusyError extends DomainError {
  override name = 'StoreBusyError'
  readonly retryAfterSeconds = 2
  /** SQLite's own error. Not `cause`: h3 would answer with the cause and lose this error's meaning. */
  constructor(readonly sqliteError: unknown) {
    super('The database is busy (another process holds its write lock). Nothing was saved; try again in a few seconds.')
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: 503, statusMessage: 'Storage busy', message: this.message, retryAfterSeconds: this.retryAfterSeconds }
  }

  static isInstance(error: unknown): error is StoreBusyError {
    return error instanceof Error && error.name === 'StoreBusyError'
  }
}

/** Whether `error` is SQLite's "the database is locked / busy". */
export function isSqliteBusy(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code)
}

/** Runs `call`, retrying with growing pauses while SQLite is busy; `StoreBusyError` after the deadline. */
export async function retryWhenBusy<T>(call: () => T | Promise<T>, options: BusyRetryOptions = DEFAULT_BUSY_RETRY): Promise<T> {
  const deadline = Date.now() + options.deadlineMs
  let delay = options.firstDelayMs
  while (true) {
    try {
      return await call()
    } catch (error) {
      if (!isSqliteBusy(error)) throw error
      if (Date.now() + delay > deadline) throw new StoreBusyError(error)
      await new Promise(resolve => setTimeout(resolve, delay))
      delay = Math.min(delay * 2, 250)
    }
  }
}

/**
 * `store` with every method retried while SQLite is busy, its sub-stores' too (the job store's
 * `inputRequests` and `notifications`). Safe because each method is one statement or one
 * transaction: a busy failure left nothing written.
 */
export function withBusyRetry<T extends object>(store: T, options: BusyRetryOptions = DEFAULT_BUSY_RETRY): T {
  const wrapped: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(store)) {
    wrapped[key] = typeof value === 'function' && key !== 'close'
      ? (...args: unknown[]) => retryWhenBusy(() => value.apply(store, args), options)
      : isSubStore(value) ? withBusyRetry(value, options) : value
  }
  return wrapped as T
}
