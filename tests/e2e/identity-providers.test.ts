/**
 * Sign-in through an OpenID Connect provider (issue 52), against a real one: `oidc-provider` with
 * its own keys (tests/support/oidc-provider.ts). Each check the app must make is tested by a
 * provider answer spoiled in that one way; the whole path also runs in Chromium, from the button
 * on the sign-in page to the provider's form and back. Then groups: made by an admin, filled by
 * the provider's groups claim or by the admin, and what they give (limits, tool policy rules).
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { axeAudit, blocking } from '../browser/helpers/axe'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBuiltApp, type RunningApp } from '../support/built-app'
import { freePort } from '../support/free-port'
import { SessionClient } from '../support/job-stream-client'
import { startTestOidcProvider, type TestOidcProvider } from '../support/oidc-provider'
import { axeViolationsInBothSchemes, launchChromium, sidewaysScroll } from '../browser/helpers/browser'

let app: RunningApp
let idp: TestOidcProvider
let root: SessionClient
const password = 'correct horse battery'

/**
 * A browser as far as redirects and cookies go (one jar: the app's and the provider's cookies have
 * different names), driven by hand so that a test can stop at the provider's answer and spoil it.
 */
class RedirectingClient {
  readonly cookies = new Map<string, string>()

  async request(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers)
    if (this.cookies.size > 0) headers.set('cookie', [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; '))
    const response = await fetch(url, { ...init, headers, redirect: 'manual' })
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';')
      const [name, value] = [pair!.slice(0, pair!.indexOf('=')), pair!.slice(pair!.indexOf('=') + 1)]
      const expired = attributes.some(attribute => /^\s*max-age=0/i.test(attribute) || (/^\s*expires=/i.test(attribute) && Date.parse(attribute.split('=')[1]!) < Date.now()))
      if (expired || value === '') this.cookies.delete(name)
      else this.cookies.set(name, value)
    }
    return response
  }

  /** Follows redirects from `url` until one points at `stopAt` (not followed) or a page answers. */
  async follow(url: string, stopAt?: string, init?: RequestInit): Promise<{ url: string, response: Response }> {
    let current = url
    let response = await this.request(current, init)
    for (let hop = 0; hop < 10 && response.status >= 300 && response.status < 400; hop++) {
      current = new URL(response.headers.get('location')!, current).href
      if (stopAt && current.startsWith(stopAt)) return { url: current, response }
      response = await this.request(current)
    }
    return { url: current, response }
  }

  /** The app session's principal (null: nobody signed in). */
  async me(): Promise<{ id: string, name: string, role: string } | null> {
    return (await (await this.request(`${app.url}/api/auth/me`)).json() as { user: { id: string, name: string, role: string } | null }).user
  }
}

/** Signs `login` in at the provider, and answers the callback URL it sends the browser to (not yet opened). */
async function atProvider(browser: RedirectingClient, login: string, returnTo = '/'): Promise<string> {
  const start = await browser.follow(`${app.url}/api/auth/oidc/corp/start?returnTo=${encodeURIComponent(returnTo)}`)
  expect(start.url, 'the provider\'s sign-in form').toMatch(/\/interaction\/[\w-]+$/)
  const answered = await browser.follow(`${start.url}/login`, `${app.url}/api/auth/oidc/corp/callback`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ login }).toString() })
  expect(answered.url).toMatch(/\/callback\?.*code=/)
  return answered.url
}

/** Opens the callback; answers where the app sends the browser next. */
async function back(browser: RedirectingClient, callbackUrl: string): Promise<string> {
  const response = await browser.request(callbackUrl)
  expect(response.status).toBe(302)
  return response.headers.get('location')!
}

async function signInThroughProvider(login: string): Promise<RedirectingClient> {
  const browser = new RedirectingClient()
  expect(await back(browser, await atProvider(browser, login))).toBe('/')
  return browser
}

