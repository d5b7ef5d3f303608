import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addressRefusal, allowedNetworks } from '../../../../server/lib/tools/web/address-guard'
import { guardedFetch, WebFetchError, type GuardedFetchOptions } from '../../../../server/lib/tools/web/guarded-fetch'
import { readablePage } from '../../../../server/lib/tools/web/readable-page'

let server: Server
let base: string
const hung: Array<() => void> = []

beforeAll(async () => {
  server = createServer((request, response) => {
    switch (request.url) {
      case '/article':
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
        response.end(`<!doctype html><html><head><title>Knots</title><script>alert(1)</script></head><body><nav>Home · About</nav>
          <article><h1>Knots for sailors</h1><p>${'The bowline makes a fixed loop at the end of a line. '.repeat(12)}</p><ul><li>Bowline</li><li>Cleat hitch</li></ul></article>
          <footer>© Somebody</footer></body></html>`)
        return
      case '/to-metadata':
        response.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' })
        response.end()
        return
      case '/to-article':
        response.writeHead(301, { location: '/article' })
        response.end()
        return
      case '/loop':
        response.writeHead(302, { location: '/loop' })
        response.end()
        return
      case '/big':
        response.writeHead(200, { 'content-type': 'text/plain' })
        response.end('x'.repeat(100_000))
        return
      case '/hang':
        hung.push(() => response.end())
        return
      default:
        response.writeHead(200, { 'content-type': 'application/json' })
        response.end('{"ok":true}')
    }
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  for (const end of hung) end()
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
})

const options = (extra: Partial<GuardedFetchOptions> = {}): GuardedFetchOptions => ({ maxBytes: 1_000_000, timeoutMs: 10_000, maxRedirects: 3, userAgent: 'or3-test', ...extra })
const loopback = allowedNetworks(['127.0.0.1/32'])

describe('the address guard', () => {
  it('refuses private, loopback, link-local, metadata, reserved and IPv4-in-IPv6 addresses, and lets public ones and the operator\'s through', () => {
    for (const address of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '64:ff9b::a9fe:a9fe', '2002:7f00:1::']) {
      expect(addressRefusal(address), address).toMatch(/private, loopback, link-local or reserved/)
    }
    for (const address of ['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111']) expect(addressRefusal(address), address).toBeUndefined()
    expect(addressRefusal('10.1.2.3', allowedNetworks(['10.0.0.0/8']))).toBeUndefined()
    expect(addressRefusal('10.1.2.3', allowedNetworks(['10.9.9.9']))).toBeDefined()
    expect(() => allowedNetworks(['intranet'])).toThrow(/not an IP address or network/)
  })
})

describe('a guarded fetch', () => {
  it('refuses the server\'s own network by address, by a name that resolves there, and by a redirect there', async () => {
    await expect(guardedFetch(`${base}/article`, options())).rejects.toThrow(/127\.0\.0\.1:\d+ cannot be fetched: 127\.0\.0\.1 is a private, loopback/)
    await expect(guardedFetch('http://[::1]/', options())).rejects.toThrow(/cannot be fetched/)
    // DNS that answers a private address (even among public ones) gets nothing private.
    const resolve = async () => [{ address: '127.0.0.1', family: 4 }]
    await expect(guardedFetch(`http://innocent.example:${new URL(base).port}/article`, options({ resolve }))).rejects.toThrow(new WebFetchError('innocent.example cannot be fetched: 127.0.0.1 is a private, loopback, link-local or reserved address.'))
    // Allowed to reach the test server, but not where it redirects.
    await expect(guardedFetch(`${base}/to-metadata`, options({ allowed: loopback }))).rejects.toThrow(/169\.254\.169\.254 cannot be fetched/)
    await expect(guardedFetch('file:///etc/passwd', options())).rejects.toThrow(/Only http and https/)
    await expect(guardedFetch(`http://user:secret@example.com/`, options())).rejects.toThrow(/user name or password/)
  })

  it('follows redirects within the limit, cuts a long body, and ends a hung one at its deadline while others are answered', async () => {
    const page = await guardedFetch(`${base}/to-article`, options({ allowed: loopback }))
    expect(page).toMatchObject({ url: `${base}/article`, status: 200, truncated: false })
    await expect(guardedFetch(`${base}/loop`, options({ allowed: loopback }))).rejects.toThrow(/redirected more than 3 times/)
    const big = await guardedFetch(`${base}/big`, options({ allowed: loopback, maxBytes: 10_000 }))
    expect(big).toMatchObject({ truncated: true })
    expect(big.body.byteLength).toBe(10_000)
    const hanging = guardedFetch(`${base}/hang`, options({ allowed: loopback, timeoutMs: 1_000 }))
    expect((await guardedFetch(`${base}/json`, options({ allowed: loopback }))).body.toString()).toBe('{"ok":true}')
    await expect(hanging).rejects.toThrow(/did not answer within 1 s/)
  })

  it('reads an article as Markdown without its scripts, navigation or footer', async () => {
    const page = await guardedFetch(`${base}/article`, options({ allowed: loopback }))
    const readable = await readablePage(page.body, page.contentType, 50_000)
    expect(readable.title).toBe('Knots')
    expect(readable.text).toContain('The bowline makes a fixed loop')
    expect(readable.text).toMatch(/^-\s+Bowline$/m)
    expect(readable.text).not.toMatch(/alert|Home · About|© Somebody/)
    expect((await readablePage(Buffer.from('{"a":[1,2]}'), 'application/json', 100)).text).toBe('{\n  "a": [\n    1,\n    2\n  ]\n}')
    expect(await readablePage(Buffer.from('y'.repeat(50)), 'text/plain', 10)).toMatchObject({ cut: true, text: expect.stringMatching(/^y{10}\n\n\[… cut at 10 characters\]$/) })
    await expect(readablePage(Buffer.from([0x89, 0x50]), 'image/png', 100)).rejects.toThrow(/image\/png, not text or HTML/)
  })
})
