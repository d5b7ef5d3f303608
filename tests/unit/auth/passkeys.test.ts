/**
 * Passkeys over the real account service and memory stores, with real WebAuthn answers from a
 * software authenticator: added with recovery codes the first time, a sign-in alone (the device
 * must have checked its owner) and as the second step, each answer good once (also when two
 * arrive at once), a cloned key's counter, another site's answer, attestation certificates and IP
 * addresses refused; removing the last one turns two-step sign-in off; passwords-off and disabled
 * accounts refused.
 */
import { afterEach, describe, expect, it, vi } from 'vitest'
import { AccountService } from '../../../server/lib/auth/accounts'
import { AuthError } from '../../../server/lib/auth/auth-errors'
import { passkeySite } from '../../../server/lib/auth/passkeys'
import { accountStoresOf } from '../../../server/lib/stores'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { testPasswordHasher } from '../../support/password-hasher'
import { testServerConfig } from '../../support/server-config'
import { SoftAuthenticator, type SoftAuthenticatorOptions } from '../../support/soft-authenticator'

const ORIGIN = 'https://chat.example.com'
const site = passkeySite(ORIGIN)
const settings = { signInAttemptsPerIpPerMinute: 100, signInFailuresPerAccount: 5, sessionsPerIpPerMinute: 10, tokensPerUser: 2, inviteTtlMs: 60_000, roleLimits: testServerConfig().limits.roles }
const reason = (promise: Promise<unknown>) => promise.then(() => 'accepted', (error: unknown) => (AuthError.isInstance(error) ? error.refusal : String(error)))

async function setUp(options: { passwords?: boolean, breakGlassAdmin?: string } = {}) {
  const store = createMemoryAccountBackend()
  const accounts = new AccountService(accountStoresOf(store), testPasswordHasher, { ...settings, ...options })
  const ann = await accounts.createAccount('ann', 'ann-password', 'user')
  const bob = await accounts.createAccount('bob', 'bob-password', 'admin')
  /** Adds a passkey for `userId` on `device` (a new software authenticator by default). */
  const add = async (userId: string, name: string, device = new SoftAuthenticator(ORIGIN)) => {
    const options = await accounts.passkeys.registrationOptions(userId, name, site)
    return { device, added: await accounts.passkeys.register(userId, device.create(options), name, site) }
  }
  const signIn = async (device: SoftAuthenticator, userId?: string) => {
    const options = await accounts.passkeys.signInOptions(site, userId)
    return accounts.passkeys.signIn(site, options.challenge, device.get(options), userId)
  }
  return { store, accounts, ann, bob, add, signIn }
}

afterEach(() => {
  vi.useRealTimers()
})