beforeAll(async () => {
  const port = await freePort()
  const appUrl = `http://127.0.0.1:${port}`
  idp = await startTestOidcProvider({ clientId: 'or3', clientSecret: 'a-test-client-secret', redirectUris: [`${appUrl}/api/auth/oidc/corp/callback`], postLogoutRedirectUris: [`${appUrl}/login`] })
  idp.people.set('alice', { sub: 'alice-1', email: 'alice@corp.example', email_verified: true, name: 'Alice Admin', preferred_username: 'alice', groups: ['or3-admins'] })
  idp.people.set('carol', { sub: 'carol-1', email: 'carol@corp.example', email_verified: true, name: 'Carol', preferred_username: 'carol', groups: ['staff'] })
  idp.people.set('bob', { sub: 'bob-1', email: 'bob@corp.example', email_verified: true, name: 'Bob', preferred_username: 'bob', groups: ['visitors'] })
  idp.people.set('dana', { sub: 'dana-1', email: 'dana@corp.example', email_verified: false, preferred_username: 'dana', groups: ['staff'] })
  idp.people.set('frank', { sub: 'frank-1', email: 'frank@corp.example', email_verified: true, preferred_username: 'frank', groups: ['staff'] })
  idp.people.set('erin', { sub: 'erin-1', email: 'Erin@Corp.example', email_verified: true, preferred_username: 'erin', groups: ['staff'] })
  const dir = mkdtempSync(join(tmpdir(), 'or3-oidc-'))
  const configFile = join(dir, 'identity-providers.json')
  writeFileSync(configFile, JSON.stringify({
    providers: [{
      id: 'corp',
      name: 'Corp SSO',
      issuer: idp.issuer,
      clientId: 'or3',
      clientSecretEnv: 'OIDC_CORP_SECRET',
      allowHttp: true,
      scopes: ['openid', 'email', 'profile', 'groups'],
      roles: { claim: 'groups', admin: ['or3-admins'], user: ['staff'], required: true },
      groupsClaim: 'groups',
      linkByEmail: true,
    }],
  }))
  app = await startBuiltApp({ PORT: String(port), NUXT_AUTH_GUESTS: 'false', NUXT_AUTH_OIDC_CONFIG_FILE: configFile, OIDC_CORP_SECRET: 'a-test-client-secret', NUXT_SESSION_PASSWORD: 'an-identity-provider-test-password-long-enough' })
  root = new SessionClient(app.url)
  expect((await root.post('/api/auth/register', { name: 'Root', password })).status).toBe(201)
}, 240_000)

afterAll(async () => {
  await app?.stop()
  await idp?.close()
})

