/**
 * The built server speaking HTTPS with HTTP/2 itself (NUXT_TLS_CERT_FILE / NUXT_TLS_KEY_FILE,
 * server/lib/http/app-server.ts): many live streams and requests on one connection (a browser's
 * six-per-host limit is an HTTP/1.1 one), a job's stream read to its end over HTTP/2, HTTP/1.1 over
 * TLS for a client without HTTP/2, a clean stop with streams open, and TLS settings that cannot
 * be used refused at start naming the variable.
 */
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { get as httpsGet } from 'node:https'
import { connect, constants, type ClientHttp2Session } from 'node:http2'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAppExpectingFailure, useAppServers, type RunningApp } from '../support/built-app'
import { buildApp } from '../support/app-build'

/** A self-signed certificate for 127.0.0.1 (an EC key: made at once). */
function makeCertificate(): { dir: string, certFile: string, keyFile: string, cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'or3-tls-'))
  const certFile = join(dir, 'cert.pem')
  const keyFile = join(dir, 'key.pem')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' })
  return { dir, certFile, keyFile, cert: readFileSync(certFile) }
}

interface Answer { status: number, headers: Record<string, string | string[] | undefined>, body: string }

/** One request on `session`; `onData` sees the body as it comes (a stream), and may end it by returning true. */
function request(session: ClientHttp2Session, path: string, options: { method?: string, headers?: Record<string, string>, body?: string, onData?: (soFar: string) => boolean } = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const stream = session.request({ ':path': path, ':method': options.method ?? 'GET', ...options.headers })
    let status = 0
    let headers: Answer['headers'] = {}
    let body = ''
    stream.setEncoding('utf8')
    stream.on('response', (received) => {
      status = Number(received[':status'])
      headers = received
    })
    stream.on('data', (chunk: string) => {
      body += chunk
      if (options.onData?.(body)) {
        stream.close(constants.NGHTTP2_CANCEL)
        resolve({ status, headers, body })
      }
    })
    stream.on('end', () => resolve({ status, headers, body }))
    stream.on('error', reject)
    if (options.body) stream.end(options.body)
    else stream.end()
  })
}

const certificate = makeCertificate()
const servers = useAppServers({ NUXT_TLS_CERT_FILE: certificate.certFile, NUXT_TLS_KEY_FILE: certificate.keyFile, NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '10' })
let app: RunningApp
let session: ClientHttp2Session
let cookie = ''

beforeAll(async () => {
  app = await servers.start()
  session = connect(app.url, { ca: certificate.cert })
  // A guest session for the requests below.
  const me = await request(session, '/api/auth/me')
  cookie = [me.headers['set-cookie'] ?? []].flat().map(line => line.split(';')[0]).join('; ')
}, 240_000)

afterAll(() => {
  session?.close()
})

describe('HTTPS with HTTP/2, served by the app itself', () => {
  it('serves the app and its API over HTTP/2, many requests and live streams at once on one connection', async () => {
    const health = await request(session, '/api/health')
    expect(health.status).toBe(200)
    expect(session.alpnProtocol).toBe('h2')
    // Twelve live connections (more than HTTP/1.1's six per host) and a page, all on this one connection.
    const live = await Promise.all(Array.from({ length: 12 }, () => request(session, '/api/events', { headers: { cookie, accept: 'text/event-stream' }, onData: soFar => soFar.includes('event: ready') })))
    for (const stream of live) {
      expect(stream.status).toBe(200)
      expect(stream.headers['content-type']).toMatch(/text\/event-stream/)
      // No HTTP/1.1 connection headers, which HTTP/2 forbids.
      expect(stream.headers.connection).toBeUndefined()
    }
    const page = await request(session, '/', { headers: { cookie } })
    expect(page.status).toBe(200)
    expect(page.body).toContain('<div id="__nuxt"')
  })

  it('streams a background job to its end over HTTP/2', async () => {
    const started = await request(session, '/api/openrouter/stream', {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'or3/offline-demo', messages: [{ role: 'user', content: 'What time is it in Tokyo?' }], _background: true }),
    })
    expect(started.status, started.body).toBe(202)
    const { jobId } = JSON.parse(started.body) as { jobId: string }
    const stream = await request(session, `/api/jobs/${jobId}/stream`, { headers: { cookie, accept: 'text/event-stream' }, onData: soFar => /event: status\ndata: [^\n]*"complete"/.test(soFar) })
    expect(stream.status).toBe(200)
    expect(stream.body).toMatch(/event: (snapshot|delta)/)
    const job = JSON.parse((await request(session, `/api/jobs/${jobId}`, { headers: { cookie } })).body) as { status: string, content: string }
    expect(job.status).toBe('complete')
    expect(job.content).toMatch(/Tokyo/)
  })

  it('answers a client without HTTP/2 over HTTP/1.1 with TLS', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      // Node's https client offers only HTTP/1.1 (no ALPN "h2").
      httpsGet(`${app.url}/api/health`, { ca: certificate.cert }, (response) => {
        expect(response.httpVersion).toBe('1.1')
        response.resume()
        resolve(response.statusCode ?? 0)
      }).on('error', reject)
    })
    expect(status).toBe(200)
  })

  it('stops cleanly on SIGTERM with live streams open', async () => {
    const other = await servers.start()
    const otherSession = connect(other.url, { ca: certificate.cert })
    otherSession.on('error', () => {})
    const me = await request(otherSession, '/api/auth/me')
    const otherCookie = [me.headers['set-cookie'] ?? []].flat().map(line => line.split(';')[0]).join('; ')
    await request(otherSession, '/api/events', { headers: { cookie: otherCookie }, onData: soFar => soFar.includes('event: ready') })
    void request(otherSession, '/api/events', { headers: { cookie: otherCookie } }).catch(() => {})
    other.process.kill('SIGTERM')
    expect(await other.exited).toBe(0)
    otherSession.destroy()
  })
})

describe('TLS settings that cannot be used', () => {
  it('refuses to start naming the variable: a certificate without its key, a file that cannot be read, a file that is not PEM', async () => {
    const entry = await buildApp()
    const onlyCert = await startAppExpectingFailure(entry, { NUXT_TLS_CERT_FILE: certificate.certFile })
    expect(onlyCert.code).not.toBe(0)
    expect(onlyCert.output).toMatch(/NUXT_TLS_CERT_FILE and NUXT_TLS_KEY_FILE go together: set both .* only NUXT_TLS_CERT_FILE is set/)
    const missing = await startAppExpectingFailure(entry, { NUXT_TLS_CERT_FILE: certificate.certFile, NUXT_TLS_KEY_FILE: join(certificate.dir, 'nowhere.pem') })
    expect(missing.output).toMatch(/NUXT_TLS_KEY_FILE: cannot read .*nowhere\.pem \(ENOENT\)/)
    const notPem = join(certificate.dir, 'not-pem.txt')
    writeFileSync(notPem, 'not a key')
    const garbage = await startAppExpectingFailure(entry, { NUXT_TLS_CERT_FILE: certificate.certFile, NUXT_TLS_KEY_FILE: notPem })
    expect(garbage.code).not.toBe(0)
    expect(garbage.output).toMatch(/not a usable PEM certificate and key/)
    // The key's contents never reach the log.
    expect(garbage.output).not.toContain('not a key')
  })
})
