import { errorForStatus, formatDuration, OpenRouterError, readUpstreamMessage } from './errors'

export interface RetryPolicy {
  /** Extra attempts after the first for network errors and 5xx. */
  maxRetries: number
  /** First backoff delay; doubles on each retry. */
  baseDelayMs: number
  /** Longest `Retry-After` (429/503) worth waiting for; longer ones fail at once. */
  maxRetryAfterMs: number
  /** Longest wait for response headers. */
  headersTimeoutMs: number
}

export interface FetchWithRetryOptions {
  /** Names the endpoint in errors. */
  label: string
  policy: RetryPolicy
  signal?: AbortSignal
  fetch?: typeof globalThis.fetch
  /** Sleep, injectable for tests that count delays. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>
}

/** Waits `ms`, or rejects when `signal` aborts. The timer is cleared either way. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Milliseconds the upstream asked us to wait: the `Retry-After` header (seconds or an HTTP date),
 * else `error.metadata.retry_after_seconds` in the body; null when it said nothing.
 */
export function retryAfterMs(headers: Headers, body: string, now = Date.now()): number | null {
  const header = headers.get('retry-after')?.trim()
  if (header) {
    if (/^\d+(\.\d+)?$/.test(header)) return Math.round(Number.parseFloat(header) * 1000)
    const date = Date.parse(header)
    if (!Number.isNaN(date)) return Math.max(0, date - now)
  }
  try {
    const seconds = (JSON.parse(body) as { error?: { metadata?: { retry_after_seconds?: unknown } } }).error?.metadata?.retry_after_seconds
    if (typeof seconds === 'number' && seconds >= 0) return Math.round(seconds * 1000)
  } catch {
    // not JSON
  }
  return null
}

function abortedError(): OpenRouterError {
  return new OpenRouterError({ kind: 'aborted', message: 'The request was cancelled.' })
}

/**
 * Fetches with the retry rules of the wire format: network errors, missing headers and 5xx are
 * retried (`maxRetries`, exponential backoff); 429 and 503 wait for `Retry-After` when it is within
 * `maxRetryAfterMs` and fail otherwise; 400/401/402/403 (and other 4xx) never retry. Resolves with
 * a 2xx response, or rejects with an `OpenRouterError` carrying the status and the upstream message.
 */
export async function fetchWithRetry(url: string, init: RequestInit, options: FetchWithRetryOptions): Promise<Response> {
  const { label, policy, signal } = options
  const doFetch = options.fetch ?? globalThis.fetch
  const wait = options.sleep ?? sleep

  for (let attempt = 0; ; attempt++) {
    if (signal?.aborted) throw abortedError()
    const canRetry = attempt < policy.maxRetries
    let failure: OpenRouterError
    let delayMs = policy.baseDelayMs * 2 ** attempt

    // The deadline and the caller's abort only guard the wait for headers; once they arrive the
    // stream parser owns the body (its idle deadline, and cancelling it on abort).
    const attemptController = new AbortController()
    let headersTimedOut = false
    const onAbort = () => attemptController.abort(signal?.reason)
    const timer = setTimeout(() => {
      headersTimedOut = true
      attemptController.abort(new DOMException('No response headers in time', 'TimeoutError'))
    }, policy.headersTimeoutMs)
    signal?.addEventListener('abort', onAbort, { once: true })

    try {
      let response: Response
      try {
        response = await doFetch(url, { ...init, signal: attemptController.signal })
      } finally {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
      }
      if (response.ok) return response
      const body = await response.text().catch(() => '')
      failure = errorForStatus(label, response.status, readUpstreamMessage(body))
      // Client errors (400, 401, 402, 403, 404, 413, 422…) would fail the same way again; only 429 and 5xx retry.
      if (response.status < 500 && response.status !== 429) throw failure
      const askedMs = retryAfterMs(response.headers, body)
      if (response.status === 429 || (response.status === 503 && askedMs !== null)) {
        // Rate limits are only retried when the upstream says when; too long a wait fails now.
        if (askedMs === null || askedMs > policy.maxRetryAfterMs) throw failure
        delayMs = askedMs
      }
    } catch (error) {
      if (OpenRouterError.isInstance(error)) throw error
      if (signal?.aborted) throw abortedError()
      const reason = (error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message
      failure = headersTimedOut
        ? new OpenRouterError({ kind: 'timeout', message: `${label}: no response within ${formatDuration(policy.headersTimeoutMs)}`, retryable: true, cause: error })
        : new OpenRouterError({ kind: 'upstream_unavailable', message: `${label}: could not connect (${reason})`, retryable: true, cause: error })
    }

    if (!canRetry) throw failure
    try {
      await wait(delayMs, signal)
    } catch {
      throw abortedError()
    }
  }
}
