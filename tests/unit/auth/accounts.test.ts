import { scryptSync, randomBytes, timingSafeEqual } from 'node:crypto'
import { beforeEach, describe, expect, it } from 'vitest'
import { testServerConfig } from '../../support/server-config'
import { AccountService, type PasswordHasher } from '../../../server/lib/auth/accounts'
import { AuthError } from '../../../server/lib/auth/auth-errors'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { accountStoresOf } from '../../../server/lib/stores'
import type { AccountBackend } from '../../../server/lib/stores/accounts/account-store'

/** A real (small-cost) scrypt, counting how often it verifies. */
function scryptHasher(): PasswordHasher & { verifications: number, hashes: number } {
  const hasher = {
    verifications: 0,
    hashes: 0,
    async hash(password: string) {
      hasher.hashes++
      const salt = randomBytes(8).toString('hex')
      return `${salt}:${scryptSync(password, salt, 16, { N: 1024 }).toString('hex')}`
    },
    async verify(hash: string, password: string) {
      hasher.verifications++
      const [salt, digest] = hash.split(':') as [string, string]
      return timingSafeEqual(Buffer.from(digest, 'hex'), scryptSync(password, salt, 16, { N: 1024 }))
    },
  }
  return hasher
}

const settings = { signInAttemptsPerIpPerMinute: 100, signInFailuresPerAccount: 3, sessionsPerIpPerMinute: 2, tokensPerUser: 2, inviteTtlMs: 60_000, roleLimits: testServerConfig().limits.roles }

async function refusal(promise: Promise<unknown>): Promise<AuthError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught)
  if (!AuthError.isInstance(error)) throw new Error(`expected an AuthError, got ${String(error)}`)
  return error
}