describe('sign-in through an OpenID Connect provider', () => {
  it('lists the provider, creates the account on a first sign-in with the role its groups give, and finds it again next time', async () => {
    const stranger = new RedirectingClient()
    expect(await (await stranger.request(`${app.url}/api/auth/me`)).json()).toMatchObject({ user: null, providers: [{ id: 'corp', name: 'Corp SSO' }], passwords: true })

    const alice = new RedirectingClient()
    expect(await back(alice, await atProvider(alice, 'alice', '/settings'))).toBe('/settings')
    const first = await alice.me()
    expect(first).toMatchObject({ name: 'alice', role: 'admin' })
    // The pending sign-in went with it: the same answer cannot be used again.
    expect(alice.cookies.has('or3-session-sign-in')).toBe(false)

    const again = await signInThroughProvider('alice')
    expect(await again.me()).toEqual(first)
    // A signed-in provider account can use the app like any other.
    expect((await again.request(`${app.url}/api/threads`)).status).toBe(200)
    // Nobody can sign in to it with a password: it has none.
    expect((await new SessionClient(app.url).post('/api/auth/login', { name: 'alice', password: '' })).status).toBe(400)
    expect((await new SessionClient(app.url).post('/api/auth/login', { name: 'alice', password: 'anything at all' })).status).toBe(401)
  })

  it('refuses a person outside the allowed groups, and keeps the role in step with the groups at every sign-in', async () => {
    const bob = new RedirectingClient()
    expect(await back(bob, await atProvider(bob, 'bob'))).toBe('/login?signInError=not-allowed')
    expect(await bob.me()).toBeNull()

    const carol = await signInThroughProvider('carol')
    expect(await carol.me()).toMatchObject({ name: 'carol', role: 'user' })
    idp.people.get('carol')!.groups = ['staff', 'or3-admins']
    const promoted = await signInThroughProvider('carol')
    expect(await promoted.me()).toMatchObject({ name: 'carol', role: 'admin' })
  })

  it('links a first sign-in to an existing account only by an e-mail the provider verified', async () => {
    const created = await root.post('/api/admin/users', { name: 'dana@corp.example', password, role: 'user' })
    expect(created.status, await created.clone().text()).toBe(201)
    const erinLocal = await root.post('/api/admin/users', { name: 'erin@corp.example', password, role: 'user' })
    expect(erinLocal.status).toBe(201)
    const erinId = (await erinLocal.json() as { id: string }).id
    // Dana's e-mail is not verified: a new account, not the one named by it.
    const dana = await signInThroughProvider('dana')
    expect(await dana.me()).toMatchObject({ name: 'dana' })
    // Erin's is (in another case): linked to the existing account.
    const erin = await signInThroughProvider('erin')
    expect((await erin.me())!.id).toBe(erinId)
  })

  it('refuses, with a message, an ID token from another issuer, for another client, with another nonce, expired or with a broken signature', async () => {
    for (const tamper of ['issuer', 'audience', 'nonce', 'expired', 'signature'] as const) {
      const browser = new RedirectingClient()
      const callback = await atProvider(browser, 'alice')
      idp.tamper = tamper
      try {
        expect(await back(browser, callback), tamper).toBe('/login?signInError=invalid')
      } finally {
        idp.tamper = undefined
      }
      expect(await browser.me(), tamper).toBeNull()
    }
  })

  it('refuses a wrong state, an answer without a sign-in started here, and a replayed code', async () => {
    const wrongState = new RedirectingClient()
    const callback = new URL(await atProvider(wrongState, 'alice'))
    const requestsBefore = idp.tokenRequests
    callback.searchParams.set('state', 'not-the-state-sent')
    expect(await back(wrongState, callback.href)).toBe('/login?signInError=invalid')
    // Refused before the code was sent to the provider.
    expect(idp.tokenRequests).toBe(requestsBefore)

    // An answer sent to a browser that did not start a sign-in (a link someone was sent).
    const elsewhere = new RedirectingClient()
    expect(await back(elsewhere, await atProvider(new RedirectingClient(), 'alice'))).toBe('/login?signInError=expired')
    expect(await elsewhere.me()).toBeNull()

    // A code already used, handed to a new sign-in: the provider refuses it.
    const first = new RedirectingClient()
    const used = new URL(await atProvider(first, 'alice'))
    expect(await back(first, used.href)).toBe('/')
    const replay = new RedirectingClient()
    const fresh = new URL(await atProvider(replay, 'alice'))
    replay.cookies.delete('_session')
    const replayed = new URL(fresh)
    replayed.searchParams.set('code', used.searchParams.get('code')!)
    const tokenRequests = idp.tokenRequests
    expect(await back(replay, replayed.href)).toBe('/login?signInError=invalid')
    expect(idp.tokenRequests).toBe(tokenRequests + 1)
    expect(await replay.me()).toBeNull()
  })

  it('ends the app session on sign-out and answers the provider\'s sign-out address', async () => {
    const alice = await signInThroughProvider('alice')
    const response = await alice.request(`${app.url}/api/auth/logout`, { method: 'POST', headers: { 'content-type': 'application/json', 'origin': app.url }, body: '{}' })
    expect(response.status).toBe(200)
    const { providerSignOut } = await response.json() as { providerSignOut: string }
    const url = new URL(providerSignOut)
    expect(url.origin + url.pathname).toBe(`${idp.issuer}/session/end`)
    expect(url.searchParams.get('client_id')).toBe('or3')
    expect(url.searchParams.get('post_logout_redirect_uri')).toBe(`${app.url}/login`)
    expect(await alice.me()).toBeNull()
    // A password session answers no provider address.
    const local = new SessionClient(app.url)
    expect((await local.post('/api/auth/login', { name: 'Root', password })).status).toBe(200)
    expect(await (await local.post('/api/auth/logout', {}, { origin: app.url })).json()).toEqual({ signedOut: true })
  })

  it('gives a group\'s members its limits and its tool policy rules, with the provider\'s groups claim and an admin\'s choice as the members', async () => {
    const usage = async (client: RedirectingClient) => (await (await client.request(`${app.url}/api/auth/usage`)).json() as { limits: { dailyTokens: number, jobsAtOnce: number } }).limits
    const frank = await signInThroughProvider('frank')
    const before = await usage(frank)
    // The admin makes "staff" (the claim frank has) and "contractors" (nobody's claim).
    expect((await root.fetch('/api/admin/groups/staff', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ description: 'Everyone on staff', limits: { dailyTokens: 0, jobsAtOnce: before.jobsAtOnce + 7 } }) })).status).toBe(200)
    expect((await root.fetch('/api/admin/groups/contractors', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(200)
    expect((await root.json('/api/admin/groups')).groups.map((group: { name: string }) => group.name)).toEqual(['staff', 'contractors'])
    // Bad input is a 400 that says what to fix, never a 500.
    for (const [path, body] of [['/api/admin/groups/bad%2Fname', '{}'], ['/api/admin/groups/ok', '{"limits":{"jobsAtOnce":-1}}'], ['/api/admin/groups/ok', '{"limits":{"colour":"red"}}']] as const) {
      const refused = await root.fetch(path, { method: 'PUT', headers: { 'content-type': 'application/json' }, body })
      expect(refused.status, `${path} ${body}`).toBe(400)
    }
    // Frank's claim puts him in "staff" at his next sign-in; the group's limits are his.
    const again = await signInThroughProvider('frank')
    const frankId = (await again.me())!.id
    await expect.poll(async () => (await usage(again)).jobsAtOnce).toBe(before.jobsAtOnce + 7)
    expect((await usage(again)).dailyTokens).toBe(0)
    const view = await root.json(`/api/admin/users/${frankId}/groups`)
    expect(view).toMatchObject({ membership: { manual: [], provider: expect.arrayContaining(['staff']) }, groups: ['staff'], sources: { jobsAtOnce: 'group:staff', dailyTokens: 'group:staff' } })

    // An admin puts him in "contractors" too, which a tool policy rule keeps from the calculator.
    expect((await root.fetch(`/api/admin/users/${frankId}/groups`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ groups: ['no-such-group'] }) })).status).toBe(400)
    expect((await root.fetch(`/api/admin/users/${frankId}/groups`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ groups: ['contractors'] }) })).status).toBe(200)
    expect((await root.fetch('/api/admin/tool-policy', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules: [{ name: 'no calculator for contractors', effect: 'deny', tools: ['calculate'], groups: ['contractors'] }] }) })).status).toBe(200)
    const tools = async (client: RedirectingClient) => (await (await client.request(`${app.url}/api/tools`)).json() as { tools: Array<{ name: string, unavailable?: string }> }).tools.find(tool => tool.name === 'calculate')
    await expect.poll(async () => (await tools(again))?.unavailable ?? '').toMatch(/no calculator for contractors/)
    // Alice is in neither: the rule is not hers.
    expect((await tools(await signInThroughProvider('alice')))?.unavailable).toBeUndefined()
    // A deleted group gives nothing any more.
    expect((await root.fetch('/api/admin/groups/staff', { method: 'DELETE' })).status).toBe(200)
    await expect.poll(async () => (await usage(again)).jobsAtOnce).toBe(before.jobsAtOnce)
    expect((await root.fetch('/api/admin/tool-policy', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules: [] }) })).status).toBe(200)
  })

  it('signs in from the button on the sign-in page in Chromium, shows a refusal in words, and the page passes axe at desktop and phone width', async () => {
    const browser = await launchChromium()
    try {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
      const page = await context.newPage()
      await page.goto(`${app.url}/login?signInError=not-allowed`)
      await page.getByTestId('provider-problem').waitFor()
      expect(await page.getByTestId('provider-problem').textContent()).toMatch(/not in a group allowed/)
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 844 })
        expect(blocking(await axeAudit(page)).map(item => item.id), `${width} px`).toEqual([])
        expect(await sidewaysScroll(page)).toBe(0)
      }
      // An address made up to show another text shows none: only known reasons have words.
      await page.goto(`${app.url}/login?signInError=call-this-number`)
      await page.getByTestId('sign-in-with-corp').waitFor()
      expect(await page.getByTestId('provider-problem').count()).toBe(0)
      await page.setViewportSize({ width: 1280, height: 800 })
      await page.getByTestId('sign-in-with-corp').click()
      await page.locator('input[name=login]').fill('alice')
      await page.getByRole('button', { name: 'Sign in at the provider' }).click()
      await page.waitForURL(`${app.url}/`)
      await page.getByTestId('composer-input').waitFor()
      expect(await page.getByTestId('account-name').textContent()).toBe('alice')

      // Alice is an admin (her provider's groups say so): Admin → Groups, a person chosen, passes
      // axe in light and dark at desktop and phone width, and fits a phone.
      await page.goto(`${app.url}/admin`)
      await page.getByTestId('admin-groups').waitFor()
      await page.getByTestId('group-member').click()
      await page.getByRole('option', { name: 'frank' }).click()
      await page.getByTestId('effective-limits').waitFor()
      for (const width of [1280, 390]) {
        await page.setViewportSize({ width, height: 844 })
        expect(await axeViolationsInBothSchemes(page, '[data-testid=admin-groups]'), `${width} px`).toEqual([])
        expect(await sidewaysScroll(page), `${width} px`).toBe(0)
      }
    } finally {
      await browser.close()
    }
  })
})
