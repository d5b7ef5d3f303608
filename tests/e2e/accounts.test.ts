/**
 * Accounts against the built server, guests off (the default): first-run admin, sign-up policies
 * and invites, sign-in and sign-out, sessions that end when the admin disables an account or
 * resets its password, API tokens, per-role models, sign-in rate limits, two devices on one
 * account; two-step sign-in (a code from an authenticator app after the password, good once; recovery
 * codes; wrong codes counted while others sign in); passkeys (real WebAuthn answers from a software
 * authenticator, at localhost: a domain name); then a server with guests on, where a guest gets
 * only the demo model.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import { Secret, TOTP } from 'otpauth'
import { SessionClient } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'
import { SoftAuthenticator } from '../support/soft-authenticator'

const app = useBuiltApp({
  NUXT_SESSION_PASSWORD: 'an-accounts-test-session-password-long-enough',
  NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '30',
  NUXT_AUTH_GUESTS: 'false',
  NUXT_LIMITS_ROLES_USER_MODELS: 'or3/offline-demo',
  NUXT_AUTH_SIGN_IN_FAILURES_PER_ACCOUNT: '3',
})

let admin: SessionClient
const password = 'correct horse battery'

function client(): SessionClient {
  return new SessionClient(app.url)
}

async function signIn(name: string, secret = password): Promise<SessionClient> {
  const session = client()
  const response = await session.post('/api/auth/login', { name, password: secret })
  expect(response.status, await response.clone().text()).toBe(200)
  return session
}

describe('accounts', () => {
  it('asks for the first admin, refuses API routes to nobody, and makes the first account admin once', async () => {
    const stranger = client()
    expect(await stranger.json('/api/auth/me')).toMatchObject({ user: null, needsSetup: true, signup: 'closed', guests: false })
    for (const path of ['/api/threads', '/api/models', '/api/jobs', '/api/tools', '/api/workflows']) {
      const refused = await stranger.fetch(path)
      expect(refused.status, path).toBe(401)
      expect((await refused.json()).message).toMatch(/Sign in first/)
    }
    expect((await stranger.post('/api/openrouter/stream', { model: 'or3/offline-demo', messages: [{ role: 'user', content: 'hi' }] })).status).toBe(401)

    admin = client()
    const created = await admin.post('/api/auth/register', { name: 'Ada', password })
    expect(created.status).toBe(201)
    expect(await created.json()).toMatchObject({ user: { name: 'Ada', role: 'admin' } })
    expect(await admin.json('/api/auth/me')).toMatchObject({ user: { name: 'Ada', role: 'admin' }, needsSetup: false })

    // Sign-up is closed by default: a second visitor cannot become anyone.
    const second = await client().post('/api/auth/register', { name: 'Mallory', password })
    expect(second.status).toBe(403)
    expect((await second.json()).message).toMatch(/Sign-up is closed/)
  })

  it('answers bad input with 400 naming the field, never a 500', async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['/api/auth/login', { name: 'Ada' }, /password/],
      ['/api/auth/login', { name: 'Ada', password, extra: 1 }, /extra/],
      ['/api/auth/login', { name: 'Ada', password: 'x'.repeat(300) }, /password/],
      ['/api/auth/register', { name: 'A', password }, /name/],
      ['/api/auth/register', { name: 'x'.repeat(65), password }, /name/],
      ['/api/auth/register', { name: 'Zed', password: 'short' }, /password/],
      ['/api/auth/register', { name: 'Zed\u0000', password }, /name/],
    ]
    for (const [path, body, field] of cases) {
      const response = await client().post(path, body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(JSON.stringify(await response.json())).toMatch(field)
    }
    const broken = await client().fetch('/api/auth/login', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"name":' })
    expect(broken.status).toBe(400)
  })

  it('asks a person with two-step sign-in for a code after the password, takes each code once, and lets a recovery code in', async () => {
    expect((await admin.post('/api/admin/users', { name: 'Tess', password, role: 'user' })).status).toBe(201)
    const tess = await signIn('Tess')
    const setup = await tess.json('/api/me/two-step/setup', { method: 'POST' })
    expect(setup.uri).toMatch(/^otpauth:\/\/totp\/OR3%20Chat:Tess\?/)
    const codeAt = (offsetMs: number) => new TOTP({ secret: Secret.fromBase32(setup.secret) }).generate({ timestamp: Date.now() + offsetMs })
    expect((await tess.post('/api/me/two-step/confirm', { code: '000000' })).status).toBe(401)
    const { recoveryCodes } = await (await tess.post('/api/me/two-step/confirm', { code: codeAt(0) })).json()
    expect(recoveryCodes).toHaveLength(10)
    expect(await tess.json('/api/me/two-step')).toMatchObject({ enabled: true, recoveryCodesLeft: 10 })

    // The password alone gives no session, only the question for a code.
    const session = client()
    const first = await session.post('/api/auth/login', { name: 'Tess', password })
    expect(await first.json()).toEqual({ twoStepRequired: true, methods: ['code'] })
    expect((await session.json('/api/auth/me')).user).toBeNull()
    expect((await session.fetch('/api/threads')).status).toBe(401)
    // A code without the password first is refused; a wrong one too.
    expect((await client().post('/api/auth/two-step', { code: codeAt(30_000) })).status).toBe(401)
    const wrong = await session.post('/api/auth/two-step', { code: '123456' })
    expect(wrong.status).toBe(401)
    expect((await wrong.json()).message).toContain('not right')
    // The next step's code (clocks a little apart) signs in; the same code again does not.
    const next = codeAt(30_000)
    expect((await session.post('/api/auth/two-step', { code: next })).status).toBe(200)
    expect((await session.json('/api/auth/me')).user).toMatchObject({ name: 'Tess' })
    const again = client()
    await again.post('/api/auth/login', { name: 'Tess', password })
    expect((await again.post('/api/auth/two-step', { code: next })).status).toBe(401)
    expect((await again.post('/api/auth/two-step', { code: recoveryCodes[0].toUpperCase() })).status).toBe(200)
    expect(await again.json('/api/me/two-step')).toMatchObject({ recoveryCodesLeft: 9 })

    // Five wrong codes lock the account's second step, while another person signs in meanwhile.
    const guesser = client()
    await guesser.post('/api/auth/login', { name: 'Tess', password })
    const guesses = Promise.all(Array.from({ length: 6 }, (_, index) => guesser.post('/api/auth/two-step', { code: String(100_000 + index) })))
    await signIn('Ada')
    const statuses = (await guesses).map(response => response.status).sort()
    expect(statuses.filter(status => status === 429).length).toBeGreaterThanOrEqual(1)
    expect(statuses.every(status => status === 401 || status === 429)).toBe(true)
    expect((await guesser.post('/api/auth/two-step', { code: recoveryCodes[1] })).status).toBe(429)

    // Off only with the password and a code; an admin's password reset turns it off too (a lost phone).
    expect((await session.fetch('/api/me/two-step', { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'wrong password', code: recoveryCodes[2] }) })).status).toBe(403)
    const { user } = await session.json('/api/auth/me')
    expect((await admin.fetch(`/api/admin/users/${user.id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) })).status).toBe(200)
    expect(await (await client().post('/api/auth/login', { name: 'Tess', password })).json()).toMatchObject({ user: { name: 'Tess' } })
  })

  it('signs in with a passkey alone and as the second step, at a domain name only, each answer once, and refuses hostile answers with 400 while others are answered', async () => {
    // WebAuthn binds a passkey to a domain name: localhost here, the same server.
    const site = app.url.replace('127.0.0.1', 'localhost')
    expect((await admin.post('/api/admin/users', { name: 'Pia', password, role: 'user' })).status).toBe(201)
    const atAddress = await (await signIn('Pia')).post('/api/me/passkeys/options', {})
    expect(atAddress.status).toBe(409)
    expect((await atAddress.json()).message).toMatch(/domain name/)

    const pia = new SessionClient(site)
    expect((await pia.post('/api/auth/login', { name: 'Pia', password })).status).toBe(200)
    const device = new SoftAuthenticator(site)
    const creation = await pia.json('/api/me/passkeys/options', { method: 'POST' })
    expect(creation).toMatchObject({ rp: { id: 'localhost', name: 'OR3 Chat' }, user: { name: 'Pia' }, attestation: 'none' })
    const added = await pia.post('/api/me/passkeys', { name: 'Laptop', response: device.create(creation) })
    expect(added.status, await added.clone().text()).toBe(200)
    const { passkey, recoveryCodes } = await added.json()
    expect(recoveryCodes).toHaveLength(10)
    expect(await pia.json('/api/me/passkeys')).toEqual([expect.objectContaining({ id: passkey.id, name: 'Laptop' })])

    // Alone: no name, no password; the same answer again finds its challenge used up.
    const visitor = new SessionClient(site)
    const asked = await (await visitor.post('/api/auth/passkey/options', {})).json()
    expect(asked).toMatchObject({ rpId: 'localhost', userVerification: 'required' })
    const answer = device.get(asked)
    const alone = await visitor.post('/api/auth/passkey', { response: answer })
    expect(alone.status, await alone.clone().text()).toBe(200)
    expect((await visitor.json('/api/auth/me')).user).toMatchObject({ name: 'Pia' })
    const replayed = await visitor.post('/api/auth/passkey', { response: answer })
    expect(replayed.status).toBe(400)
    expect((await replayed.json()).message).toMatch(/Start the passkey sign-in again/)

    // After the password: the answer says a passkey may be the second step, and only Pia's are offered.
    const second = new SessionClient(site)
    expect(await (await second.post('/api/auth/login', { name: 'Pia', password })).json()).toEqual({ twoStepRequired: true, methods: ['passkey', 'code'] })
    expect((await second.json('/api/auth/me')).user).toBeNull()
    const stepOptions = await (await second.post('/api/auth/passkey/options', { afterPassword: true })).json()
    expect(stepOptions.allowCredentials).toEqual([expect.objectContaining({ id: passkey.id })])
    expect((await second.post('/api/auth/passkey', { response: device.get(stepOptions) })).status).toBe(200)
    expect((await second.json('/api/auth/me')).user).toMatchObject({ name: 'Pia' })
    // The second step without a password first.
    expect((await new SessionClient(site).post('/api/auth/passkey/options', { afterPassword: true })).status).toBe(401)

    // Hostile answers are 400 naming the field (never read further), while another client is answered.
    const attacker = new SessionClient(site)
    await attacker.post('/api/auth/passkey/options', {})
    const hostile: unknown[] = [
      { response: { ...answer, response: { ...answer.response, signature: 'A'.repeat(100_000) } } },
      { response: { ...answer, id: 'not base64url!' } },
      { response: { ...answer, clientExtensionResults: Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`k${index}`, index])) } },
      { response: answer, more: true },
      { response: { ...answer, type: 'password' } },
    ]
    const [answered, ...refused] = await Promise.all([admin.fetch('/api/auth/me'), ...hostile.map(body => attacker.post('/api/auth/passkey', body))])
    expect(answered.status).toBe(200)
    for (const response of refused) {
      expect(response.status).toBe(400)
      expect((await response.json()).message).toMatch(/response|more|body/i)
    }
    const bigAttestation = await pia.post('/api/me/passkeys', { response: { ...device.create(creation), response: { clientDataJSON: 'A', attestationObject: 'A'.repeat(70_000) } } })
    expect(bigAttestation.status).toBe(400)

    // Removing it needs the password; then the password alone signs in again.
    expect((await pia.fetch(`/api/me/passkeys/${passkey.id}`, { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'wrong password' }) })).status).toBe(403)
    expect((await pia.fetch(`/api/me/passkeys/${passkey.id}`, { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password }) })).status).toBe(200)
    expect(await (await client().post('/api/auth/login', { name: 'Pia', password })).json()).toMatchObject({ user: { name: 'Pia' } })
  })

  it('lets an admin require two-step sign-in: a person without it may only set it up (or sign out) until they have, API tokens go on', async () => {
    expect((await admin.post('/api/admin/users', { name: 'Rhea', password, role: 'user' })).status).toBe(201)
    const rhea = await signIn('Rhea')
    const token = (await (await rhea.post('/api/auth/tokens', { name: 'script', password })).json()).token as string
    // Only once the admin uses it: their own sign-in is never the one it surprises.
    const early = await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ twoStepRequired: 'everyone' }) })
    expect(early.status).toBe(409)
    expect((await early.json()).message).toContain('for yourself first')
    const adminSetup = await admin.json('/api/me/two-step/setup', { method: 'POST' })
    expect((await admin.post('/api/me/two-step/confirm', { code: new TOTP({ secret: Secret.fromBase32(adminSetup.secret) }).generate() })).status).toBe(200)
    const set = await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ twoStepRequired: 'everyone' }) })
    expect(set.status).toBe(200)
    expect(await set.json()).toMatchObject({ twoStepRequired: 'everyone' })
    // Rhea's session, already open: held at once, saying why and where.
    const held = await rhea.fetch('/api/threads')
    expect(held.status).toBe(403)
    expect(await held.json()).toMatchObject({ data: { reason: 'two-step-required' }, message: expect.stringContaining('two-step sign-in') })
    expect(await rhea.json('/api/auth/me')).toMatchObject({ user: { name: 'Rhea' }, twoStepPending: true })
    expect((await rhea.fetch('/api/me/preferences')).status).toBe(200)
    // A token she made before goes on working (it is not a password sign-in).
    expect((await fetch(`${app.url}/api/threads`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
    // Set up, she is let through; a fresh sign-in asks for the code as for anyone with it.
    const setup = await rhea.json('/api/me/two-step/setup', { method: 'POST' })
    expect((await rhea.post('/api/me/two-step/confirm', { code: new TOTP({ secret: Secret.fromBase32(setup.secret) }).generate() })).status).toBe(200)
    expect((await rhea.fetch('/api/threads')).status).toBe(200)
    expect((await rhea.json('/api/auth/me')).twoStepPending).toBeUndefined()
    expect(await (await client().post('/api/auth/login', { name: 'Rhea', password })).json()).toEqual({ twoStepRequired: true, methods: ['code'] })
    // Off again: nobody is held.
    expect((await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ twoStepRequired: 'off' }) })).status).toBe(200)
    expect((await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ twoStepRequired: 'sometimes' }) })).status).toBe(400)
    // The admin's own two-step off again (the next time step's code: each is good once), for the tests after this one.
    const off = await admin.fetch('/api/me/two-step', { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password, code: new TOTP({ secret: Secret.fromBase32(adminSetup.secret) }).generate({ timestamp: Date.now() + 30_000 }) }) })
    expect(off.status).toBe(200)
  })

  it('answers a wrong password and an unknown name alike, rotates the session on sign-in and ends it on sign-out', async () => {
    const wrong = await client().post('/api/auth/login', { name: 'Ada', password: 'not the password' })
    const unknown = await client().post('/api/auth/login', { name: 'Nobody', password: 'not the password' })
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect((await wrong.json()).message).toBe((await unknown.json()).message)

    const session = client()
    await session.json('/api/auth/me')
    const before = session.cookie
    expect((await session.post('/api/auth/login', { name: 'ada', password })).status).toBe(200)
    expect(session.cookie).not.toBe(before)
    expect((await session.fetch('/api/threads')).status).toBe(200)
    expect((await session.post('/api/auth/logout', {})).status).toBe(200)
    expect((await session.json('/api/auth/me')).user).toBeNull()
    expect((await session.fetch('/api/threads')).status).toBe(401)
  })

  it('lets an invite link sign up exactly once, under the default closed policy and under the invite policy', async () => {
    // Closed (the default): nobody signs up without an invite, and an invite still works.
    expect((await admin.json('/api/auth/me')).signup).toBe('closed')
    expect((await client().post('/api/auth/register', { name: 'Ivy', password })).status).toBe(403)
    const early = await (await admin.post('/api/admin/invites', {})).json()
    expect((await client().post('/api/auth/register', { name: 'Ivy', password, invite: early.code })).status).toBe(201)
    expect((await client().post('/api/auth/register', { name: 'Ike', password, invite: early.code })).status).toBe(403)

    expect((await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signup: 'invite' }) })).status).toBe(200)
    // What GET answers, PUT takes back as it is.
    const settings = await admin.json('/api/admin/settings')
    expect(settings).toEqual({ signup: 'invite', publicShareLinks: false, twoStepRequired: 'off' })
    expect((await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(settings) })).status).toBe(200)
    expect((await client().post('/api/auth/register', { name: 'Bea', password })).status).toBe(403)
    const invite = await (await admin.post('/api/admin/invites', {})).json()
    expect(invite.url).toContain('/login?invite=')
    const bea = client()
    expect((await bea.post('/api/auth/register', { name: 'Bea', password, invite: invite.code })).status).toBe(201)
    expect(await bea.json('/api/auth/me')).toMatchObject({ user: { name: 'Bea', role: 'user' } })
    const again = await client().post('/api/auth/register', { name: 'Cal', password, invite: invite.code })
    expect(again.status).toBe(403)
    expect((await again.json()).message).toMatch(/already used or has expired/)
    // A user is not an admin.
    expect((await bea.fetch('/api/admin/users')).status).toBe(403)
  })

  it('refuses a disabled account\'s live session on its next request, and ends sessions when the admin resets a password', async () => {
    await admin.post('/api/admin/users', { name: 'Dan', password, role: 'user' })
    const dan = await signIn('Dan')
    const other = await signIn('Dan')
    const users = await admin.json<Array<{ id: string, name: string }>>('/api/admin/users')
    const danId = users.find(user => user.name === 'Dan')!.id
    const patch = (body: unknown) => admin.fetch(`/api/admin/users/${danId}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })

    // Dan's workflow has a webhook: it starts nothing while his account is disabled.
    const workflow = await (await dan.post('/api/workflows', { definition: { version: 1, name: 'Hooked', nodes: [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'out' }] } })).json()
    const hook = await (await dan.post(`/api/workflows/${workflow.id}/webhook`, {})).json()
    const callHook = () => fetch(`${app.url}${hook.path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'ping' }) })

    expect((await patch({ disabled: true })).status).toBe(200)
    const refused = await dan.fetch('/api/threads')
    expect(refused.status).toBe(401)
    expect((await client().post('/api/auth/login', { name: 'Dan', password })).status).toBe(403)
    expect((await callHook()).status).toBe(403)
    expect((await patch({ disabled: false })).status).toBe(200)
    expect((await callHook()).status).toBe(202)

    const fresh = await signIn('Dan')
    expect((await fresh.fetch('/api/threads')).status).toBe(200)
    expect((await patch({ password: 'a brand new password' })).status).toBe(200)
    expect((await fresh.fetch('/api/threads')).status).toBe(401)
    expect((await other.fetch('/api/threads')).status).toBe(401)
    await signIn('Dan', 'a brand new password')

    // The last admin cannot take away their own admin rights.
    const adaId = users.find(user => user.name === 'Ada')!.id
    const demote = await admin.fetch(`/api/admin/users/${adaId}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ role: 'user' }) })
    expect(demote.status).toBe(409)
  })

  it('accepts a personal API token as Bearer (no cookie, no Origin check) until it is revoked', async () => {
    const bea = await signIn('Bea')
    // Minting asks for the password again: a session alone cannot.
    const refused = await bea.post('/api/auth/tokens', { name: 'script', password: 'not Bea\'s password' })
    expect(refused.status).toBe(403)
    expect((await refused.json()).message).toMatch(/not your password/)
    expect((await bea.post('/api/auth/tokens', { name: 'script' })).status).toBe(400)
    const created = await (await bea.post('/api/auth/tokens', { name: 'script', password })).json()
    expect(created.token).toMatch(/^or3_[\w-]{43}$/)
    const listed = await bea.json('/api/auth/tokens')
    expect(listed).toEqual([expect.objectContaining({ id: created.id, name: 'script', prefix: created.token.slice(0, 10) })])
    expect(JSON.stringify(listed)).not.toContain(created.token)

    const bearer = { authorization: `Bearer ${created.token}`, 'content-type': 'application/json' }
    const threads = await fetch(`${app.url}/api/threads`, { method: 'POST', headers: { ...bearer, origin: 'https://elsewhere.example' }, body: '{}' })
    expect(threads.status).toBe(201)
    expect(threads.headers.getSetCookie()).toEqual([])
    const job = await fetch(`${app.url}/api/openrouter/stream`, { method: 'POST', headers: bearer, body: JSON.stringify({ model: 'or3/offline-demo', _background: true, messages: [{ role: 'user', content: 'hi' }] }) })
    expect(job.status).toBe(202)

    expect((await bea.fetch(`/api/auth/tokens/${created.id}`, { method: 'DELETE' })).status).toBe(200)
    const revoked = await fetch(`${app.url}/api/threads`, { headers: bearer })
    expect(revoked.status).toBe(401)
    expect((await revoked.json()).message).toMatch(/revoked or mistyped/)
    expect((await fetch(`${app.url}/api/threads`, { headers: { authorization: 'Bearer nonsense' } })).status).toBe(401)
  })

  it('refuses a model the role may not use with 403 naming it, and lists only allowed models', async () => {
    const bea = await signIn('Bea')
    const refused = await bea.post('/api/openrouter/stream', { model: 'openai/gpt-4o', _background: true, messages: [{ role: 'user', content: 'hi' }] })
    expect(refused.status).toBe(403)
    expect((await refused.json()).message).toMatch(/"openai\/gpt-4o".*or3\/offline-demo/)
    const catalog = await bea.json('/api/models')
    expect(catalog.models.map((model: { id: string }) => model.id)).toEqual(['or3/offline-demo'])
  })

  it('locks an account name after repeated failed sign-ins (429 + Retry-After) while others sign in', async () => {
    for (let attempt = 0; attempt < 3; attempt++) expect((await client().post('/api/auth/login', { name: 'Dan', password: 'guess' })).status).toBe(401)
    const locked = await client().post('/api/auth/login', { name: 'Dan', password: 'a brand new password' })
    expect(locked.status).toBe(429)
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0)
    await signIn('Bea')
  })

  it('shows one account\'s running answer on a second device, which can stop it', async () => {
    const laptop = await signIn('Bea')
    const phone = await signIn('Bea')
    const jobId = await laptop.startJob({ model: 'or3/offline-demo', messages: [{ role: 'user', content: 'Write a long story about a lighthouse' }] })
    const { jobs } = await phone.json<{ jobs: Array<{ id: string, status: string }> }>('/api/jobs')
    expect(jobs.find(job => job.id === jobId)?.status).toBe('streaming')
    expect(await (await phone.post(`/api/jobs/${jobId}/abort`, {})).json()).toMatchObject({ aborted: true })
    const ended = await laptop.json(`/api/jobs/${jobId}`)
    expect(ended.status).toBe('aborted')
    // Another account sees none of it.
    expect((await admin.fetch(`/api/jobs/${jobId}`)).status).toBe(404)
  })
})

describe('guests', () => {
  const guestApp = useBuiltApp({ NUXT_AUTH_GUESTS: 'true', NUXT_LIMITS_ROLES_GUEST_MODELS: 'or3/offline-demo', NUXT_AUTH_SESSIONS_PER_IP_PER_MINUTE: '2' })

  it('gives a visitor a guest session with the demo model only, and bounds new sessions per address', async () => {
    const guest = new SessionClient(guestApp.url)
    expect(await guest.json('/api/auth/me')).toMatchObject({ user: { role: 'guest' }, guests: true })
    expect((await guest.json('/api/models')).models.map((model: { id: string }) => model.id)).toEqual(['or3/offline-demo'])
    expect((await guest.post('/api/openrouter/stream', { model: 'openai/gpt-4o', _background: true, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(403)
    expect((await guest.post('/api/openrouter/stream', { model: 'or3/offline-demo', _background: true, messages: [{ role: 'user', content: 'hi' }] })).status).toBe(202)
    expect((await guest.post('/api/auth/tokens', { name: 'x' })).status).toBe(403)

    expect((await new SessionClient(guestApp.url).fetch('/api/threads')).status).toBe(200)
    const minted = await new SessionClient(guestApp.url).fetch('/api/threads')
    expect(minted.status).toBe(429)
    expect(Number(minted.headers.get('retry-after'))).toBeGreaterThan(0)
    // The guest who kept their cookie is still answered.
    expect((await guest.fetch('/api/threads')).status).toBe(200)
  })
})

describe('a guest signing up', () => {
  const openApp = useBuiltApp({ NUXT_AUTH_GUESTS: 'true', NUXT_LIMITS_ROLES_GUEST_MODELS: 'or3/offline-demo' })
  beforeAll(async () => {
    const admin = new SessionClient(openApp.url)
    expect((await admin.post('/api/auth/register', { name: 'Ada', password })).status).toBe(201)
    expect((await admin.fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ signup: 'open' }) })).status).toBe(200)
  })

  it('keeps the guest\'s conversations when asked, and an old copy of the guest cookie no longer opens them', async () => {
    const browser = new SessionClient(openApp.url)
    const thread = await (await browser.post('/api/threads', {})).json()
    const { examples } = await browser.json('/api/workflows/examples')
    expect((await browser.post('/api/workflows', { definition: examples[0].definition })).status).toBe(201)
    const guestCookie = browser.cookie

    const created = await browser.post('/api/auth/register', { name: 'Gus', password, keepGuestData: true })
    expect(created.status).toBe(201)
    expect(browser.cookie).not.toBe(guestCookie)
    expect((await browser.json('/api/threads')).threads.map((item: { id: string }) => item.id)).toContain(thread.id)
    expect((await browser.json('/api/workflows')).workflows).toHaveLength(1)

    // The same account from another device sees them too.
    const phone = new SessionClient(openApp.url)
    expect((await phone.post('/api/auth/login', { name: 'Gus', password })).status).toBe(200)
    expect((await phone.fetch(`/api/threads/${thread.id}`)).status).toBe(200)

    // Whoever still holds the guest cookie is a new guest now, with nothing of the account's.
    const stale = new SessionClient(openApp.url)
    stale.cookie = guestCookie
    expect(await stale.json('/api/auth/me')).toMatchObject({ user: { role: 'guest' } })
    expect((await stale.json('/api/auth/me')).user.id).not.toBe((await phone.json('/api/auth/me')).user.id)
    expect((await stale.fetch(`/api/threads/${thread.id}`)).status).toBe(404)
  })

  it('leaves the guest\'s conversations behind without it', async () => {
    const browser = new SessionClient(openApp.url)
    const thread = await (await browser.post('/api/threads', {})).json()
    expect((await browser.post('/api/auth/register', { name: 'Hal', password })).status).toBe(201)
    expect((await browser.fetch(`/api/threads/${thread.id}`)).status).toBe(404)
    expect((await browser.post('/api/auth/register', { name: 'Ida', password, keepGuestData: 'yes' })).status).toBe(400)
  })
})
