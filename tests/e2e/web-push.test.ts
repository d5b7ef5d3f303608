/**
 * Web Push against the built server (issue 54). Chromium's own push service cannot be reached
 * here, so the device is this test: it subscribes with its own P-256 key pair and auth secret and
 * a push endpoint on loopback, and decrypts what arrives (RFC 8291, aes128gcm) with its keys.
 */
import { createDecipheriv, createECDH, createHmac, randomBytes, type ECDH } from 'node:crypto'
import { createServer, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

const app = useBuiltApp({
  NUXT_SESSION_PASSWORD: 'a-web-push-test-session-password-long-enough',
  NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0',
  NUXT_THREADS_GENERATE_TITLES: 'false',
  // The push endpoint below is on loopback: the guard lets pushes reach it only because of this.
  NUXT_TOOLS_WEB_ALLOWED_NETWORKS: '127.0.0.1',
  NUXT_PUSH_SUBJECT: 'mailto:ops@example.com',
})

interface Received { path: string, headers: IncomingMessage['headers'], body: Buffer }
const received: Received[] = []
/** Paths the push service says are gone (410). */
const gone = new Set<string>()
const service = createServer((request, response) => {
  const chunks: Buffer[] = []
  request.on('data', chunk => chunks.push(chunk as Buffer))
  request.on('end', () => {
    received.push({ path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks) })
    response.writeHead(gone.has(request.url ?? '') ? 410 : 201).end()
  })
})
let serviceUrl = ''
beforeAll(async () => {
  await new Promise<void>(resolve => service.listen(0, '127.0.0.1', resolve))
  serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>(resolve => service.close(() => resolve())))

/** A device: its key pair and auth secret, as a browser's push subscription holds them. */
function device(): { ecdh: ECDH, auth: Buffer, keys: { p256dh: string, auth: string } } {
  const ecdh = createECDH('prime256v1')
  ecdh.generateKeys()
  const auth = randomBytes(16)
  return { ecdh, auth, keys: { p256dh: ecdh.getPublicKey().toString('base64url'), auth: auth.toString('base64url') } }
}

const hmac = (key: Buffer, data: Buffer) => createHmac('sha256', key).update(data).digest()

/** Decrypts an aes128gcm push body with the device's keys (RFC 8291 §3.4, RFC 8188). */
function decrypt(body: Buffer, ecdh: ECDH, auth: Buffer): string {
  const salt = body.subarray(0, 16)
  const idLength = body[20]!
  const serverPublic = body.subarray(21, 21 + idLength)
  const ciphertext = body.subarray(21 + idLength)
  const ikm = hmac(hmac(auth, ecdh.computeSecret(serverPublic)), Buffer.concat([Buffer.from('WebPush: info\0'), ecdh.getPublicKey(), serverPublic, Buffer.from([1])]))
  const prk = hmac(salt, ikm)
  const key = hmac(prk, Buffer.from('Content-Encoding: aes128gcm\0\x01', 'binary')).subarray(0, 16)
  const nonce = hmac(prk, Buffer.from('Content-Encoding: nonce\0\x01', 'binary')).subarray(0, 12)
  const decipher = createDecipheriv('aes-128-gcm', key, nonce)
  decipher.setAuthTag(ciphertext.subarray(-16))
  const plain = Buffer.concat([decipher.update(ciphertext.subarray(0, -16)), decipher.final()])
  // The last record ends with the delimiter 2, then any zero padding.
  let end = plain.length - 1
  while (plain[end] === 0) end--
  expect(plain[end]).toBe(2)
  return plain.subarray(0, end).toString('utf8')
}

describe('Web Push', () => {
  it('pushes "answer ready" to a device with every tab closed, encrypted for its keys and signed with the server\'s VAPID key', async () => {
    const client = new SessionClient(app.url)
    const { publicKey } = await client.json<{ publicKey: string }>('/api/push/key')
    expect(Buffer.from(publicKey, 'base64url')).toHaveLength(65)
    // The same key on every ask (made once, kept sealed).
    expect((await client.json<{ publicKey: string }>('/api/push/key')).publicKey).toBe(publicKey)

    const phone = device()
    const added = await client.post('/api/push/subscriptions', { endpoint: `${serviceUrl}/push/phone`, expirationTime: null, keys: phone.keys, label: 'Test phone' })
    expect(added.status).toBe(201)
    expect((await client.json('/api/push/subscriptions')).devices).toEqual([expect.objectContaining({ label: 'Test phone', host: new URL(serviceUrl).host })])

    // An answer nobody watches: its end leaves a note, and the note is pushed.
    const jobId = await client.startJob({ model: 'or3/offline-demo', messages: [{ role: 'user', content: 'Say hello' }] })
    const job = await waitForJobEnd(client, jobId)
    expect(job.status).toBe('complete')
    await expect.poll(() => received.filter(push => push.path === '/push/phone').length, { timeout: 15_000 }).toBe(1)
    const push = received.find(item => item.path === '/push/phone')!
    expect(push.headers['content-encoding']).toBe('aes128gcm')
    expect(Number(push.headers.ttl)).toBeGreaterThan(0)
    expect(push.headers.authorization).toMatch(new RegExp(`^vapid t=[\\w-]+\\.[\\w-]+\\.[\\w-]+, k=${publicKey}$`))
    const claims = JSON.parse(Buffer.from(String(push.headers.authorization).split(/[ .,]/)[2]!, 'base64url').toString()) as { aud: string, sub: string, exp: number }
    expect(claims).toMatchObject({ aud: serviceUrl, sub: 'mailto:ops@example.com' })
    const message = JSON.parse(decrypt(push.body, phone.ecdh, phone.auth)) as { title: string, body: string, url: string, tag: string }
    expect(message).toMatchObject({ title: 'Your answer is ready', url: `/chat/${job.threadId}`, tag: jobId })
    expect(message.body.length).toBeGreaterThan(0)
    // Decrypting with another device's keys fails: the push is for this device only.
    const other = device()
    expect(() => decrypt(push.body, other.ecdh, other.auth)).toThrow()
  })

  it('forgets a device its push service says is gone, turns one off on request, and refuses bad subscriptions with what to fix', async () => {
    const client = new SessionClient(app.url)
    const laptop = device()
    const old = device()
    expect((await client.post('/api/push/subscriptions', { endpoint: `${serviceUrl}/push/laptop`, keys: laptop.keys, label: 'Laptop' })).status).toBe(201)
    expect((await client.post('/api/push/subscriptions', { endpoint: `${serviceUrl}/push/old`, keys: old.keys, label: 'Old tablet' })).status).toBe(201)
    gone.add('/push/old')
    const jobId = await client.startJob({ model: 'or3/offline-demo', messages: [{ role: 'user', content: 'Say hi' }] })
    await waitForJobEnd(client, jobId)
    await expect.poll(async () => (await client.json<{ devices: Array<{ label: string }> }>('/api/push/subscriptions')).devices.map(item => item.label), { timeout: 15_000 }).toEqual(['Laptop'])
    expect(received.filter(push => push.path === '/push/laptop')).toHaveLength(1)

    const [laptopDevice] = (await client.json<{ devices: Array<{ id: string }> }>('/api/push/subscriptions')).devices
    expect((await client.fetch(`/api/push/subscriptions/${laptopDevice!.id}`, { method: 'DELETE' })).status).toBe(204)
    expect((await client.fetch(`/api/push/subscriptions/${laptopDevice!.id}`, { method: 'DELETE' })).status).toBe(404)
    expect((await client.json('/api/push/subscriptions')).devices).toEqual([])

    for (const [body, fix] of [
      [{ endpoint: 'ftp://push.example.com/x', keys: laptop.keys }, /endpoint/],
      [{ endpoint: `${serviceUrl}/push/x`, keys: { p256dh: laptop.keys.p256dh, auth: 'c2hvcnQ' } }, /16 bytes.*keys\.auth/s],
      [{ endpoint: `${serviceUrl}/push/x`, keys: { p256dh: 'x'.repeat(5000), auth: laptop.keys.auth } }, /p256dh/],
    ] as const) {
      const refused = await client.post('/api/push/subscriptions', body)
      expect(refused.status).toBe(400)
      expect((await refused.json()).message).toMatch(fix)
    }
    // Someone else's devices are theirs: another person sees none and removes none.
    const stranger = new SessionClient(app.url)
    expect((await stranger.json('/api/push/subscriptions')).devices).toEqual([])
  })

  it('keeps at most ten devices a person, saying so', async () => {
    const client = new SessionClient(app.url)
    for (let index = 0; index < 10; index++) {
      expect((await client.post('/api/push/subscriptions', { endpoint: `${serviceUrl}/push/many-${index}`, keys: device().keys })).status).toBe(201)
    }
    const over = await client.post('/api/push/subscriptions', { endpoint: `${serviceUrl}/push/many-10`, keys: device().keys })
    expect(over.status).toBe(409)
    expect((await over.json()).message).toMatch(/10 devices/)
    // The same device again is the same device (its keys renewed), not an eleventh.
    expect((await client.post('/api/push/subscriptions', { endpoint: `${serviceUrl}/push/many-3`, keys: device().keys })).status).toBe(201)
  })
})
