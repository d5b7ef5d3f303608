import { randomUUID } from 'node:crypto'
import type { H3Event } from 'h3'
import { resolveSessionSecret } from '../lib/session/session-secret'
import { createSecretBox, type SecretBox } from '../lib/security/secret-box'

/** Who is asking: an anonymous user identified by their sealed session cookie. */
export interface SessionUser {
  id: string
}

const SESSION_COOKIE = 'or3-session'
const SESSION_MAX_AGE_SECONDS = 60 * 60 * 24 * 365

let secret: string | undefined
let secretBox: SecretBox | undefined

/** The server secret (NUXT_SESSION_PASSWORD, or generated and kept under the data directory). */
export function useSessionSecret(): string {
  if (!secret) {
    const config = useServerConfig()
    const resolved = resolveSessionSecret(config.session.password, config.dataDir)
    if (resolved.source === 'generated') console.info(`[or3] Generated a session secret in ${config.dataDir}/session-secret; set NUXT_SESSION_PASSWORD to choose your own.`)
    secret = resolved.secret
  }
  return secret
}

/** Encrypts API keys at rest with a key derived from the server secret. */
export function useApiKeyBox(): SecretBox {
  secretBox ??= createSecretBox(useSessionSecret(), 'job-api-key')
  return secretBox
}

/**
 * The session user of this request. A browser without a session gets one (a new anonymous user
 * id in a sealed, HTTP-only cookie), so every visitor owns their own jobs from the first request.
 */
export async function requireSessionUser(event: H3Event): Promise<SessionUser> {
  const session = await useSession<{ userId?: string }>(event, {
    name: SESSION_COOKIE,
    password: useSessionSecret(),
    maxAge: SESSION_MAX_AGE_SECONDS,
    cookie: { httpOnly: true, sameSite: 'lax', path: '/', secure: getRequestProtocol(event) === 'https' },
  })
  if (!session.data.userId) await session.update({ userId: randomUUID() })
  return { id: session.data.userId! }
}
