import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { FailureWebhooks, webhookSignature } from '../../../server/lib/workflows/failure-webhooks'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { allowedNetworks } from '../../../server/lib/tools/web/address-guard'

/** A receiver on loopback that answers each call with the next status, and records what it got. */
async function receiver(statuses: number[]) {
  const calls: Array<{ headers: IncomingHttpHeaders, body: string }> = []
  const server: Server = createServer((request, response) => {
    let body = ''
    request.on('data', (part: Buffer) => (body += part.toString()))
    request.on('end', () => {
      calls.push({ headers: request.headers, body })
      const status = statuses[calls.length - 1] ?? 200
      if (status === 302) response.writeHead(302, { location: 'http://127.0.0.1:1/elsewhere' }).end()
      else response.writeHead(status).end('ok')
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { calls, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks/T0KEN-in-the-path`, close: () => new Promise(resolve => server.close(resolve)) }
}

const closing: Array<() => Promise<unknown>> = []
afterEach(async () => {
  await Promise.all(closing.splice(0).map(close => close()))
})

function hooks(allowLoopback = true) {
  const settings = new Map<string, string>()
  const store = {
    getSetting: async (key: string) => settings.get(key) ?? null,
    setSetting: async (key: string, value: string) => void settings.set(key, value),
    deleteSettings: async (prefix: string) => [...settings.keys()].filter(key => key.startsWith(prefix)).forEach(key => settings.delete(key)),
  }
  const waits: number[] = []
  const webhooks = new FailureWebhooks({ settings: store, secretBox: createSecretBox('a test secret that is long enough to use', 'failure-webhooks'), guard: { allowed: allowLoopback ? allowedNetworks(['127.0.0.1']) : undefined }, userAgent: 'test', wait: async ms => void waits.push(ms) })
  return { webhooks, settings, waits }
}

describe('failure webhooks', () => {
  it('keep the URL sealed and show its host only, and sign each call the Standard Webhooks way', async () => {
    const target = await receiver([200])
    closing.push(target.close)
    const { webhooks, settings } = hooks()
    const { secret, status } = await webhooks.set('w1', 'a', target.url)
    expect(secret).toMatch(/^whsec_/)
    expect(status).toEqual({ exists: true, host: new URL(target.url).host, createdAt: expect.any(Number) })
    expect([...settings.values()].join()).not.toContain('T0KEN')
    expect([...settings.values()].join()).not.toContain(secret)
    expect(await webhooks.call('w1', 'a', 'msg-1', { type: 'workflow.run.failed', error: 'boom' })).toBe(true)
    const [call] = target.calls
    expect(JSON.parse(call!.body)).toEqual({ type: 'workflow.run.failed', error: 'boom' })
    expect(call!.headers).toMatchObject({ 'webhook-id': 'msg-1', 'idempotency-key': 'msg-1', 'content-type': 'application/json' })
    expect(call!.headers['webhook-signature']).toBe(webhookSignature(secret, 'msg-1', Number(call!.headers['webhook-timestamp']), call!.body))
    // Another person's run, or a workflow without a hook: no call.
    expect(await webhooks.call('w1', 'b', 'msg-2', {})).toBe(false)
    expect(await webhooks.call('w2', 'a', 'msg-3', {})).toBe(false)
    await webhooks.remove('w1')
    expect(await webhooks.status('w1')).toEqual({ exists: false })
  })

  it('try a failing receiver three times a moment apart, a refusing one once, and never follow a redirect', async () => {
    const flaky = await receiver([503, 500, 200])
    const refusing = await receiver([400])
    const redirecting = await receiver([302])
    closing.push(flaky.close, refusing.close, redirecting.close)
    const { webhooks, waits } = hooks()
    await webhooks.set('flaky', 'a', flaky.url)
    expect(await webhooks.call('flaky', 'a', 'id', {})).toBe(true)
    expect(flaky.calls).toHaveLength(3)
    expect(flaky.calls.map(call => call.headers['webhook-id'])).toEqual(['id', 'id', 'id'])
    expect(waits).toEqual([1_000, 2_000])
    await webhooks.set('refusing', 'a', refusing.url)
    await expect(webhooks.call('refusing', 'a', 'id', {})).rejects.toThrow(/answered 400/)
    expect(refusing.calls).toHaveLength(1)
    await webhooks.set('redirecting', 'a', redirecting.url)
    await expect(webhooks.call('redirecting', 'a', 'id', {})).rejects.toThrow(/redirect/)
  })

  it('reach the server\'s own network only where the operator allows it, and refuse URLs that cannot be hooks', async () => {
    const target = await receiver([200])
    closing.push(target.close)
    const { webhooks } = hooks(false)
    await webhooks.set('w1', 'a', target.url)
    await expect(webhooks.call('w1', 'a', 'id', {})).rejects.toThrow(/cannot be fetched/)
    expect(target.calls).toHaveLength(0)
    await expect(webhooks.set('w1', 'a', 'ftp://example.com/x')).rejects.toThrow(/https/)
    await expect(webhooks.set('w1', 'a', 'https://user:pass@example.com/x')).rejects.toThrow(/user name or password/)
    await expect(webhooks.set('w1', 'a', 'not a url')).rejects.toThrow(/full URL/)
  })
})
