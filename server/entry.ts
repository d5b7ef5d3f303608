/**
 * The built server's entry (nuxt.config.ts sets it for production builds in place of Nitro's
 * node-server entry, which it follows): the same port, host, socket and graceful shutdown, plus
 * HTTPS with HTTP/2 when `NUXT_TLS_CERT_FILE` and `NUXT_TLS_KEY_FILE` are set
 * (server/lib/http/app-server.ts). A TLS setting that cannot be used stops the start with a
 * message naming it.
 */
import '#nitro-internal-pollyfills'
import destr from 'destr'
import { toNodeListener } from 'h3'
import { useNitroApp } from 'nitropack/runtime'
import { setupGracefulShutdown, trapUnhandledNodeErrors } from 'nitropack/runtime/internal/index'
import type { Server } from 'node:http'
import { createAppServer, TlsConfigError, type AppServer } from './lib/http/app-server'
import { useServerConfig } from './utils/config'

const nitroApp = useNitroApp()
let app: AppServer
try {
  app = createAppServer(toNodeListener(nitroApp.h3App), useServerConfig().tls)
} catch (error) {
  console.error(error instanceof TlsConfigError ? `Cannot start: ${error.message}` : error)
  process.exit(1)
}

const configuredPort = destr<number | string | undefined>(process.env.NITRO_PORT || process.env.PORT)
const port = configuredPort === 0 ? 0 : Number(configuredPort) || 3000
const host = process.env.NITRO_HOST || process.env.HOST
const socketPath = process.env.NITRO_UNIX_SOCKET

const listener = app.server.listen(socketPath ? { path: socketPath } : { port, host }, () => {
  const address = listener.address()
  if (typeof address === 'string') {
    console.log(`Listening on unix socket ${address}`)
    return
  }
  const baseUrl = (useRuntimeConfig().app.baseURL || '').replace(/\/$/, '')
  const hostname = address?.family === 'IPv6' ? `[${address.address}]` : address?.address
  console.log(`Listening on ${app.protocol}://${hostname}:${address?.port}${baseUrl}${app.protocol === 'https' ? ' (HTTP/2 and HTTP/1.1)' : ''}`)
})

trapUnhandledNodeErrors()
// Nitro's shutdown (stop taking connections, run the app's close hooks) works on either server.
setupGracefulShutdown(listener as Server, nitroApp)

export default {}
