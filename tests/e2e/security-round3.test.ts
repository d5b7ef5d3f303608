/**
 * The third security round (issue 27) against the built server, one test per finding: each attack
 * fails with a 4xx that says why, and another client is answered while it happens.
 */
import { readFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { SessionClient } from '../support/job-stream-client'
import { useAppServers, type RunningApp } from '../support/built-app'

const servers = useAppServers({ NUXT_SESSION_PASSWORD: 'a-security-round-three-password-long-enough' })
const start = servers.start
const password = 'correct horse battery staple'

/** A request with any headers, Host included (fetch cannot set Host). */
function raw(app: RunningApp, path: string, options: { method?: string, headers?: Record<string, string>, body?: unknown } = {}): Promise<{ status: number, body: any, headers: Record<string, string | string[] | undefined> }> {
  const url = new URL(path, app.url)
  const body = options.body === undefined ? undefined : JSON.stringify(options.body)
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, { method: options.method ?? 'GET', headers: { ...(body ? { 'content-type': 'application/json' } : {}), ...options.headers } }, (response) => {
      let text = ''
      response.setEncoding('utf8')
      response.on('data', (chunk: string) => (text += chunk))
      response.on('end', () => {
        let parsed: unknown = text
        try {
          parsed = JSON.parse(text)
        } catch {}
        resolve({ status: response.statusCode!, body: parsed, headers: response.headers })
      })
    })
    request.on('error', reject)
    request.end(body)
  })
}

