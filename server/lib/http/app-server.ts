/**
 * The server the built app listens with (server/entry.ts): plain HTTP/1.1 by default, as the quick
 * start serves it; with a certificate and key (`NUXT_TLS_CERT_FILE`, `NUXT_TLS_KEY_FILE`), TLS with
 * HTTP/2, and HTTP/1.1 over TLS for clients without HTTP/2 (ALPN picks). Over HTTP/2 a browser
 * opens about a hundred streams per connection instead of six connections per host, so live
 * streams and page loads no longer queue behind each other without a proxy in front.
 */
import { readFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createSecureServer, type Http2SecureServer } from 'node:http2'

/** Streams one HTTP/2 connection may have open at once (a browser uses up to about a hundred). */
export const HTTP2_MAX_STREAMS_PER_CONNECTION = 256

export interface TlsFiles {
  /** PEM certificate chain; empty for plain HTTP. */
  certFile: string
  /** PEM private key; empty for plain HTTP. */
  keyFile: string
}

export type AppServer =
  | { protocol: 'http', server: Server }
  | { protocol: 'https', server: Http2SecureServer }

type NodeListener = (request: IncomingMessage, response: ServerResponse) => void

/** Thrown when the TLS settings cannot be used, with what to fix; the server does not start. */
export class TlsConfigError extends Error {
  override name = 'TlsConfigError'
}

/** Reads a PEM file named by `variable`, or says which variable names a file that cannot be read. */
function readPem(path: string, variable: string): Buffer {
  try {
    return readFileSync(path)
  } catch (error) {
    throw new TlsConfigError(`${variable}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`)
  }
}

/**
 * The listener as the app expects its requests: HTTP/2's pseudo-headers (`:path`, `:authority`…)
 * are not header names a `Headers` object takes (h3 builds one from them), so the request's
 * headers are shown without them, and with `host` from `:authority` as HTTP/1.1 would send it.
 */
function withoutPseudoHeaders(listener: NodeListener): NodeListener {
  return (request, response) => {
    if (request.httpVersionMajor >= 2) {
      const headers: IncomingMessage['headers'] = {}
      for (const [name, value] of Object.entries(request.headers)) {
        if (!name.startsWith(':')) headers[name] = value
      }
      const authority = request.headers[':authority']
      if (!headers.host && typeof authority === 'string') headers.host = authority
      Object.defineProperty(request, 'headers', { value: headers, configurable: true, enumerable: true })
    }
    listener(request, response)
  }
}

/** The app's server for `listener`: HTTP/2 over TLS when both files are set, plain HTTP/1.1 when neither is. */
export function createAppServer(listener: NodeListener, tls: TlsFiles): AppServer {
  if (!tls.certFile && !tls.keyFile) return { protocol: 'http', server: createServer(listener) }
  if (!tls.certFile || !tls.keyFile) {
    throw new TlsConfigError(`NUXT_TLS_CERT_FILE and NUXT_TLS_KEY_FILE go together: set both (HTTPS with HTTP/2) or neither (plain HTTP); only ${tls.certFile ? 'NUXT_TLS_CERT_FILE' : 'NUXT_TLS_KEY_FILE'} is set`)
  }
  const cert = readPem(tls.certFile, 'NUXT_TLS_CERT_FILE')
  const key = readPem(tls.keyFile, 'NUXT_TLS_KEY_FILE')
  let server: Http2SecureServer
  try {
    server = createSecureServer({
      cert,
      key,
      allowHTTP1: true,
      settings: { maxConcurrentStreams: HTTP2_MAX_STREAMS_PER_CONNECTION },
    }, withoutPseudoHeaders(listener) as unknown as Parameters<typeof createSecureServer>[1])
  } catch (error) {
    // The key's contents are never part of the message, only what OpenSSL said of them.
    throw new TlsConfigError(`NUXT_TLS_CERT_FILE / NUXT_TLS_KEY_FILE: not a usable PEM certificate and key (${(error as Error).message})`)
  }
  return { protocol: 'https', server }
}
