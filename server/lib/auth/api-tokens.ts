/**
 * Personal API tokens: 32 random bytes behind an `or3_` prefix, shown once. Only their SHA-256 is
 * stored: a token has full entropy, so a fast hash is enough (unlike passwords) and a lookup by
 * hash stays one indexed read per request.
 */
import { createHash, randomBytes } from 'node:crypto'

/** What every token starts with, so leaked ones are recognisable to secret scanners. */
export const API_TOKEN_PREFIX = 'or3_'

/** A new token: its secret (shown once), what is kept of it, and the hash to store. */
export function newApiToken(): { token: string, prefix: string, tokenHash: string } {
  const token = `${API_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`
  return { token, prefix: token.slice(0, 10), tokenHash: hashApiToken(token) }
}

/** The stored form of a token. */
export function hashApiToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/** Whether a header value looks like one of our tokens at all (cheap check before any lookup). */
export function looksLikeApiToken(value: string): boolean {
  return value.startsWith(API_TOKEN_PREFIX) && value.length === API_TOKEN_PREFIX.length + 43 && /^[\w-]+$/.test(value.slice(API_TOKEN_PREFIX.length))
}
