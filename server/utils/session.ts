import { randomUUID } from 'node:crypto'
import { unsealSession, type H3Event } from 'h3'
import { LRUCache } from 'lru-cache'
import type { SessionPrincipal } from '../../shared/types/account'
import type { StoredAccount } from '../lib/stores/accounts/account-store'
import { AuthError } from '../lib/auth/auth-errors'
import { accountSessionData, guestSessionData, needsRenewal, sessionHolder, type SessionData } from '../lib/auth/session-data'
import { throwHttpError } from '../lib/http/domain-errors'
import { clientAddress } from '../lib/http/client-address'
import { serverSecret } from '../lib/security/session-secret'


/**
 * Sealed cookie → its unsealed data, for cookies this process has already unsealed (unsealing
 * costs ~0.5 ms of crypto, and many tabs reconnect at once). A sealed cookie cannot be forged, so
 * a hit is as good as unsealing it again; whether its account still accepts it is checked on
 * every request all the same.
 */
const unsealed = new LRUCache<string, SessionData>({ max: 10_000, ttl: 5 * 60_000 })

function sessionConfig(event: H3Event) {
  const config = useServerConfig(event)
  return {
    name: config.session.name,
    password: serverSecret(config),
    maxAge: config.session.maxAge,
    cookie: { httpOnly: true, sameSite: 'lax' as const, path: '/', secure: getRequestProtocol(event) === 'https' },
  }
}

/**
 * The data of this request's session cookie, or none. Only reads: h3's `useSession` would start a
 * session (and set a cookie) for a request without one, so a share link's anonymous reader or a
 * stale cookie would get a fresh 14-day cookie; sessions are started only by `writeSessionData`.
 */
async function readSessionData(event: H3Event): Promise<SessionData> {
  const cookie = getCookie(event, useServerConfig(event).session.name)
  if (!cookie) return {}
  const known = unsealed.get(cookie)
  if (known) return known
  let data: SessionData
  try {
    data = ((await unsealSession(event, sessionConfig(event), cookie)).data ?? {}) as SessionData
  } catch {
    // Not ours, tampered with or expired: as if there were none.
    return {}
  }
  if (data.user || data.userId) unsealed.set(cookie, data)
  return data
}

async function writeSessionData(event: H3Event, data: SessionData): Promise<void> {
  await replaceUserSession(event, data as Parameters<typeof replaceUserSession>[1], sessionConfig(event))
}

async function resolvePrincipal(event: H3Event, newGuest = true): Promise<SessionPrincipal | null> {
  const accounts = useAccounts()
  const config = useServerConfig(event)
  const authorization = getRequestHeader(event, 'authorization')
  if (authorization !== undefined) {
    const token = /^Bearer\s+(\S+)$/i.exec(authorization)?.[1]
    if (!token) throw new AuthError('bad-token', 'The Authorization header must be "Bearer <token>", with a token from Settings → API tokens.')
    return accounts.tokens.principalFor(token)
  }
  const data = await readSessionData(event)
  const holder = sessionHolder(data)
  const now = Date.now()
  if (holder.kind === 'account') {
    let principal: SessionPrincipal
    try {
      principal = await accounts.principalForSession({ userId: holder.userId, version: holder.version })
    } catch (error) {
      if (AuthError.isInstance(error)) await clearUserSession(event, sessionConfig(event))
      throw error
    }
    event.context.sessionVia = data.via
    // Signed in with a password where the admin requires two-step sign-in, and not set up: that comes first.
    if (!data.via && await accounts.twoStepPolicy.pending(principal.id, principal.role)) event.context.twoStepPending = true
    if (needsRenewal(holder.renewedAt, config.session.maxAge, now)) {
      const account = await accounts.getAccount(principal.id)
      if (account) await writeSessionData(event, accountSessionData(account, now, data.via))
    }
    return principal
  }
  if (!config.auth.guests) return null
  // A guest id an account took over (its owner signed up keeping the guest's data) is a guest no
  // more: an old copy of that cookie gets a fresh guest instead of the account's data.
  if (holder.kind === 'guest' && await accounts.isGuestId(holder.userId)) {
    if (needsRenewal(holder.renewedAt, config.session.maxAge, now)) await writeSessionData(event, guestSessionData(holder.userId, now))
    return { id: holder.userId, name: 'Guest', role: 'guest' }
  }
  if (!newGuest) return null
  await accounts.attempts.newSession(clientAddress(event, useServerConfig(event)))
  const guest = guestSessionData(randomUUID(), now)
  await writeSessionData(event, guest)
  return guest.user!
}

/**
 * Who this request acts for: the account of its `Authorization: Bearer` token or of its session
 * cookie, or (when `NUXT_AUTH_GUESTS=true`) a guest, a new one getting a sealed cookie. 401 when
 * nobody is signed in (or, with `optional`, null), 403 for a disabled account or (with
 * `role: 'admin'`) a non-admin. A session ends as soon as its account's password is reset, the
 * account is disabled or deleted. With `newGuest: false` a guest session already held counts but
 * none is started (a share link's anonymous reader gets no session).
 */
export async function requireSessionUser(event: H3Event, options: { role?: 'admin', optional: true, newGuest?: boolean, twoStepSetup?: true }): Promise<SessionPrincipal | null>
/** The signed-in principal (see above), never null. */
export async function requireSessionUser(event: H3Event, options?: { role?: 'admin', optional?: false, twoStepSetup?: true }): Promise<SessionPrincipal>
/**
 * The implementation of both forms above. A session the admin's two-step requirement holds (the
 * account has not set it up) gets 403 `two-step-required` from every route but those that set it up,
 * say who is signed in, or sign out (`twoStepSetup`).
 */
export async function requireSessionUser(event: H3Event, options: { role?: 'admin', optional?: boolean, newGuest?: boolean, twoStepSetup?: true } = {}): Promise<SessionPrincipal | null> {
  let principal: SessionPrincipal | null
  try {
    principal = event.context.principal !== undefined ? event.context.principal : await resolvePrincipal(event, options.newGuest ?? true)
  } catch (error) {
    if (options.optional && AuthError.isInstance(error) && error.statusCode === 401) return null
    throwHttpError(event, error)
  }
  event.context.principal = principal
  if (!principal) {
    if (options.optional) return null
    throwHttpError(event, new AuthError('not-signed-in', 'Sign in first: this server needs an account (or an API token in "Authorization: Bearer").'))
  }
  if (event.context.twoStepPending && !options.twoStepSetup) throwHttpError(event, new AuthError('two-step-required', 'Your admin requires two-step sign-in: set it up in Settings → Two-step sign-in (an authenticator app or a passkey) to go on.'))
  if (options.role === 'admin' && principal.role !== 'admin') throwHttpError(event, new AuthError('not-admin', 'Only an admin may do this.'))
  return principal
}

/**
 * Starts a fresh session for `account` (a new cookie: any earlier session id is dropped), signed in
 * through identity provider `via` when it was, or with null ends this browser's session.
 */
export async function setSessionAccount(event: H3Event, account: StoredAccount | null, via?: string): Promise<void> {
  event.context.principal = undefined
  if (account) await writeSessionData(event, accountSessionData(account, Date.now(), via))
  else await clearUserSession(event, sessionConfig(event))
}
