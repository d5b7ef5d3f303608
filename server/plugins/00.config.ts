import { serverSecret } from '../lib/security/session-secret'

/**
 * Fails start-up with a readable list of problems when the runtime config cannot work, and hands
 * nuxt-auth-utils the session secret (configured, or generated under the data directory), which
 * it reads from NUXT_SESSION_PASSWORD.
 */
export default defineNitroPlugin(() => {
  const config = useServerConfig()
  process.env.NUXT_SESSION_PASSWORD ||= serverSecret(config)
})