/** The resident memory of the server process, from /proc (Linux). */
function residentBytes(app: RunningApp): number {
  const status = readFileSync(`/proc/${app.process.pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+) kB/.exec(status)![1]) * 1024
}

async function createAdmin(app: RunningApp): Promise<SessionClient> {
  const admin = new SessionClient(app.url)
  const created = await admin.post('/api/auth/register', { name: 'Root', password })
  expect(created.status, await created.clone().text()).toBe(201)
  return admin
}

/** A browser tool whose schema has `clauses` allOf/not clauses (each costs compilation, were it compiled). */
function heavyTool(index: number, clauses: number) {
  return {
    name: `heavy_${index}`,
    description: 'A tool whose schema would be slow to compile.',
    parameters: { type: 'object', allOf: Array.from({ length: clauses }, (_, clause) => ({ not: { properties: { [`p${clause % 7}`]: { minLength: clause + index } } } })) },
  }
}

describe('1. validating a request costs nothing before sign-in, and little after', () => {
  it('answers 401 without reading the body when guests are off, bounds schemas for a guest, and keeps its memory while others are answered', async () => {
    const closed = await start({ NUXT_AUTH_GUESTS: 'false' })
    const stranger = await raw(closed, '/api/openrouter/stream', { method: 'POST', body: { model: 'x', messages: [], _clientTools: Array.from({ length: 16 }, (_, index) => heavyTool(index, 24)) } })
    expect(stranger.status).toBe(401)

    const open = await start()
    const attacker = new SessionClient(open.url)
    await attacker.json('/api/jobs')
    // Over the subschema bound: 400 naming the tool and what to fix.
    const tooMany = await attacker.post('/api/openrouter/stream', { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }], _background: true, _clientTools: [heavyTool(0, 40)] })
    expect(tooMany.status).toBe(400)
    expect((await tooMany.json()).message).toMatch(/parameters has more than 100 subschemas.*→ at _clientTools\[0\]/)
    // Schemas under the bound, all different, many times: checked as data, never compiled, so
    // memory stays put and other clients are answered meanwhile.
    const before = residentBytes(open)
    const other = new SessionClient(open.url)
    for (let round = 0; round < 10; round++) {
      const attacks = Array.from({ length: 5 }, (_, batch) => attacker.post('/api/openrouter/stream', { model: 'openai/gpt-4o-mini', messages: [], _clientTools: Array.from({ length: 16 }, (_, index) => heavyTool(round * 1_000 + batch * 100 + index, 24)) }))
      expect((await other.fetch('/api/health')).status).toBe(200)
      for (const response of await Promise.all(attacks)) {
        expect(response.status).toBe(400)
        expect(await response.text()).toMatch(/send at least one message/)
      }
    }
    expect(residentBytes(open) - before).toBeLessThan(64 * 1024 * 1024)
  }, 120_000)
})

describe('2, 4. accounts: guesses at once, and tokens', () => {
  let app: RunningApp
  let admin: SessionClient
  beforeAll(async () => {
    app = await start({ NUXT_AUTH_SIGN_IN_FAILURES_PER_ACCOUNT: '10' })
    admin = await createAdmin(app)
  }, 60_000)

  it('checks at most 10 of 30 guesses sent at once at one name; the rest get 429 unchecked', async () => {
    const guesses = await Promise.all(Array.from({ length: 30 }, () => new SessionClient(app.url).post('/api/auth/login', { name: 'Root', password: 'a wrong guess' })))
    const statuses = guesses.map(response => response.status)
    expect(statuses.filter(status => status === 401)).toHaveLength(10)
    expect(statuses.filter(status => status === 429)).toHaveLength(20)
    expect((await new SessionClient(app.url).fetch('/api/health')).status).toBe(200)
  })

  it('mints a token only with the password, and ends every token with "sign out everywhere" and a password reset', async () => {
    expect((await admin.post('/api/admin/users', { name: 'Bea', password })).status).toBe(201)
    const bea = new SessionClient(app.url)
    expect((await bea.post('/api/auth/login', { name: 'Bea', password })).status).toBe(200)
    expect((await bea.post('/api/auth/tokens', { name: 'script' })).status).toBe(400)
    const wrong = await bea.post('/api/auth/tokens', { name: 'script', password: 'not her password' })
    expect(wrong.status).toBe(403)
    expect((await wrong.json()).message).toMatch(/not your password/)
    const mint = async () => (await (await bea.post('/api/auth/tokens', { name: 'script', password })).json()).token as string
    const asToken = (token: string) => fetch(`${app.url}/api/threads`, { headers: { authorization: `Bearer ${token}` } })
    const first = await mint()
    expect((await asToken(first)).status).toBe(200)
    // A holder of the token (or a session) cannot mint another without the password either.
    expect((await fetch(`${app.url}/api/auth/tokens`, { method: 'POST', headers: { 'authorization': `Bearer ${first}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'more' }) })).status).toBe(400)
    expect((await bea.post('/api/auth/logout', { everywhere: true })).status).toBe(200)
    expect((await asToken(first)).status).toBe(401)

    expect((await bea.post('/api/auth/login', { name: 'Bea', password })).status).toBe(200)
    const second = await mint()
    const beaId = (await bea.json('/api/auth/me')).user.id
    expect((await admin.fetch(`/api/admin/users/${beaId}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'a brand new password' }) })).status).toBe(200)
    expect((await asToken(second)).status).toBe(401)
  })
})

describe('8, 9, 10. admins, guests becoming accounts, and MCP secrets', () => {
  it('leaves an admin when two demote each other at once, makes one account of two sign-ups from one guest, and keeps a saved secret from a new address', async () => {
    const app = await start({ NUXT_AUTH_GUESTS: 'true' })
    const root = await createAdmin(app)
    expect((await root.post('/api/admin/users', { name: 'Second', password })).status).toBe(201)
    const users = await root.json('/api/admin/users') as Array<{ id: string, name: string }>
    const second = users.find(user => user.name === 'Second')!
    expect((await root.fetch(`/api/admin/users/${second.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ role: 'admin' }) })).status).toBe(200)
    const secondSession = new SessionClient(app.url)
    expect((await secondSession.post('/api/auth/login', { name: 'Second', password })).status).toBe(200)
    const rootId = users.find(user => user.name === 'Root')!.id
    const demote = (who: SessionClient, id: string) => who.fetch(`/api/admin/users/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ role: 'user' }) })
    const [a, b] = await Promise.all([demote(root, second.id), demote(secondSession, rootId)])
    // One wins; the other is refused: 409 when both passed the admin check before either applied
    // (the store's transaction), 403 when the winner's change came first.
    expect([a.status, b.status].filter(status => status === 200)).toHaveLength(1)
    expect([a.status, b.status].find(status => status !== 200)).toBeOneOf([403, 409])
    const admins = (await (a.status === 200 ? root : secondSession).json('/api/admin/users') as Array<{ role: string, disabled: boolean }>).filter(user => user.role === 'admin' && !user.disabled)
    expect(admins).toHaveLength(1)

    // One guest cookie, two sign-ups at once: one account, and a 409 that says why (never a 500).
    const adminSession = a.status === 200 ? root : secondSession
    expect((await adminSession.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signup: 'open' }) })).status).toBe(200)
    const guest = new SessionClient(app.url)
    await guest.json('/api/jobs')
    const twin = new SessionClient(app.url)
    twin.cookie = guest.cookie
    const [first, other] = await Promise.all([guest.post('/api/auth/register', { name: 'Gus', password, keepGuestData: true }), twin.post('/api/auth/register', { name: 'Gwen', password, keepGuestData: true })])
    expect([first.status, other.status].sort()).toEqual([201, 409])
    const refused = first.status === 409 ? first : other
    expect((await refused.json()).message).toMatch(/already became an account|is taken/)

    // An MCP server's saved header does not follow it to a new address.
    const put = (body: unknown) => adminSession.fetch('/api/admin/mcp-servers/remote', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
    expect((await put({ url: 'http://127.0.0.1:9/mcp', headers: { Authorization: 'Bearer sk-kept-secret' }, timeoutMs: 1_000 })).status).toBe(200)
    const moved = await put({ url: 'https://collector.example/mcp', headers: { Authorization: '••••••••' }, timeoutMs: 1_000 })
    expect(moved.status).toBe(400)
    expect((await moved.json()).message).toMatch(/address changed, so the saved header Authorization is not sent to the new one/)
    expect((await new SessionClient(app.url).fetch('/api/health')).status).toBe(200)
  })
})

describe('3, 5. the client address behind a proxy, and streams per address', () => {
  let app: RunningApp
  beforeAll(async () => {
    app = await start({ NUXT_LIMITS_TRUST_PROXY: 'true', NUXT_AUTH_SESSIONS_PER_IP_PER_MINUTE: '4', NUXT_BACKGROUND_JOBS_STREAMS_PER_ADDRESS: '3', NUXT_AUTH_GUESTS: 'true' })
  }, 60_000)

  it('counts the hop the proxy appended, not an address the client wrote in X-Forwarded-For', async () => {
    // Each request claims a fresh address on the left; the proxy's entry (right-most) is the same.
    const fresh = (index: number) => new SessionClient(app.url).fetch('/api/threads', { headers: { 'x-forwarded-for': `10.66.0.${index}, 203.0.113.7` } })
    const statuses = []
    for (let index = 0; index < 5; index++) statuses.push((await fresh(index)).status)
    expect(statuses).toEqual([200, 200, 200, 200, 429])
    // Another client address is answered.
    expect((await new SessionClient(app.url).fetch('/api/threads', { headers: { 'x-forwarded-for': '198.51.100.20' } })).status).toBe(200)
  })

  it('caps live streams per address whatever the sessions, while another address opens its own', async () => {
    const opened: AbortController[] = []
    const openFeed = async (address: string) => {
      const client = new SessionClient(app.url)
      const headers = { 'x-forwarded-for': address }
      await client.fetch('/api/jobs', { headers })
      const controller = new AbortController()
      opened.push(controller)
      return client.fetch('/api/tools/events', { headers, signal: controller.signal })
    }
    try {
      for (let index = 0; index < 3; index++) expect((await openFeed(`203.0.113.${50 + index}`)).status).toBe(200)
      // Three fresh guests from one address hold its three streams: a fourth is refused.
      const crowd = []
      for (let index = 0; index < 3; index++) crowd.push(await openFeed('203.0.113.99'))
      expect(crowd.map(response => response.status)).toEqual([200, 200, 200])
      const fourth = await openFeed('203.0.113.99')
      expect(fourth.status).toBe(429)
      expect((await fourth.json()).message).toMatch(/Your network address has 3 live streams open/)
      expect((await openFeed('198.51.100.30')).status).toBe(200)
    } finally {
      for (const controller of opened) controller.abort()
    }
  })
})

describe('6. sign-up', () => {
  it('answers a missing or wrong invite the same for a taken and a free name, and limits sign-ups per address', async () => {
    const app = await start({ NUXT_AUTH_SIGNUPS_PER_IP_PER_HOUR: '8' })
    const admin = await createAdmin(app)
    expect((await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signup: 'invite' }) })).status).toBe(200)
    const answers = []
    for (const name of ['Root', 'Nobody-Here']) {
      for (const invite of [undefined, 'a-wrong-invite-code']) {
        const response = await new SessionClient(app.url).post('/api/auth/register', { name, password, ...(invite ? { invite } : {}) })
        answers.push({ invite, status: response.status, message: (await response.json()).message })
      }
    }
    expect(answers.map(answer => answer.status)).toEqual([403, 403, 403, 403])
    expect(answers[0]!.message).toBe(answers[2]!.message)
    expect(answers[1]!.message).toBe(answers[3]!.message)
    // Eight attempts an hour from one address (the admin's was the first): the ninth gets 429.
    const statuses = []
    for (let attempt = 0; attempt < 4; attempt++) statuses.push((await new SessionClient(app.url).post('/api/auth/register', { name: `Someone${attempt}`, password })).status)
    expect(statuses).toEqual([403, 403, 403, 429])
    expect((await admin.fetch('/api/health')).status).toBe(200)
  })
})

describe('11. DNS rebinding and the site\'s origin', () => {
  it('creates the first admin from another host name only with the setup code from the log', async () => {
    const app = await start()
    const rebound = { host: 'rebind.attacker.example', origin: 'http://rebind.attacker.example' }
    const me = await raw(app, '/api/auth/me', { headers: rebound })
    expect(me.body).toMatchObject({ needsSetup: true, setupCodeRequired: true })
    expect((await raw(app, '/api/auth/me')).body).toMatchObject({ needsSetup: true, setupCodeRequired: false })
    // Forwarded by a proxy on this machine: this machine's own request (nuxt dev's proxy) needs no
    // code, someone else's (nginx in front) does.
    expect((await raw(app, '/api/auth/me', { headers: { 'x-forwarded-for': '127.0.0.1' } })).body).toMatchObject({ setupCodeRequired: false })
    expect((await raw(app, '/api/auth/me', { headers: { 'x-forwarded-for': '203.0.113.5' } })).body).toMatchObject({ setupCodeRequired: true })
    const refused = await raw(app, '/api/auth/register', { method: 'POST', headers: rebound, body: { name: 'Mallory', password } })
    expect(refused.status).toBe(403)
    expect(refused.body.message).toMatch(/needs the setup code the server printed/)
    expect((await raw(app, '/api/auth/register', { method: 'POST', headers: rebound, body: { name: 'Mallory', password, setupCode: 'AAAA-BBBB-CCCC' } })).status).toBe(403)
    await vi.waitFor(() => expect(app.logs()).toMatch(/setup code [A-Z0-9]{4}-/), { timeout: 10_000, interval: 50 })
    const code = /setup code ([A-Z0-9-]{14})/.exec(app.logs())![1]!
    const created = await raw(app, '/api/auth/register', { method: 'POST', headers: rebound, body: { name: 'Owner', password, setupCode: code } })
    expect(created.status).toBe(201)
  })

  it('with NUXT_SITE_URL answers only its host (421 for another), health excepted', async () => {
    const app = await start({ NUXT_SITE_URL: 'http://chat.example.test' })
    const other = await raw(app, '/api/auth/me')
    expect(other.status).toBe(421)
    expect(other.body.message).toMatch(/answers only at http:\/\/chat.example.test/)
    expect((await raw(app, '/api/health')).status).toBe(200)
    const site = { host: 'chat.example.test', origin: 'http://chat.example.test' }
    expect((await raw(app, '/api/auth/me', { headers: site })).body).toMatchObject({ needsSetup: true, setupCodeRequired: false })
    expect((await raw(app, '/api/auth/register', { method: 'POST', headers: site, body: { name: 'Owner', password } })).status).toBe(201)
    expect((await raw(app, '/api/auth/login', { method: 'POST', headers: { host: 'rebind.attacker.example', origin: 'http://rebind.attacker.example' }, body: { name: 'Owner', password } })).status).toBe(421)
  })
})

describe('12. content parts', () => {
  it('refuses links, files and audio in a message with 400 naming the part', async () => {
    const app = await start()
    const client = new SessionClient(app.url)
    const send = (part: unknown) => client.post('/api/openrouter/stream', { model: 'openai/gpt-4o-mini', _background: true, messages: [{ role: 'user', content: [{ type: 'text', text: 'Look' }, part] }] })
    for (const [part, words] of [
      [{ type: 'image_url', image_url: { url: 'http://169.254.169.254/latest/meta-data/' } }, /must be a data URL.*→ at messages\[0\]\.content\[1\]\.image_url\.url/],
      [{ type: 'file', file: { filename: 'a.pdf', file_data: 'http://10.0.0.5/a.pdf' } }, /file and audio parts are not accepted.*→ at messages\[0\]\.content\[1\]/],
      [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }, /file and audio parts are not accepted/],
    ] as const) {
      const response = await send(part)
      expect(response.status).toBe(400)
      expect((await response.json()).message).toMatch(words)
    }
    expect((await new SessionClient(app.url).fetch('/api/health')).status).toBe(200)
  })
})
