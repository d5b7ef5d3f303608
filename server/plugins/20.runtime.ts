import { createServerRuntime } from '../lib/runtime/create-server-runtime'
import { setServerRuntime } from '../lib/runtime/current'
import { scryptPasswords } from '../lib/auth/password-hashing'

/**
 * Builds this process's runtime (lib/runtime/create-server-runtime.ts) with nuxt-auth-utils'
 * password hashing (its scrypt options; lib/auth/password-hashing.ts), installs it for the routes,
 * and starts it. On SIGTERM/SIGINT every run stops at its checkpoint at once: the HTTP server waits
 * for open connections before Nitro's `close`, and live job streams never end on their own. `close`
 * then closes the stores.
 */
export default defineNitroPlugin((nitroApp) => {
  const runtime = createServerRuntime(useServerConfig(), { passwords: scryptPasswords(useRuntimeConfig().hash?.scrypt), port: process.env.PORT, env: process.env })
  setServerRuntime(runtime)
  runtime.start()
  // With traces exported, the SDK loads after start-up: a request waits for it (a few ms, once), so
  // the spans of a job it starts are recorded; once it has, requests go on without the hook.
  const unhookTracingWait = nitroApp.hooks.hook('request', () => runtime.tracingReady)
  void runtime.tracingReady.then(unhookTracingWait)

  const onSignal = () => void runtime.stop()
  process.once('SIGTERM', onSignal)
  process.once('SIGINT', onSignal)
  nitroApp.hooks.hook('close', async () => {
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
    await runtime.close()
    setServerRuntime(undefined)
  })
})
