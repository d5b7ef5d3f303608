/** A request's bearer token checked against a configured secret. */
import { createHash, timingSafeEqual } from 'node:crypto'

const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * Whether `authorization` is `Bearer <token>` with the configured `token` (compared in constant
 * time, over digests so the length does not show either). An empty `token` accepts nothing.
 */
export function isBearerToken(authorization: string | undefined, token: string): boolean {
  if (!token || !authorization) return false
  const given = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1]
  return given !== undefined && timingSafeEqual(digest(given), digest(token))
}
