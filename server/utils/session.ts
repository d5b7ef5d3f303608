import { randomUUID } from 'node:crypto'
import type { H3Event } from 'h3'
import { serverSecret } from '../lib/security/session-secret'

/** Who is asking: an anonymous user identified by their sealed session cookie. */
export interface SessionUser {
  id: string
}

const SESSION_COOKIE = 'or3-session'
const SESSION_MAX_AGE_SECONDS = 60 * 60 * 24 * 365

/**
 * Sealed cookie → user id, for cookies this process has already unsealed. A sealed cookie cannot
 * be forged, so a hit is as good as unsealing it again (which costs ~0.5 ms of crypto); entries
 * expire after a few minutes and the map is bounded. It matters when many tabs reconnect at once.
 */
const verifiedSessions = new Map<string, { userId: string, expiresAt: number }>()
const VERIFIED_SESSION_TTL_MS = 5 * 60_000
const MAX_VERIFIED_SESSIONS = 10_000

function rememberSession(cookie: string, userId: string): void {
  if (verifiedSessions.size >= MAX_VERIFIED_SESSIONS) verifiedSessions.delete(verifiedSessions.keys().next().value!)
  verifiedSessions.set(cookie, { userId, expiresAt: Date.now() + VERIFIED_SESSION_TTL_MS })
}

/**
 * The session user of this request. A browser without a session gets one (a new anonymous user
 * id in a sealed, HTTP-only cookie), so every visitor owns their own jobs from the first request.
 */
export async function requireSessionUser(event: H3Event): Promise<SessionUser> {
  const cookie = getCookie(event, SESSION_COOKIE)
  const known = cookie ? verifiedSessions.get(cookie) : undefined
  if (known && known.expiresAt > Date.now()) return { id: known.userId }
  const session = await useSession<{ userId?: string }>(event, {
    name: SESSION_COOKIE,
    password: serverSecret(useServerConfig()),
    maxAge: SESSION_MAX_AGE_SECONDS,
    cookie: { httpOnly: true, sameSite: 'lax', path: '/', secure: getRequestProtocol(event) === 'https' },
  })
  if (!session.data.userId) await session.update({ userId: randomUUID() })
  else if (cookie) rememberSession(cookie, session.data.userId)
  return { id: session.data.userId! }
}
