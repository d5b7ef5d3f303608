import { describe, expect, it } from 'vitest'
import { useBuiltApp } from '../support/built-app'
import { useFileFixture } from '../support/file-fixture'
import { axeViolationsInBothSchemes, screenshot, useChromium, visit, watchForProblems } from './helpers/browser'
import { useProfiles } from './helpers/profiles'
import { startEverythingOverHttp } from '../support/mcp-servers'
import { Secret, TOTP } from 'otpauth'

// The first run of a fresh server in a real browser, guests off (the default): create the admin
// account, chat, sign out, sign in from a second browser profile and find the conversation there.

const remote = useFileFixture('The MCP server over HTTP', startEverythingOverHttp, server => server.stop())
const app = useBuiltApp({ NUXT_AUTH_GUESTS: 'false', NUXT_LIMITS_ROLES_GUEST_MODELS: 'or3/offline-demo', NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0' })
const browser = useChromium()
const profiles = useProfiles(browser)

/** A page of a new desktop profile, signed in as the admin (Ada, made by the first test). */
async function signedInAdmin() {
  const page = await (await profiles.fresh({ viewport: { width: 1200, height: 820 } })).newPage()
  await page.goto(`${app.url}/login`)
  await page.locator('input[name=name]').fill('Ada')
  await page.locator('input[name=password]').fill('correct horse battery')
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.waitForURL(`${app.url}/`)
  return page
}

describe('accounts in the browser', () => {
  it('first-run setup → chat → sign out → sign in on a second profile → the conversation is there', async () => {
    const first = await profiles.fresh({ viewport: { width: 1200, height: 820 } })
    const page = await first.newPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/`)
    await page.waitForURL(/\/login/)
    await expect.poll(() => page.locator('h1').innerText()).toBe('Create the admin account')
    await screenshot(page, 'first-run-setup')
    await page.locator('input[name=name]').fill('Ada')
    await page.locator('input[name=password]').fill('correct horse battery')
    await page.getByRole('button', { name: 'Create account' }).click()
    await page.waitForURL(`${app.url}/`)
    await expect.poll(() => page.getByTestId('account-name').innerText()).toBe('Ada')

    await page.getByTestId('composer-input').fill('What time is it in Tokyo?')
    await page.getByTestId('composer-input').press('Enter')
    await page.waitForURL(/\/chat\/[\w-]+$/)
    const conversation = new URL(page.url()).pathname
    await expect.poll(() => page.getByTestId('message-assistant').last().getAttribute('data-status')).toBe('complete')

    await page.getByTestId('sign-out').click()
    await page.waitForURL(/\/login/)
    await expect.poll(() => page.locator('h1').innerText()).toBe('Sign in')
    // Signed out, the API is closed to this browser too.
    expect(await page.evaluate(async () => (await fetch('/api/threads')).status)).toBe(401)

    const second = await profiles.fresh({ viewport: { width: 1200, height: 820 } })
    const other = await second.newPage()
    const otherProblems = watchForProblems(other)
    await other.goto(`${app.url}${conversation}`)
    await other.waitForURL(/\/login\?next=/)
    await other.locator('input[name=name]').fill('ada')
    await other.locator('input[name=password]').fill('wrong password')
    await other.getByRole('button', { name: 'Sign in' }).click()
    await expect.poll(() => other.getByTestId('login-problem').innerText()).toMatch(/do not match/)
    await other.locator('input[name=password]').fill('correct horse battery')
    await other.getByRole('button', { name: 'Sign in' }).click()
    await other.waitForURL(`${app.url}${conversation}`)
    await expect.poll(() => other.getByTestId('message-user').first().innerText()).toContain('What time is it in Tokyo?')
    await expect.poll(() => other.getByTestId('message-assistant').last().getAttribute('data-status')).toBe('complete')
    await screenshot(other, 'signed-in-second-device')

    expect(problems.csp).toEqual([])
    expect(otherProblems.csp).toEqual([])
  })

  it('an admin adds an MCP server on the Admin page; an open Settings page shows its tools without a reload', async () => {
    const context = await profiles.fresh({ viewport: { width: 1200, height: 820 } })
    const page = await context.newPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/login`)
    await page.locator('input[name=name]').fill('Ada')
    await page.locator('input[name=password]').fill('correct horse battery')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${app.url}/`)

    const settings = await context.newPage()
    const settingsProblems = watchForProblems(settings)
    await settings.goto(`${app.url}/settings`)
    await expect.poll(() => settings.getByTestId('tool-list').innerText()).toContain('get_current_time')
    expect(await settings.getByTestId('tool-list').innerText()).not.toContain('remote__echo')

    await visit(page, app.url, '/admin')
    const form = page.getByTestId('mcp-admin-form')
    // Examples are words under each field, never placeholders that read like values already filled in.
    await form.getByLabel('Name', { exact: true }).waitFor()
    expect(await form.locator('[placeholder]').count()).toBe(0)
    await form.getByLabel('Name', { exact: true }).fill('remote')
    await form.getByLabel('URL', { exact: true }).fill(remote.url)
    await form.getByLabel(/Headers/).fill('Authorization: Bearer browser-secret')
    await form.getByLabel(/Only these tools/).fill('echo, get-sum')
    await form.getByRole('button', { name: 'Add' }).click()
    await expect.poll(() => page.getByTestId('mcp-admin-remote').innerText()).toMatch(/added here[\s\S]*ready, 2 tools/)
    await screenshot(page, 'admin-mcp-servers')

    // The open Settings page heard of the change and read the tools again.
    await expect.poll(() => settings.getByTestId('tool-list').innerText()).toContain('remote__echo')

    // Editing shows the header masked; saving with the mask keeps it (the server stays ready).
    await page.getByTestId('mcp-admin-remote').getByRole('button', { name: 'Edit' }).click()
    expect(await form.getByLabel(/Headers/).inputValue()).toBe('Authorization: ••••••••')
    expect(await page.content()).not.toContain('browser-secret')
    await form.getByLabel(/Only these tools/).fill('echo')
    await form.getByRole('button', { name: 'Save' }).click()
    await expect.poll(() => page.getByTestId('mcp-admin-remote').innerText()).toMatch(/ready, 1 tool\b/)
    await expect.poll(() => settings.getByTestId('tool-list').innerText()).not.toContain('remote__get-sum')

    // watchForProblems dismisses dialogs; this one is meant to be accepted.
    page.removeAllListeners('dialog')
    page.once('dialog', dialog => void dialog.accept())
    await page.getByTestId('mcp-admin-remote').getByRole('button', { name: 'Remove' }).click()
    await expect.poll(() => page.getByTestId('mcp-admin').innerText()).toContain('No MCP servers yet')
    await expect.poll(() => settings.getByTestId('tool-list').innerText()).not.toContain('remote__echo')

    expect(problems.csp).toEqual([])
    expect(settingsProblems.csp).toEqual([])
  }, 90_000)

  it('an admin resets a password in a masked field of a dialog, and the person signs in with the new one only', async () => {
    const signIn = async (name: string, password: string) => {
      const context = await profiles.fresh({ viewport: { width: 1200, height: 820 } })
      const page = await context.newPage()
      await page.goto(`${app.url}/login`)
      await page.locator('input[name=name]').fill(name)
      await page.locator('input[name=password]').fill(password)
      await page.getByRole('button', { name: 'Sign in' }).click()
      return { context, page }
    }
    const { context, page } = await signIn('Ada', 'correct horse battery')
    const problems = watchForProblems(page)
    await page.waitForURL(`${app.url}/`)
    await visit(page, app.url, '/admin')
    const add = page.locator('form.admin__add')
    await add.getByLabel('Name').fill('Grace')
    await add.getByLabel('Password').fill('first password of grace')
    await add.getByRole('button', { name: 'Add account' }).click()
    const row = page.getByTestId('account-Grace')
    await row.waitFor()

    await row.getByRole('button', { name: 'Reset password' }).click()
    const dialog = page.getByTestId('reset-password-dialog')
    await dialog.waitFor()
    // Typed out of sight, in the page's own dialog (the browser's prompt() showed it in clear).
    expect(await dialog.locator('input').getAttribute('type')).toBe('password')
    await dialog.locator('input').fill('second password of grace')
    expect(await axeViolationsInBothSchemes(page, '[role=dialog]')).toEqual([])
    await dialog.getByRole('button', { name: 'Set password' }).click()
    await dialog.waitFor({ state: 'detached' })
    await expect.poll(() => page.getByTestId('toast').allInnerTexts()).toContainEqual(expect.stringContaining('Grace\'s password was changed'))
    expect(problems.dialogs).toEqual([])

    const old = await signIn('Grace', 'first password of grace')
    await old.page.getByTestId('login-problem').waitFor()
    await old.context.close()
    const fresh = await signIn('Grace', 'second password of grace')
    await fresh.page.waitForURL(`${app.url}/`)
    await fresh.context.close()
  }, 90_000)

  it('a person turns on two-step sign-in from a QR code in Settings, keeps the recovery codes, and signs in with a code from the app', async () => {
    const context = await profiles.fresh({ viewport: { width: 1200, height: 820 } })
    const page = await context.newPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/login`)
    await page.locator('input[name=name]').fill('Grace')
    await page.locator('input[name=password]').fill('second password of grace')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${app.url}/`)
    await page.goto(`${app.url}/settings#two-step`)
    await page.getByTestId('two-step-begin').click()
    await page.getByTestId('two-step-setup').waitFor()
    expect(await page.getByRole('img', { name: 'QR code of the secret for your authenticator app' }).evaluate(image => (image as HTMLImageElement).naturalWidth)).toBeGreaterThan(0)
    const secret = (await page.getByTestId('two-step-secret').innerText()).trim()
    const codeAt = (offsetMs: number) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + offsetMs })
    expect(await axeViolationsInBothSchemes(page, '[data-testid=two-step]')).toEqual([])
    await page.getByTestId('two-step-confirm-code').locator('input').or(page.locator('input[data-testid=two-step-confirm-code]')).first().fill(codeAt(0))
    await page.getByTestId('two-step-setup').getByRole('button', { name: 'Turn on', exact: true }).click()
    await expect.poll(() => page.getByTestId('recovery-codes').locator('li').count()).toBe(10)
    await expect.poll(() => page.getByTestId('two-step-codes-left').innerText()).toContain('10 recovery codes left')
    expect(await axeViolationsInBothSchemes(page, '[data-testid=two-step]')).toEqual([])
    expect(problems.errors).toEqual([])

    const other = await profiles.fresh({ viewport: { width: 390, height: 844 } })
    const phone = await other.newPage()
    await phone.goto(`${app.url}/login`)
    await phone.locator('input[name=name]').fill('Grace')
    await phone.locator('input[name=password]').fill('second password of grace')
    await phone.getByRole('button', { name: 'Sign in' }).click()
    const code = phone.locator('input[name=one-time-code]')
    await code.waitFor()
    expect(await axeViolationsInBothSchemes(phone, '[data-testid=login-form]')).toEqual([])
    await code.fill('000000')
    await phone.getByTestId('two-step-submit').click()
    await expect.poll(() => phone.getByTestId('login-problem').innerText()).toContain('not right')
    await code.fill(codeAt(30_000))
    await phone.getByTestId('two-step-submit').click()
    await phone.waitForURL(`${app.url}/`)
  }, 90_000)

  it('a person the admin requires two-step sign-in of sets it up first, on a page of its own, then goes on to the app', async () => {
    const adminPage = await signedInAdmin()
    // Hugo's account; the admin's own two-step first (the API, as the Settings test above did it by hand), then the requirement on the Admin page.
    const secret = await adminPage.evaluate(async () => {
      await fetch('/api/admin/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Hugo', password: 'a password of hugo', role: 'user' }) })
      return ((await (await fetch('/api/me/two-step/setup', { method: 'POST' })).json()) as { secret: string }).secret
    })
    const adminCode = new TOTP({ secret: Secret.fromBase32(secret) }).generate()
    expect(await adminPage.evaluate(async code => (await fetch('/api/me/two-step/confirm', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) })).status, adminCode)).toBe(200)
    await visit(adminPage, app.url, '/admin')
    await adminPage.getByTestId('two-step-required').click()
    await adminPage.getByRole('option', { name: 'Required for everyone' }).click()
    await expect.poll(() => adminPage.evaluate(async () => ((await (await fetch('/api/admin/settings')).json()) as { twoStepRequired: string }).twoStepRequired)).toBe('everyone')

    const context = await profiles.fresh({ viewport: { width: 390, height: 844 } })
    const page = await context.newPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/login`)
    await page.locator('input[name=name]').fill('Hugo')
    await page.locator('input[name=password]').fill('a password of hugo')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.waitForURL(`${app.url}/two-step`)
    // Any other page sends him back here.
    await page.goto(`${app.url}/settings`)
    await page.waitForURL(`${app.url}/two-step`)
    await page.getByTestId('two-step-begin').click()
    await page.getByTestId('two-step-setup').waitFor()
    expect(await axeViolationsInBothSchemes(page, '[data-testid=two-step-required]')).toEqual([])
    const hugoSecret = (await page.getByTestId('two-step-secret').innerText()).trim()
    await page.locator('input[data-testid=two-step-confirm-code]').or(page.getByTestId('two-step-confirm-code').locator('input')).first().fill(new TOTP({ secret: Secret.fromBase32(hugoSecret) }).generate())
    await page.getByTestId('two-step-setup').getByRole('button', { name: 'Turn on', exact: true }).click()
    await expect.poll(() => page.getByTestId('recovery-codes').locator('li').count()).toBe(10)
    await page.getByTestId('two-step-continue').click()
    await page.waitForURL(`${app.url}/`)
    await page.getByTestId('composer-input').waitFor()
    expect(problems.errors).toEqual([])
    // Back to nobody held, and the admin's own two-step off, for what follows.
    expect(await adminPage.evaluate(async () => (await fetch('/api/admin/settings', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ twoStepRequired: 'off' }) })).status)).toBe(200)
    const offCode = new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + 30_000 })
    expect(await adminPage.evaluate(async code => (await fetch('/api/me/two-step', { method: 'DELETE', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ password: 'correct horse battery', code }) })).status, offCode)).toBe(200)
  }, 90_000)

  it('a person adds a passkey in Settings (Chromium\'s virtual authenticator), signs in with it alone and as the second step after the password, and removes it', async () => {
    // WebAuthn binds a passkey to a domain name: the app is opened at localhost here (an IP address cannot have one).
    const site = app.url.replace('127.0.0.1', 'localhost')
    const adminPage = await signedInAdmin()
    expect(await adminPage.evaluate(async () => (await fetch('/api/admin/users', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Lin', password: 'a password of lin', role: 'user' }) })).status)).toBe(201)
    // At an IP address the page says passkeys cannot be used, and offers none.
    await visit(adminPage, app.url, '/settings')
    await adminPage.getByTestId('passkeys-unsupported').waitFor()
    expect(await adminPage.getByTestId('passkey-add').count()).toBe(0)

    const context = await profiles.fresh({ viewport: { width: 1200, height: 820 } })
    const page = await context.newPage()
    const problems = watchForProblems(page)
    const devtools = await context.newCDPSession(page)
    await devtools.send('WebAuthn.enable')
    const { authenticatorId } = await devtools.send('WebAuthn.addVirtualAuthenticator', { options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } })
    await page.goto(`${site}/login`)
    await page.locator('input[name=name]').fill('Lin')
    await page.locator('input[name=password]').fill('a password of lin')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.waitForURL(`${site}/`)
    await page.goto(`${site}/settings#two-step`)
    await page.locator('input[data-testid=passkey-name]').or(page.getByTestId('passkey-name').locator('input')).first().fill('This laptop')
    await page.getByTestId('passkey-add').click()
    await expect.poll(() => page.getByTestId('recovery-codes').locator('li').count()).toBe(10)
    const recoveryCodes = await page.getByTestId('recovery-codes').locator('li').allInnerTexts()
    await expect.poll(() => page.getByTestId('passkey').allInnerTexts()).toEqual([expect.stringContaining('This laptop')])
    await expect.poll(() => page.getByTestId('two-step-codes-left').innerText()).toContain('10 recovery codes left')
    expect((await devtools.send('WebAuthn.getCredentials', { authenticatorId })).credentials).toHaveLength(1)
    await page.getByTestId('two-step').scrollIntoViewIfNeeded()
    await screenshot(page, 'passkeys-settings')
    expect(await axeViolationsInBothSchemes(page, '[data-testid=two-step]')).toEqual([])

    // Signed out, the passkey alone signs in: no name, no password.
    await page.getByTestId('sign-out').click()
    await page.waitForURL(/\/login/)
    await page.getByTestId('sign-in-passkey').click()
    await page.waitForURL(`${site}/`)
    await expect.poll(() => page.getByTestId('account-name').innerText()).toBe('Lin')

    // After the password, the passkey is the second step (a code would do too), on a phone.
    await page.getByTestId('sign-out').click()
    await page.waitForURL(/\/login/)
    await page.setViewportSize({ width: 390, height: 844 })
    await page.locator('input[name=name]').fill('Lin')
    await page.locator('input[name=password]').fill('a password of lin')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByTestId('second-step-passkey').waitFor()
    await page.locator('input[name=one-time-code]').waitFor()
    expect(await axeViolationsInBothSchemes(page, '[data-testid=login-form]')).toEqual([])
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true)
    await screenshot(page, 'passkey-second-step-phone')
    await page.getByTestId('second-step-passkey').click()
    await page.waitForURL(`${site}/`)
    await expect.poll(() => page.evaluate(async () => ((await (await fetch('/api/auth/me')).json()) as { user?: { name: string } }).user?.name)).toBe('Lin')

    // A passkey the device no longer has: the sign-in page says so, and nothing is signed in.
    await devtools.send('WebAuthn.clearCredentials', { authenticatorId })
    await page.setViewportSize({ width: 1200, height: 820 })
    await page.getByTestId('sign-out').click()
    await page.waitForURL(/\/login/)
    await page.getByTestId('sign-in-passkey').click()
    await expect.poll(() => page.getByTestId('login-problem').innerText()).toMatch(/not used|not accepted/)

    // A recovery code still signs in; there the passkey is removed with the password, and two-step sign-in is off again.
    await page.locator('input[name=name]').fill('Lin')
    await page.locator('input[name=password]').fill('a password of lin')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.locator('input[name=one-time-code]').fill(recoveryCodes[0]!.trim())
    await page.getByTestId('two-step-submit').click()
    await page.waitForURL(`${site}/`)
    await visit(page, site, '/settings')
    await page.getByTestId('passkey-remove').click()
    await page.locator('input[data-testid=passkey-password]').or(page.getByTestId('passkey-password').locator('input')).first().fill('a password of lin')
    await page.getByTestId('passkey-remove-confirm').click()
    await expect.poll(() => page.getByTestId('passkey').count()).toBe(0)
    await expect.poll(() => page.getByTestId('two-step-codes-left').count()).toBe(0)
    expect(await page.evaluate(async () => ((await (await fetch('/api/me/two-step')).json()) as { enabled: boolean }).enabled)).toBe(false)
    expect(problems.errors).toEqual([])
  }, 120_000)
})
