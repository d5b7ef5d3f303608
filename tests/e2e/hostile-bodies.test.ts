/**
 * Request bodies from an attacker, against the built server: every one is refused with a 4xx
 * that says what to fix, and other clients are answered while it happens.
 */
import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

const app = useBuiltApp({ NUXT_SESSION_PASSWORD: 'a-hostile-bodies-test-password-long-enough' })

/**
 * Streams `totalBytes` of a JSON string as a chunked body (no Content-Length), 64 KiB every few
 * milliseconds like a real upload, and resolves with the answer and how much had been written when
 * it arrived (the server may close the connection after answering: that is not an error here).
 */
function chunkedUpload(path: string, cookie: string, totalBytes: number): Promise<{ status: number, body: { message?: string }, bytesWritten: number }> {
  return new Promise((resolve, reject) => {
    let bytesWritten = 0
    let answered = false
    const request = httpRequest(`${app.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', cookie } }, (response) => {
      answered = true
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, body: JSON.parse(text), bytesWritten }))
    })
    request.on('error', error => answered ? undefined : reject(error))
    const piece = 'x'.repeat(64 * 1024)
    const writeMore = () => {
      if (answered || request.destroyed) return
      if (bytesWritten === 0) {
        request.write('{"model":"or3/offline-demo","messages":[{"role":"user","content":"')
      }
      if (bytesWritten >= totalBytes) return request.end('"}]}')
      bytesWritten += piece.length
      if (request.write(piece)) setTimeout(writeMore, 2)
      else request.once('drain', () => setTimeout(writeMore, 2))
    }
    writeMore()
  })
}

/**
 * Starts a POST declaring `declaredBytes` of JSON and sends only its first bytes, then waits (an
 * upload in progress, or a client trickling a body in). Resolves `answer` if the server answers
 * before the body is complete; `abort` drops the connection.
 */
function stalledUpload(path: string, cookie: string, declaredBytes: number): { answer: Promise<{ status: number, retryAfter?: string, body: { message?: string } }>, abort: () => void } {
  // A connection of its own (agent: false): a kept-alive socket the server has just closed after
  // an earlier answer would lose the upload without an answer.
  const request = httpRequest(`${app.url}${path}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json', 'content-length': String(declaredBytes), cookie } })
  const answer = new Promise<{ status: number, retryAfter?: string, body: { message?: string } }>((resolve) => {
    request.on('response', (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => resolve({ status: response.statusCode!, retryAfter: response.headers['retry-after'] as string | undefined, body: JSON.parse(text) }))
    })
  })
  request.on('error', () => {})
  request.write('{"model":"or3/offline-demo","content":"')
  return { answer, abort: () => request.destroy() }
}

function nestedArrays(depth: number): string {
  return `${'['.repeat(depth)}"deep"${']'.repeat(depth)}`
}

describe('hostile request bodies', () => {
  it('cuts off a chunked 5 MB upload at the 1 MiB limit with a 413, while another client is answered', async () => {
    const attacker = new SessionClient(app.url)
    const other = new SessionClient(app.url)
    await attacker.json('/api/jobs')
    const upload = chunkedUpload('/api/openrouter/stream', attacker.cookie, 5 * 1024 * 1024)
    expect((await other.fetch('/api/threads')).status).toBe(200)
    const answer = await upload
    expect(answer.status).toBe(413)
    expect(answer.body.message).toMatch(/over 1024 KiB/)
    // Refused while the body was still coming, not after reading all of it.
    expect(answer.bytesWritten).toBeLessThan(5 * 1024 * 1024)
    expect((await attacker.json('/api/jobs')).jobs).toEqual([])
  })

  it('refuses a third large upload from one address while two are still coming (429, Retry-After), answers other requests meanwhile, and frees the bytes when an upload is dropped', async () => {
    const client = new SessionClient(app.url)
    const thread = await client.json('/api/threads', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    const path = `/api/threads/${thread.id}/messages`
    const twentyMiB = 20 * 1024 * 1024
    // Three messages with files at their size, all still being sent: whichever reaches the server
    // last finds the other two holding 40 of the address's 48 MiB, and is the one answered, at once.
    const uploads = [0, 1, 2].map(() => stalledUpload(path, client.cookie, twentyMiB))
    const answer = await Promise.race(uploads.map(upload => upload.answer))
    expect(answer.status).toBe(429)
    expect(answer.retryAfter).toBe('5')
    expect(answer.body.message).toMatch(/already sending 40 MiB of requests; wait for them to finish/)
    // Small requests of the same address, and other clients, go on.
    expect((await client.fetch('/api/threads', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(201)
    expect((await new SessionClient(app.url).fetch('/api/threads')).status).toBe(200)
    // Dropped uploads give their bytes back: a complete 20 MiB body is read again (and refused for what it says, not for its size).
    for (const upload of uploads) upload.abort()
    const padding = 'x'.repeat(twentyMiB - 100)
    await expect.poll(async () => (await client.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model: 'or3/offline-demo', content: padding }) })).status, { timeout: 15_000 }).toBe(400)
  })

  it('cuts off a chunked workflow definition past 256 KiB, and saves nothing', async () => {
    const attacker = new SessionClient(app.url)
    await attacker.json('/api/workflows')
    const answer = await chunkedUpload('/api/workflows', attacker.cookie, 2 * 1024 * 1024)
    expect(answer.status).toBe(413)
    expect((await attacker.json('/api/workflows')).workflows).toEqual([])
  })

  it('refuses JSON nested thousands of levels deep with a 400 naming the limit, instead of a 500', async () => {
    const client = new SessionClient(app.url)
    const bodies: Array<[string, string]> = [
      ['/api/openrouter/stream', `{"model":"or3/offline-demo","messages":[{"role":"user","content":${nestedArrays(4_500)}}]}`],
      ['/api/openrouter/stream', `{"model":"or3/offline-demo","messages":[{"role":"assistant","content":"x","reasoning_details":[{"type":"reasoning.text","text":${nestedArrays(4_500)}}]},{"role":"user","content":"hi"}]}`],
      ['/api/workflows/validate', `{"definition":{"version":1,"name":"Deep","defaultModel":"m","nodes":[{"id":"start","kind":"start"},{"id":"t","kind":"tool","tool":"calculate","arguments":{"expression":${nestedArrays(4_500)}}}],"edges":[]}}`],
    ]
    for (const [path, body] of bodies) {
      const response = await client.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      expect(response.status, path).toBe(400)
      expect((await response.json()).message, path).toMatch(/more than 64 levels deep/)
    }
    expect((await client.fetch('/api/threads')).status).toBe(200)
  })

  it('refuses bodies that are not JSON (what a cross-site form sends) with a 415, starting nothing', async () => {
    const client = new SessionClient(app.url)
    const forms: Array<[string, Record<string, string>, string]> = [
      ['/api/openrouter/stream', { 'content-type': 'application/x-www-form-urlencoded' }, 'model=or3%2Foffline-demo&messages=hi'],
      ['/api/threads', { 'content-type': 'text/plain' }, '{"title":"from a form"}'],
      ['/api/threads', { 'content-type': 'multipart/form-data; boundary=x' }, '--x\r\nContent-Disposition: form-data; name="title"\r\n\r\nhi\r\n--x--\r\n'],
    ]
    for (const [path, headers, body] of forms) {
      const response = await client.fetch(path, { method: 'POST', headers, body })
      expect(response.status, `${headers['content-type']} to ${path}`).toBe(415)
      expect((await response.json()).message).toMatch(/Content-Type: application\/json/)
    }
    expect((await client.json('/api/threads')).threads).toEqual([])
    expect((await client.json('/api/jobs')).jobs).toEqual([])
  })

  it('answers a wrong method on an API path with a JSON 405 naming the allowed ones, not the app page', async () => {
    const client = new SessionClient(app.url)
    const cases: Array<[string, string, string]> = [
      ['DELETE', '/api/jobs', 'GET, HEAD'],
      ['PUT', '/api/threads', 'GET, HEAD, POST'],
      ['GET', '/api/jobs/some-job/abort', 'POST'],
      ['POST', '/api/threads/some-thread', 'DELETE, GET, HEAD, PATCH'],
    ]
    for (const [method, path, allow] of cases) {
      const response = await client.fetch(path, { method })
      expect(response.status, `${method} ${path}`).toBe(405)
      expect(response.headers.get('allow')).toBe(allow)
      expect((await response.json()).message).toMatch(/is not allowed on this path; use/)
    }
    expect((await client.fetch('/api/no-such-route', { method: 'DELETE' })).status).toBe(404)
    expect((await client.fetch('/api/jobs')).status).toBe(200)
  })

  it('answers a 100,000-character message on the demo model without freezing the server', async () => {
    const attacker = new SessionClient(app.url)
    const other = new SessionClient(app.url)
    const content = `What time is it in a${' '.repeat(100_000)}1`
    const jobId = await attacker.startJob({ model: 'or3/offline-demo', messages: [{ role: 'user', content }] })
    expect((await other.fetch('/api/threads')).status).toBe(200)
    expect((await waitForJobEnd(attacker, jobId)).status).toBe('complete')
  })

  it('keeps user input out of the HTTP status line', async () => {
    const client = new SessionClient(app.url)
    const response = await client.post('/api/threads', { title: 'x', ['k'.repeat(10_000)]: 1 })
    expect(response.status).toBe(400)
    expect(response.statusText.length).toBeLessThan(100)
    expect((await response.json()).message).toMatch(/Unrecognized key/)
  })
})
