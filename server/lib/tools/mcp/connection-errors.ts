/**
 * What an MCP connection's errors say: a network failure under a failed request (and whether the
 * request surely never reached the server), a server-sent stream that is gone, a server that no
 * longer knows our session. connection.ts decides from these whether to retry, reconnect or give up.
 */

/** An error's message (or the thing thrown, as text). */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

/** Network failures of a request: the server's address answers nothing (or nothing any more). */
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CONNECT_TIMEOUT'])
/** Of those, the ones where the request never reached the server (a call surely did not run). */
export const NEVER_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])

/** The network error code under a failed fetch (undici puts it on `cause`), if it was one. */
export function networkCode(error: unknown): string | undefined {
  for (let current = error as { code?: unknown, cause?: unknown } | undefined, depth = 0; current && depth < 4; current = current.cause as typeof current, depth++) {
    if (typeof current.code === 'string' && NETWORK_CODES.has(current.code)) return current.code
  }
  return error instanceof TypeError && /fetch failed/i.test(error.message) ? 'fetch failed' : undefined
}

/** Transport errors that say the server-sent stream is gone or cannot come back. */
export const STREAM_TROUBLE = /SSE stream disconnected|Failed to reconnect|Maximum reconnection attempts/i

/** A server that no longer knows our session (it restarted): HTTP 404 on a request that carried one. */
export function isStaleSession(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status
  return status === 404 || /session not found|unknown session|no valid session/i.test(errorText(error))
}