describe('AccountService', () => {
  let store: AccountBackend
  let hasher: ReturnType<typeof scryptHasher>
  let accounts: AccountService
  beforeEach(() => {
    store = createMemoryAccountBackend()
    hasher = scryptHasher()
    accounts = new AccountService(accountStoresOf(store), hasher, settings)
  })

  it('makes the first sign-up the admin, then follows the sign-up policy', async () => {
    expect(await accounts.needsSetup()).toBe(true)
    expect((await accounts.signUp('Ada', 'password-1', undefined)).role).toBe('admin')
    expect((await refusal(accounts.createFirstAdmin('Eve', 'password-1'))).refusal).toBe('already-set-up')
    expect((await refusal(accounts.signUp('Bob', 'password-1', undefined))).refusal).toBe('signup-closed')
    // An invite works under the default "closed" policy too: the admin made it.
    const early = await accounts.signups.createInvite('admin')
    expect((await refusal(accounts.signUp('Bob', 'password-1', 'not-a-code'))).refusal).toBe('bad-invite')
    expect((await accounts.signUp('Eve-Invited', 'password-1', early.code)).role).toBe('user')
    expect((await refusal(accounts.signUp('Fay', 'password-1', early.code))).refusal).toBe('bad-invite')
    await accounts.signups.setPolicy('open')
    expect((await accounts.signUp('Bob', 'password-1', undefined)).role).toBe('user')
    expect((await refusal(accounts.signUp('BOB', 'password-1', undefined))).refusal).toBe('name-taken')
    await accounts.signups.setPolicy('invite')
    const { code } = await accounts.signups.createInvite('admin')
    expect((await refusal(accounts.signUp('Cy', 'password-1', 'wrong'))).refusal).toBe('bad-invite')
    expect((await accounts.signUp('Cy', 'password-1', code)).name).toBe('Cy')
    expect((await refusal(accounts.signUp('Di', 'password-1', code))).refusal).toBe('bad-invite')
  })

  it('checks an unknown name against a decoy hash, so it costs what a wrong password costs, with one message', async () => {
    await accounts.signUp('Ada', 'password-1', undefined)
    const unknown = await refusal(accounts.signIn('Nobody', 'password-1', '10.0.0.1'))
    const wrong = await refusal(accounts.signIn('Ada', 'password-2', '10.0.0.1'))
    expect(hasher.verifications).toBe(2)
    expect([unknown.refusal, wrong.refusal]).toEqual(['bad-credentials', 'bad-credentials'])
    expect(unknown.message).toBe(wrong.message)
    expect((await accounts.signIn('ada', 'password-1', '10.0.0.1')).name).toBe('Ada')
  })

  it('locks a name after repeated failures (with a retry time), and a success clears them', async () => {
    await accounts.signUp('Ada', 'password-1', undefined)
    await refusal(accounts.signIn('Ada', 'nope', undefined))
    await refusal(accounts.signIn('Ada', 'nope', undefined))
    await accounts.signIn('Ada', 'password-1', undefined)
    for (let attempt = 0; attempt < 3; attempt++) await refusal(accounts.signIn('Ada', 'nope', undefined))
    const locked = await refusal(accounts.signIn('Ada', 'password-1', undefined))
    expect(locked.refusal).toBe('too-many-attempts')
    expect(locked.retryAfterSeconds).toBeGreaterThan(0)
  })

  it('counts guesses sent at once before any is checked: past the limit they are refused unchecked', async () => {
    await accounts.signUp('Ada', 'password-1', undefined)
    const before = hasher.verifications
    const results = await Promise.all(Array.from({ length: 30 }, () => refusal(accounts.signIn('Ada', 'nope', undefined))))
    expect(results.filter(result => result.refusal === 'bad-credentials')).toHaveLength(3)
    expect(results.filter(result => result.refusal === 'too-many-attempts')).toHaveLength(27)
    expect(hasher.verifications - before).toBe(3)
  })

  it('ends sessions of an older version, a disabled account, and a deleted one', async () => {
    const ada = await accounts.signUp('Ada', 'password-1', undefined)
    const claims = { userId: ada.id, version: ada.sessionVersion }
    expect(await accounts.principalForSession(claims)).toEqual({ id: ada.id, name: 'Ada', role: 'admin' })
    await accounts.endAllSessions(ada.id)
    expect((await refusal(accounts.principalForSession(claims))).refusal).toBe('session-ended')
    const bob = await accounts.createAccount('Bob', 'password-1', 'user')
    const bobClaims = { userId: bob.id, version: 1 }
    await accounts.updateAccount(bob.id, { disabled: true })
    expect((await refusal(accounts.principalForSession(bobClaims))).refusal).toBe('session-ended')
    await accounts.deleteAccount(bob.id)
    expect((await refusal(accounts.principalForSession({ userId: bob.id, version: 2 }))).refusal).toBe('session-ended')
  })

  it('keeps one active admin: the last cannot be demoted, disabled or deleted', async () => {
    const ada = await accounts.signUp('Ada', 'password-1', undefined)
    expect((await refusal(accounts.updateAccount(ada.id, { role: 'user' }))).refusal).toBe('last-admin')
    expect((await refusal(accounts.updateAccount(ada.id, { disabled: true }))).refusal).toBe('last-admin')
    expect((await refusal(accounts.deleteAccount(ada.id))).refusal).toBe('last-admin')
    const bob = await accounts.createAccount('Bob', 'password-1', 'admin')
    expect(await accounts.updateAccount(ada.id, { role: 'user' })).toMatchObject({ role: 'user' })
    expect((await refusal(accounts.deleteAccount(bob.id))).refusal).toBe('last-admin')
  })

  it('deletes an account\'s data through the hook before the account', async () => {
    const deleted: string[] = []
    accounts.onAccountDeleted(async id => void deleted.push(id))
    await accounts.signUp('Ada', 'password-1', undefined)
    const bob = await accounts.createAccount('Bob', 'password-1', 'user')
    expect(await accounts.deleteAccount(bob.id)).toBe(true)
    expect(deleted).toEqual([bob.id])
  })

  it('issues tokens shown once and stored hashed, up to the per-account cap, and refuses revoked or malformed ones', async () => {
    const ada = await accounts.signUp('Ada', 'password-1', undefined)
    expect((await refusal(accounts.tokens.create(ada.id, 'script', 'not-my-password'))).refusal).toBe('wrong-password')
    const first = await accounts.tokens.create(ada.id, 'script', 'password-1')
    await accounts.tokens.create(ada.id, 'cron', 'password-1')
    expect((await refusal(accounts.tokens.create(ada.id, 'third', 'password-1'))).refusal).toBe('too-many-tokens')
    expect(JSON.stringify(await store.listApiTokens(ada.id))).not.toContain(first.token)
    expect(await accounts.tokens.principalFor(first.token)).toMatchObject({ id: ada.id, role: 'admin' })
    expect((await accounts.tokens.list(ada.id)).find(token => token.id === first.id)?.lastUsedAt).not.toBeNull()
    await accounts.tokens.revoke(ada.id, first.id)
    expect((await refusal(accounts.tokens.principalFor(first.token))).refusal).toBe('bad-token')
    expect((await refusal(accounts.tokens.principalFor('or3_short'))).refusal).toBe('bad-token')
  })

  it('revokes an account\'s tokens when its sessions end: sign out everywhere, a new password, disabled', async () => {
    const ada = await accounts.signUp('Ada', 'password-1', undefined)
    const bob = await accounts.createAccount('Bob', 'password-2', 'user')
    const mint = async (id: string, password: string) => (await accounts.tokens.create(id, 'script', password)).token
    let token = await mint(ada.id, 'password-1')
    await accounts.endAllSessions(ada.id)
    expect((await refusal(accounts.tokens.principalFor(token))).refusal).toBe('bad-token')
    token = await mint(bob.id, 'password-2')
    await accounts.updateAccount(bob.id, { password: 'password-3' })
    expect((await refusal(accounts.tokens.principalFor(token))).refusal).toBe('bad-token')
    token = await mint(bob.id, 'password-3')
    await accounts.updateAccount(bob.id, { disabled: true })
    await accounts.updateAccount(bob.id, { disabled: false })
    expect((await refusal(accounts.tokens.principalFor(token))).refusal).toBe('bad-token')
    // Guessing the password to mint a token counts like guessing it to sign in.
    for (let attempt = 0; attempt < 3; attempt++) await refusal(accounts.tokens.create(bob.id, 'x', 'guess'))
    expect((await refusal(accounts.tokens.create(bob.id, 'x', 'password-3'))).refusal).toBe('too-many-attempts')
  })

  it('changes a person\'s own password with the current one: tokens and sessions end; a crash between leaves the old password and no tokens, never the old tokens', async () => {
    const ada = await accounts.signUp('Ada', 'password-1', undefined)
    const token = (await accounts.tokens.create(ada.id, 'script', 'password-1')).token
    expect((await refusal(accounts.changePassword(ada.id, 'wrong', 'password-2'))).refusal).toBe('wrong-password')
    // The store fails the password write once (a crash between the two steps).
    const updateAccount = store.updateAccount.bind(store)
    store.updateAccount = async () => {
      store.updateAccount = updateAccount
      throw new Error('the store went away')
    }
    await expect(accounts.changePassword(ada.id, 'password-1', 'password-2')).rejects.toThrow('the store went away')
    expect((await refusal(accounts.tokens.principalFor(token))).refusal).toBe('bad-token')
    expect((await accounts.signIn('Ada', 'password-1', undefined)).id).toBe(ada.id)
    // Tried again: done, and sessions of the old version end.
    const before = (await store.getAccount(ada.id))!.sessionVersion
    const changed = await accounts.changePassword(ada.id, 'password-1', 'password-2')
    expect(changed.sessionVersion).toBeGreaterThan(before)
    expect((await refusal(accounts.principalForSession({ userId: ada.id, version: before }))).refusal).toBe('session-ended')
    expect((await refusal(accounts.signIn('Ada', 'password-1', undefined))).refusal).toBe('bad-credentials')
    expect((await accounts.signIn('Ada', 'password-2', undefined)).id).toBe(ada.id)
  })

  it('checks the invite before the name, so a missing or wrong invite answers the same for a taken and a free name, at the same cost', async () => {
    await accounts.signUp('Ada', 'password-1', undefined)
    await accounts.signups.setPolicy('invite')
    const hashes = hasher.hashes
    for (const invite of [undefined, 'wrong-code']) {
      const taken = await refusal(accounts.signUp('Ada', 'password-1', invite))
      const free = await refusal(accounts.signUp('Zed', 'password-1', invite))
      expect([taken.refusal, free.refusal]).toEqual(['bad-invite', 'bad-invite'])
      expect(taken.message).toBe(free.message)
    }
    // No refusal hashed a password.
    expect(hasher.hashes).toBe(hashes)
    // A holder of a good invite who picks a taken name is told so, and keeps the invite.
    const { code } = await accounts.signups.createInvite('admin')
    expect((await refusal(accounts.signUp('Ada', 'password-2', code))).refusal).toBe('name-taken')
    expect((await accounts.signUp('Zed', 'password-2', code)).name).toBe('Zed')
  })

  it('counts sign-ups per address, refused or not', async () => {
    const limited = new AccountService(accountStoresOf(store), hasher, { ...settings, signupsPerIpPerHour: 2 })
    await limited.signUp('Ada', 'password-1', undefined, undefined, '203.0.113.5')
    await limited.signups.setPolicy('open')
    await limited.signUp('Bob', 'password-1', undefined, undefined, '203.0.113.5')
    const third = await refusal(limited.signUp('Cy', 'password-1', undefined, undefined, '203.0.113.5'))
    expect(third.refusal).toBe('too-many-attempts')
    expect(third.message).toMatch(/Too many sign-ups from this network address/)
    expect((await limited.signUp('Cy', 'password-1', undefined, undefined, '198.51.100.2')).name).toBe('Cy')
  })

  it('turns a guest into one account when it signs up twice at once (409 for the other, never a 500)', async () => {
    await accounts.signUp('Ada', 'password-1', undefined)
    await accounts.signups.setPolicy('open')
    const results = await Promise.allSettled([accounts.signUp('Gus', 'password-1', undefined, 'guest-9'), accounts.signUp('Gwen', 'password-1', undefined, 'guest-9')])
    expect(results.filter(result => result.status === 'fulfilled')).toHaveLength(1)
    const refused = (results.find(result => result.status === 'rejected') as PromiseRejectedResult).reason
    expect(refused).toMatchObject({ refusal: 'name-taken', message: expect.stringMatching(/already became an account/) })
    expect((await store.listAccounts(10)).filter(account => account.id === 'guest-9')).toHaveLength(1)
  })

  it('bounds new guest sessions per address', async () => {
    await accounts.attempts.newSession('10.0.0.9')
    await accounts.attempts.newSession('10.0.0.9')
    expect((await refusal(accounts.attempts.newSession('10.0.0.9'))).refusal).toBe('too-many-attempts')
    await accounts.attempts.newSession('10.0.0.10')
  })

  it('lets a guest\'s sign-up take over the guest id, once, after which that id is no guest', async () => {
    await accounts.signUp('Ada', 'password-1', undefined)
    await accounts.signups.setPolicy('open')
    const guestId = crypto.randomUUID()
    expect(await accounts.isGuestId(guestId)).toBe(true)
    const account = await accounts.signUp('Gus', 'password-1', undefined, guestId)
    expect(account).toMatchObject({ id: guestId, role: 'user' })
    expect(await accounts.isGuestId(guestId)).toBe(false)
    expect((await refusal(accounts.signUp('Gil', 'password-1', undefined, guestId))).refusal).toBe('name-taken')
    expect(await accounts.roleOf(guestId)).toBe('user')
    expect(await accounts.roleOf(crypto.randomUUID())).toBe('guest')
  })
})
