/**
 * What a session cookie holds (sealed by nuxt-auth-utils / h3): the principal it was issued to,
 * the account's session version then, and when it was last renewed. Cookies from before accounts
 * existed hold only `{ userId }`: they are read as that guest, so guest data stays reachable.
 */
import type { SessionPrincipal } from '../../../shared/types/account'

/** The sealed contents of a session cookie. */
export interface SessionData {
  user?: SessionPrincipal
  /** The account's session version at sign-in (absent for guests). */
  version?: number
  /** When the cookie was last (re)issued, ms since the epoch. */
  renewedAt?: number
  /** A pre-accounts anonymous session. */
  userId?: string
  /** The identity provider the session was signed in through (its sign-out ends the provider's session too). */
  via?: string
}

/** Who a session was issued to, as the cookie says (still to be checked against the account store). */
export type SessionHolder =
  | { kind: 'account', userId: string, version: number, renewedAt: number }
  | { kind: 'guest', userId: string, renewedAt: number }
  | { kind: 'none' }

/** Reads a session's holder from its unsealed data. */
export function sessionHolder(data: SessionData): SessionHolder {
  const user = data.user
  if (user && typeof user.id === 'string' && user.role !== 'guest' && typeof data.version === 'number') {
    return { kind: 'account', userId: user.id, version: data.version, renewedAt: data.renewedAt ?? 0 }
  }
  if (user && typeof user.id === 'string' && user.role === 'guest') return { kind: 'guest', userId: user.id, renewedAt: data.renewedAt ?? 0 }
  if (typeof data.userId === 'string') return { kind: 'guest', userId: data.userId, renewedAt: 0 }
  return { kind: 'none' }
}

/** The data of a new guest session. */
export function guestSessionData(userId: string, now: number): SessionData {
  return { user: { id: userId, name: 'Guest', role: 'guest' }, renewedAt: now }
}

/** The data of a session for a signed-in account. */
export function accountSessionData(account: { id: string, name: string, role: SessionPrincipal['role'], sessionVersion: number }, now: number, via?: string): SessionData {
  return { user: { id: account.id, name: account.name, role: account.role }, version: account.sessionVersion, renewedAt: now, ...(via ? { via } : {}) }
}

/** Whether a session issued at `renewedAt` is in the second half of its life (and should be renewed). */
export function needsRenewal(renewedAt: number, maxAgeSeconds: number, now: number): boolean {
  return now - renewedAt > (maxAgeSeconds * 1000) / 2
}
