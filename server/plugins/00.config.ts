import { serverSecret } from '../lib/security/session-secret'
import { movedSettings } from '../lib/config/moved-settings'
import { ServerConfigError } from '../lib/config/server-config'

/**
 * Fails start-up with a readable list of problems when the runtime config cannot work, and hands
 * nuxt-auth-utils the session secret (configured, or generated under the data directory), which
 * it reads from NUXT_SESSION_PASSWORD.
 */
export default defineNitroPlugin(() => {
  const moved = movedSettings(process.env)
  if (moved.length > 0) throw new ServerConfigError(`Invalid server configuration:\n${moved.join('\n')}`)
  const config = useServerConfig()
  process.env.NUXT_SESSION_PASSWORD ||= serverSecret(config)
})