describe('passkeys', () => {
  it('are added with recovery codes the first time, sign in alone, and are the second step after the password', async () => {
    const { store, accounts, ann, add, signIn } = await setUp()
    const { device, added } = await add(ann.id, 'Laptop')
    expect(added.passkey).toMatchObject({ name: 'Laptop', synced: false })
    expect(added.recoveryCodes).toHaveLength(10)
    expect(await accounts.twoStep.status(ann.id)).toMatchObject({ enabled: true, app: false, passkeys: 1, recoveryCodesLeft: 10 })
    // Another passkey: the codes already shown go on working, none new.
    const second = await add(ann.id, 'Phone')
    expect(second.added.recoveryCodes).toBeUndefined()
    expect((await accounts.passkeys.list(ann.id)).map(key => key.name)).toEqual(['Laptop', 'Phone'])
    // The store keeps public keys only.
    expect(await store.getSetting(`two-step:${ann.id}:passkeys`)).not.toMatch(/PRIVATE|"d":/)

    // Alone: any passkey of the site; the browser's answer names the account.
    const options = await accounts.passkeys.signInOptions(site)
    expect(options).toMatchObject({ rpId: 'chat.example.com', userVerification: 'required', allowCredentials: [] })
    expect((await accounts.passkeys.signIn(site, options.challenge, device.get(options))).id).toBe(ann.id)
    expect((await accounts.passkeys.list(ann.id))[0]!.lastUsedAt).toBeGreaterThan(0)
    // As the second step: only that account's passkeys are offered.
    const afterPassword = await accounts.passkeys.signInOptions(site, ann.id)
    expect(afterPassword.allowCredentials?.map(item => item.id).sort()).toEqual([device.credentials[0]!.id, second.device.credentials[0]!.id].sort())
    expect((await signIn(second.device, ann.id)).id).toBe(ann.id)
    // A recovery code is a second step too.
    expect(await accounts.twoStep.check(ann.id, added.recoveryCodes![0]!)).toBe('recovery')
  })

  it('takes each answer once, even two at once, and refuses a cloned key, another site, another account and a device that did not check its owner alone', async () => {
    const { accounts, ann, bob, add, signIn } = await setUp()
    const { device } = await add(ann.id, 'Laptop')
    const options = await accounts.passkeys.signInOptions(site)
    const answer = device.get(options)
    const both = await Promise.all([1, 2].map(() => reason(accounts.passkeys.signIn(site, options.challenge, answer))))
    expect(both.sort()).toEqual(['accepted', 'bad-passkey'])
    expect(await reason(accounts.passkeys.signIn(site, options.challenge, answer))).toBe('bad-passkey')

    // A copy of the key whose counter is behind the one last seen.
    const earlier = await accounts.passkeys.signInOptions(site)
    const stale = device.get(earlier)
    await signIn(device)
    expect(await reason(accounts.passkeys.signIn(site, earlier.challenge, stale))).toBe('bad-passkey')

    // An answer made for another site (a phishing page's origin).
    const phished = new SoftAuthenticator('https://chat-example.evil')
    const phishedAdd = await accounts.passkeys.registrationOptions(ann.id, 'ann', site)
    expect(await reason(accounts.passkeys.register(ann.id, phished.create(phishedAdd), 'x', site))).toBe('bad-passkey')
    Object.assign(phished.credentials, device.credentials)
    const asked = await accounts.passkeys.signInOptions(site)
    expect(await reason(accounts.passkeys.signIn(site, asked.challenge, phished.get(asked)))).toBe('bad-passkey')

    // Bob's passkey is not Ann's second step.
    const bobs = await add(bob.id, 'Key')
    const annsStep = await accounts.passkeys.signInOptions(site, ann.id)
    expect(await reason(accounts.passkeys.signIn(site, annsStep.challenge, bobs.device.get(annsStep, bobs.device.credentials[0]!.id), ann.id))).toBe('bad-passkey')

    // A security key without a PIN: the second step, not a sign-in alone.
    const { device: plainKey } = await add(bob.id, 'Plain key', new SoftAuthenticator(ORIGIN, { verifiesUser: false }))
    expect(await reason(signIn(plainKey))).toBe('bad-passkey')
    expect(await reason(signIn(plainKey, bob.id))).toBe('accepted')
  })

  it('a key that does not count (0 every time) signs in again and again', async () => {
    const { ann, add, signIn } = await setUp()
    const options: SoftAuthenticatorOptions = { counts: false }
    const { device } = await add(ann.id, 'Synced', new SoftAuthenticator(ORIGIN, options))
    for (let round = 0; round < 3; round++) expect((await signIn(device)).id).toBe(ann.id)
  })

  it('refuses attestation certificates before reading them, an IP address as the site, a setup used twice or too old, and an eleventh passkey', async () => {
    const { accounts, ann, add } = await setUp()
    const device = new SoftAuthenticator(ORIGIN)
    const options = await accounts.passkeys.registrationOptions(ann.id, 'ann', site)
    const withCertificate = device.create(options, { fmt: 'packed', attStmt: new Map<string, unknown>([['alg', -7], ['sig', new Uint8Array(8)], ['x5c', [new Uint8Array(32)]]]) })
    expect(await reason(accounts.passkeys.register(ann.id, withCertificate, 'x', site))).toBe('bad-passkey')
    // The setup was used by that answer.
    expect(await reason(accounts.passkeys.register(ann.id, device.create(options), 'x', site))).toBe('passkey-setup')
    expect(() => passkeySite('http://127.0.0.1:3000')).toThrow(/domain name/)
    expect(() => passkeySite('http://[::1]:3000')).toThrow(/domain name/)
    expect(passkeySite('http://localhost:3000')).toEqual({ rpId: 'localhost', origin: 'http://localhost:3000' })

    vi.useFakeTimers({ toFake: ['Date'] })
    const late = await accounts.passkeys.registrationOptions(ann.id, 'ann', site)
    vi.setSystemTime(Date.now() + 6 * 60_000)
    expect(await reason(accounts.passkeys.register(ann.id, device.create(late), 'x', site))).toBe('passkey-setup')
    vi.useRealTimers()

    for (let index = 0; index < 10; index++) await add(ann.id, `Key ${index}`)
    expect(await reason(accounts.passkeys.registrationOptions(ann.id, 'ann', site))).toBe('too-many-passkeys')
  })

  it('the last one removed (with the password) turns two-step sign-in off; with the app on it stays on', async () => {
    const { accounts, ann, add, signIn } = await setUp()
    const { device, added } = await add(ann.id, 'Laptop')
    expect(await reason(accounts.passkeys.remove(ann.id, added.passkey.id, 'wrong'))).toBe('wrong-password')
    const renamed = await accounts.passkeys.rename(ann.id, added.passkey.id, '  Work laptop ')
    expect(renamed.name).toBe('Work laptop')
    // New recovery codes with the password (a person with passkeys only has no code to give).
    const renewed = await accounts.twoStep.renewRecoveryCodes(ann.id, { password: 'ann-password' })
    expect(await reason(accounts.twoStep.check(ann.id, added.recoveryCodes![0]!))).toBe('bad-code')
    expect(await accounts.twoStep.check(ann.id, renewed.recoveryCodes[0]!)).toBe('recovery')

    await accounts.passkeys.remove(ann.id, added.passkey.id, 'ann-password')
    expect(await accounts.twoStep.status(ann.id)).toMatchObject({ enabled: false, passkeys: 0 })
    expect(await reason(signIn(device))).toBe('bad-passkey')
    expect(await reason(accounts.passkeys.remove(ann.id, added.passkey.id, 'ann-password'))).toBe('unknown-passkey')

    // A passkey beside the app: removing it keeps the app's two-step sign-in and its codes.
    const { Secret, TOTP } = await import('otpauth')
    const { secret } = await accounts.twoStep.begin(ann.id, 'ann')
    const app = new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' })
    const { recoveryCodes } = await accounts.twoStep.confirm(ann.id, app.generate())
    expect(recoveryCodes).toHaveLength(10)
    const again = await add(ann.id, 'Phone')
    expect(again.added.recoveryCodes).toBeUndefined()
    await accounts.passkeys.remove(ann.id, again.added.passkey.id, 'ann-password')
    expect(await accounts.twoStep.status(ann.id)).toMatchObject({ enabled: true, app: true, passkeys: 0, recoveryCodesLeft: 10 })
    // And the other way round: the app turned off with a passkey left keeps two-step sign-in on.
    await add(ann.id, 'Phone again')
    await accounts.twoStep.disable(ann.id, 'ann-password', recoveryCodes[0]!)
    expect(await accounts.twoStep.status(ann.id)).toMatchObject({ enabled: true, app: false, passkeys: 1, recoveryCodesLeft: 9 })
  })

  it('recovery codes made for a passkey that was never stored (a crash between the two) count for nothing, and the next passkey makes new ones', async () => {
    const { accounts, ann, add } = await setUp()
    const orphaned = (await accounts.twoStep.passkeyAdding(ann.id))!
    expect(orphaned).toHaveLength(10)
    expect(await accounts.twoStep.status(ann.id)).toMatchObject({ enabled: false })
    expect(await reason(accounts.twoStep.check(ann.id, orphaned[0]!))).toBe('two-step-off')
    const { added } = await add(ann.id, 'Laptop')
    expect(added.recoveryCodes).toHaveLength(10)
    expect(added.recoveryCodes).not.toEqual(orphaned)
    expect(await reason(accounts.twoStep.check(ann.id, orphaned[0]!))).toBe('bad-code')
  })

  it('a disabled account, an account with passwords off (but the break-glass admin), and an admin password reset', async () => {
    const off = await setUp({ passwords: false, breakGlassAdmin: 'bob' })
    const anns = await off.add(off.ann.id, 'Laptop')
    const bobs = await off.add(off.bob.id, 'Key')
    expect(await reason(off.signIn(anns.device))).toBe('passwords-off')
    expect((await off.signIn(bobs.device)).id).toBe(off.bob.id)

    const { accounts, ann, add, signIn } = await setUp()
    const { device } = await add(ann.id, 'Laptop')
    await accounts.updateAccount(ann.id, { disabled: true })
    expect(await reason(signIn(device))).toBe('disabled')
    // A new password from the admin is how a person who lost their keys gets back in: the passkeys go.
    await accounts.updateAccount(ann.id, { disabled: false, password: 'a-new-password' })
    expect(await accounts.passkeys.list(ann.id)).toEqual([])
    expect(await reason(signIn(device))).toBe('bad-passkey')
  })
})
