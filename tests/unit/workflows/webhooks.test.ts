import { createHmac } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { checkStandardSignature, REPLAY_WINDOW_SECONDS, signatureMatches, webhookRunId, WorkflowWebhooks } from '../../../server/lib/workflows/webhooks'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { memoryLimiters } from '../../../server/lib/stores/rate-limits/limiters'

const secretBox = createSecretBox('a test secret that is long enough to use', 'workflow-webhooks')
const hmac = (secret: string, body: string) => createHmac('sha256', secret).update(body).digest('hex')

function hooks(runsPerMinute = 30, now?: () => number) {
  const settings = createMemoryAccountBackend()
  return { settings, webhooks: new WorkflowWebhooks({ settings, secretBox, limiterFor: memoryLimiters, runsPerMinute, ...(now ? { now } : {}) }) }
}

/** A Standard Webhooks call's headers, signed with `secret` (a `whsec_` secret's key is its base64). */
function standardHeaders(secret: string, id: string, timestamp: number, body: string): (name: string) => string | undefined {
  const key = secret.startsWith('whsec_') ? Buffer.from(secret.slice(6), 'base64') : Buffer.from(secret)
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
  const headers: Record<string, string> = { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${'A'.repeat(43)}= v1,${signature}` }
  return name => headers[name]
}
const tokenOf = (path: string) => path.split('/').pop()!
const noHeaders = () => undefined

describe('signatureMatches', () => {
  it('takes the HMAC-SHA256 of the raw body in hex, bare or as GitHub sends it, and nothing else', () => {
    const body = '{"ticket":"42"}'
    expect(signatureMatches('s3cret-signing-key', body, hmac('s3cret-signing-key', body))).toBe(true)
    expect(signatureMatches('s3cret-signing-key', body, `sha256=${hmac('s3cret-signing-key', body)}`)).toBe(true)
    expect(signatureMatches('s3cret-signing-key', `${body} `, hmac('s3cret-signing-key', body))).toBe(false)
    expect(signatureMatches('another-signing-key', body, hmac('s3cret-signing-key', body))).toBe(false)
    expect(signatureMatches('s3cret-signing-key', body, undefined)).toBe(false)
    expect(signatureMatches('s3cret-signing-key', body, 'sha256=not-hex')).toBe(false)
    expect(signatureMatches('s3cret-signing-key', body, 'ab'.repeat(31))).toBe(false)
  })
})

describe('workflow webhooks', () => {
  it('gives a call with an Idempotency-Key the run id of its hook and key (the same for every retry), and refuses a malformed key with 400', async () => {
    const { webhooks } = hooks()
    const token = tokenOf((await webhooks.create('w1', 'owner', undefined)).path)
    const withKey = (key: string) => (name: string) => name === 'idempotency-key' ? key : undefined
    const first = await webhooks.admit(token, '{}', withKey('delivery-7f3a'))
    expect(first.runId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect((await webhooks.admit(token, '{}', withKey('delivery-7f3a'))).runId).toBe(first.runId)
    expect((await webhooks.admit(token, '{}', withKey('delivery-7f3b'))).runId).not.toBe(first.runId)
    // Another hook (or the same one rotated) with the same key runs under another id.
    expect(webhookRunId(token.split('.')[0]!, 'delivery-7f3a')).toBe(first.runId)
    expect(webhookRunId('B'.repeat(22), 'delivery-7f3a')).not.toBe(first.runId)
    for (const bad of ['', 'has space', 'x'.repeat(256), 'é']) await expect(webhooks.admit(token, '{}', withKey(bad))).rejects.toMatchObject({ statusCode: 400, message: expect.stringContaining('Idempotency-Key') })
  })

  it('admits a call with its secret URL, keeps only the secret\'s hash, and refuses a wrong or rotated one', async () => {
    const { settings, webhooks } = hooks()
    const created = await webhooks.create('w1', 'owner', undefined)
    expect(created.path).toMatch(/^\/api\/hooks\/workflows\/[\w-]{22}\.[\w-]{43}$/)
    const token = tokenOf(created.path)
    expect(await webhooks.admit(token, '{}', noHeaders)).toEqual({ workflowId: 'w1', userId: 'owner' })
    const [hookId, secret] = token.split('.')
    expect(await settings.getSetting(`workflow-hook:${hookId}`)).not.toContain(secret!)
    await expect(webhooks.admit(`${hookId}.${'x'.repeat(43)}`, '{}', noHeaders)).rejects.toMatchObject({ statusCode: 401 })
    await expect(webhooks.admit('not-a-token', '{}', noHeaders)).rejects.toMatchObject({ statusCode: 401 })
    // Rotating makes a new URL; the old one stops working.
    const rotated = await webhooks.create('w1', 'owner', undefined)
    await expect(webhooks.admit(token, '{}', noHeaders)).rejects.toMatchObject({ statusCode: 401 })
    expect(await webhooks.admit(tokenOf(rotated.path), '{}', noHeaders)).toMatchObject({ workflowId: 'w1' })
    expect(await webhooks.status('w1')).toEqual({ exists: true, createdAt: expect.any(Number) })
    await webhooks.remove('w1')
    await expect(webhooks.admit(tokenOf(rotated.path), '{}', noHeaders)).rejects.toMatchObject({ statusCode: 401 })
    expect(await webhooks.status('w1')).toEqual({ exists: false })
  })

  it('checks the signature of a signed hook over the raw body, and keeps its signing secret sealed', async () => {
    const { settings, webhooks } = hooks()
    const created = await webhooks.create('w1', 'owner', { header: 'X-Signature-256', secret: 'a-signing-secret-of-length' })
    expect(created.signatureHeader).toBe('x-signature-256')
    const token = tokenOf(created.path)
    const body = '{"topic":"tides"}'
    const headers = (value: string | undefined) => (name: string) => (name === 'x-signature-256' ? value : undefined)
    expect(await webhooks.admit(token, body, headers(`sha256=${hmac('a-signing-secret-of-length', body)}`))).toMatchObject({ workflowId: 'w1' })
    await expect(webhooks.admit(token, body, headers(undefined))).rejects.toMatchObject({ statusCode: 401, message: expect.stringContaining('x-signature-256') })
    await expect(webhooks.admit(token, body, headers(hmac('wrong', body)))).rejects.toMatchObject({ statusCode: 401 })
    expect(await settings.getSetting(`workflow-hook:${token.split('.')[0]}`)).not.toContain('a-signing-secret-of-length')
  })

  it('counts calls per hook against its rate: 429 with when to try again', async () => {
    const { webhooks } = hooks(2)
    const token = tokenOf((await webhooks.create('w1', 'owner', undefined)).path)
    const other = tokenOf((await webhooks.create('w2', 'owner', undefined)).path)
    await webhooks.admit(token, '{}', noHeaders)
    await webhooks.admit(token, '{}', noHeaders)
    const refusal = await webhooks.admit(token, '{}', noHeaders).catch(error => error)
    expect(refusal).toMatchObject({ statusCode: 429 })
    expect(refusal.httpAnswer()).toMatchObject({ statusCode: 429, refusedBy: 'webhook_rate', retryAfterSeconds: expect.any(Number) })
    // Another hook has its own count.
    expect(await webhooks.admit(other, '{}', noHeaders)).toMatchObject({ workflowId: 'w2' })
  })

  it('takes Standard Webhooks calls: signed id, timestamp and body, within the window; a repeated id is the same run', async () => {
    let now = 1_790_000_000_000
    const { webhooks } = hooks(30, () => now)
    const created = await webhooks.create('w1', 'owner', { scheme: 'standard-webhooks', secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw' })
    expect(created).toMatchObject({ signatureScheme: 'standard-webhooks', signatureHeader: 'webhook-signature' })
    const token = tokenOf(created.path)
    const body = '{"ticket":"7"}'
    const seconds = Math.floor(now / 1000)
    const first = await webhooks.admit(token, body, standardHeaders('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_1', seconds, body))
    expect(first.runId).toBeDefined()
    // The same delivery again (a retry, or a replay) names the same run: the route answers with it, never a second.
    expect((await webhooks.admit(token, body, standardHeaders('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_1', seconds, body))).runId).toBe(first.runId)
    expect((await webhooks.admit(token, body, standardHeaders('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_2', seconds, body))).runId).not.toBe(first.runId)
    // An unsigned Idempotency-Key cannot name another delivery of a signed hook.
    const withKey = standardHeaders('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_1', seconds, body)
    expect((await webhooks.admit(token, body, name => (name === 'idempotency-key' ? 'other' : withKey(name)))).runId).toBe(first.runId)
    // Past the window: refused, saying how far off it is.
    now += (REPLAY_WINDOW_SECONDS + 5) * 1000
    await expect(webhooks.admit(token, body, standardHeaders('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_1', seconds, body))).rejects.toMatchObject({ statusCode: 401, message: expect.stringMatching(/305 s away from this server's clock; at most 300/) })
    // Another id on the same signature, another body, another key, or no headers: refused.
    const fresh = Math.floor(now / 1000)
    const good = standardHeaders('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'msg_3', fresh, body)
    await expect(webhooks.admit(token, body, name => (name === 'webhook-id' ? 'msg_4' : good(name)))).rejects.toMatchObject({ statusCode: 401, message: expect.stringContaining('does not match') })
    await expect(webhooks.admit(token, `${body} `, good)).rejects.toMatchObject({ statusCode: 401 })
    await expect(webhooks.admit(token, body, standardHeaders('whsec_b3RoZXIta2V5LW9mLXRoZS1zYW1lLWxlbmd0aA==', 'msg_3', fresh, body))).rejects.toMatchObject({ statusCode: 401 })
    await expect(webhooks.admit(token, body, noHeaders)).rejects.toMatchObject({ statusCode: 401, message: expect.stringContaining('webhook-id') })
    expect(await webhooks.admit(token, body, good)).toMatchObject({ workflowId: 'w1' })
  })

  it('makes a body-signed call\'s body its delivery: the same signed body twice is one run', async () => {
    const { webhooks } = hooks()
    const token = tokenOf((await webhooks.create('w1', 'owner', { header: 'X-Hub-Signature-256', secret: 'a-signing-secret-of-length' })).path)
    const signed = (body: string) => (name: string) => (name === 'x-hub-signature-256' ? `sha256=${hmac('a-signing-secret-of-length', body)}` : name === 'idempotency-key' ? String(Math.random()) : undefined)
    const first = await webhooks.admit(token, '{"a":1}', signed('{"a":1}'))
    expect((await webhooks.admit(token, '{"a":1}', signed('{"a":1}'))).runId).toBe(first.runId)
    expect((await webhooks.admit(token, '{"a":2}', signed('{"a":2}'))).runId).not.toBe(first.runId)
  })

  it('checks a Standard Webhooks signature with a plain secret as its UTF-8 bytes', () => {
    const headers = standardHeaders('a-plain-signing-secret', 'evt_9', 1_790_000_000, '{}')
    expect(checkStandardSignature('a-plain-signing-secret', '{}', headers, 1_790_000_000_000)).toEqual({ id: 'evt_9' })
    expect(checkStandardSignature('a-plain-signing-secret', '{}', name => (name === 'webhook-signature' ? 'v1,' + 'x'.repeat(10) : headers(name)), 1_790_000_000_000)).toMatchObject({ refusal: expect.any(String) })
  })
})
