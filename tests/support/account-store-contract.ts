/** The behaviour every account store must have (memory, sqlite, Convex). */
import { useTestFixture } from './file-fixture'
import { describe, expect, it, vi } from 'vitest'
import { LastAdminError, type AccountBackend } from '../../server/lib/stores/accounts/account-store'

/** Registers the account store contract tests for one store. */
export function describeAccountStoreContract(name: string, createStore: () => AccountBackend | Promise<AccountBackend>): void {
  describe(`account store contract: ${name}`, () => {
    const store = useTestFixture('The store', createStore, store => store.close())

    it('creates the first account only once when asked for the first, and keeps names unique without regard to case', async () => {
      expect(await store.hasAccounts()).toBe(false)
      const admin = await store.createAccount({ name: ' Ada ', passwordHash: 'h1', role: 'admin', onlyIfNone: true, now: 1 })
      expect(admin).toMatchObject({ name: 'Ada', role: 'admin', disabled: false, sessionVersion: 1, createdAt: 1, passwordHash: 'h1' })
      expect(await store.hasAccounts()).toBe(true)
      expect(await store.createAccount({ name: 'Bob', passwordHash: 'h2', role: 'admin', onlyIfNone: true })).toBeNull()
      expect(await store.createAccount({ name: 'ADA', passwordHash: 'h3', role: 'user' })).toBeNull()
      const bob = await store.createAccount({ name: 'Bob', passwordHash: 'h2', role: 'user', now: 2 })
      expect(bob).toMatchObject({ name: 'Bob', role: 'user' })
      expect((await store.findAccountByName('bob'))?.id).toBe(bob!.id)
      expect(await store.getAccount(admin!.id)).toEqual(admin)
      expect((await store.listAccounts(10)).map(item => item.name)).toEqual(['Ada', 'Bob'])
      expect(await store.listAccounts(1)).toHaveLength(1)
      expect(await store.findAccountByName('nobody')).toBeNull()
    })

    it('bumps the session version when the password changes or the account is disabled, not for a role change', async () => {
      const account = (await store.createAccount({ name: 'Cy', passwordHash: 'old', role: 'user' }))!
      expect(await store.updateAccount(account.id, { role: 'admin' })).toMatchObject({ role: 'admin', sessionVersion: 1 })
      expect(await store.updateAccount(account.id, { passwordHash: 'new' })).toMatchObject({ passwordHash: 'new', sessionVersion: 2 })
      expect(await store.updateAccount(account.id, { disabled: true })).toMatchObject({ disabled: true, sessionVersion: 3 })
      expect(await store.updateAccount(account.id, { disabled: true })).toMatchObject({ sessionVersion: 3 })
      expect(await store.updateAccount(account.id, { endSessions: true })).toMatchObject({ sessionVersion: 4, disabled: true, passwordHash: 'new' })
      expect(await store.updateAccount('missing', { disabled: true })).toBeNull()
    })

    it('refuses a second account with the id of one that exists (two sign-ups from one guest at once)', async () => {
      expect(await store.createAccount({ name: 'Ada', passwordHash: 'h', role: 'user', id: 'guest-1', now: 1 })).toMatchObject({ id: 'guest-1', name: 'Ada' })
      expect(await store.createAccount({ name: 'Bob', passwordHash: 'h', role: 'user', id: 'guest-1', now: 2 })).toBeNull()
      expect(await store.getAccount('guest-1')).toMatchObject({ name: 'Ada' })
      expect(await store.findAccountByName('Bob')).toBeNull()
    })

    it('keeps an active admin: of two admins demoting and disabling each other at once, one change is refused', async () => {
      const ada = (await store.createAccount({ name: 'Ada', passwordHash: 'h', role: 'admin', now: 1 }))!
      const bob = (await store.createAccount({ name: 'Bob', passwordHash: 'h', role: 'admin', now: 2 }))!
      const results = await Promise.allSettled([store.updateAccount(ada.id, { role: 'user', keepAnAdmin: true }), store.updateAccount(bob.id, { disabled: true, keepAnAdmin: true })])
      expect(results.filter(result => result.status === 'fulfilled')).toHaveLength(1)
      const refused = results.find(result => result.status === 'rejected') as PromiseRejectedResult
      expect(LastAdminError.isInstance(refused.reason)).toBe(true)
      const admins = (await store.listAccounts(10)).filter(account => account.role === 'admin' && !account.disabled)
      expect(admins).toHaveLength(1)
      // Without the flag (a change that keeps the role) nothing is checked; a user is never the last admin.
      const cy = (await store.createAccount({ name: 'Cy', passwordHash: 'h', role: 'user', now: 3 }))!
      expect(await store.updateAccount(cy.id, { disabled: true, keepAnAdmin: true })).toMatchObject({ disabled: true })
    })

    it('stores tokens by hash, lists them per user, revokes only the owner\'s, and deletes them with the account', async () => {
      const owner = (await store.createAccount({ name: 'Dee', passwordHash: 'h', role: 'user' }))!
      const other = (await store.createAccount({ name: 'Eve', passwordHash: 'h', role: 'user' }))!
      await store.createApiToken({ id: 't1', userId: owner.id, name: 'script', prefix: 'or3_abc', tokenHash: 'hash-1', createdAt: 1, lastUsedAt: null })
      await store.createApiToken({ id: 't2', userId: owner.id, name: 'cron', prefix: 'or3_def', tokenHash: 'hash-2', createdAt: 2, lastUsedAt: null })
      expect(await store.findApiToken('hash-1')).toMatchObject({ id: 't1', userId: owner.id, name: 'script' })
      expect((await store.listApiTokens(owner.id)).map(item => item.id)).toEqual(['t2', 't1'])
      await store.touchApiToken('t1', 50)
      expect((await store.findApiToken('hash-1'))?.lastUsedAt).toBe(50)
      expect(await store.deleteApiToken(other.id, 't1')).toBe(false)
      expect(await store.deleteApiToken(owner.id, 't1')).toBe(true)
      expect(await store.findApiToken('hash-1')).toBeNull()
      expect(await store.deleteAccount(owner.id)).toBe(true)
      expect(await store.findApiToken('hash-2')).toBeNull()
      expect(await store.getAccount(owner.id)).toBeNull()
      expect(await store.deleteAccount(owner.id)).toBe(false)
    })

    it('links a provider identity to one account only, finds and lists it, records sign-ins, and deletes it with the account', async () => {
      const owner = (await store.createAccount({ name: 'Fay', passwordHash: '', role: 'user' }))!
      const other = (await store.createAccount({ name: 'Gus', passwordHash: '', role: 'user' }))!
      expect(await store.linkIdentity({ provider: 'corp', subject: 'sub-1', accountId: owner.id, email: 'fay@corp.example', now: 10 })).toBe(true)
      // The same person of the same provider cannot be linked again, to anyone.
      expect(await store.linkIdentity({ provider: 'corp', subject: 'sub-1', accountId: other.id, email: null, now: 11 })).toBe(false)
      // The same subject at another provider is another person.
      expect(await store.linkIdentity({ provider: 'google', subject: 'sub-1', accountId: other.id, email: null, now: 12 })).toBe(true)
      expect(await store.linkIdentity({ provider: 'google', subject: 'sub-2', accountId: owner.id, email: null, now: 13 })).toBe(true)
      expect(await store.findIdentity('corp', 'sub-1')).toEqual({ provider: 'corp', subject: 'sub-1', accountId: owner.id, email: 'fay@corp.example', createdAt: 10, lastSignInAt: 10 })
      expect(await store.findIdentity('corp', 'sub-9')).toBeNull()
      await store.touchIdentity('corp', 'sub-1', 'fay@new.example', 50)
      expect(await store.findIdentity('corp', 'sub-1')).toMatchObject({ email: 'fay@new.example', lastSignInAt: 50, createdAt: 10 })
      expect((await store.listIdentities(owner.id)).map(item => `${item.provider}/${item.subject}`)).toEqual(['corp/sub-1', 'google/sub-2'])
      expect(await store.deleteAccount(owner.id)).toBe(true)
      expect(await store.findIdentity('corp', 'sub-1')).toBeNull()
      expect(await store.listIdentities(owner.id)).toEqual([])
      expect(await store.findIdentity('google', 'sub-1')).toMatchObject({ accountId: other.id })
    })

    it('uses an invite once, and never after it expires', async () => {
      await store.createInvite({ codeHash: 'once', createdBy: 'admin', expiresAt: 100, now: 1 })
      await store.createInvite({ codeHash: 'late', createdBy: 'admin', expiresAt: 100, now: 1 })
      expect(await store.inviteUsable('once', 10)).toBe(true)
      expect(await store.inviteUsable('late', 100)).toBe(false)
      expect(await store.inviteUsable('unknown', 10)).toBe(false)
      expect(await store.useInvite('once', 10)).toBe(true)
      expect(await store.inviteUsable('once', 11)).toBe(false)
      expect(await store.useInvite('once', 11)).toBe(false)
      expect(await store.useInvite('late', 100)).toBe(false)
      expect(await store.useInvite('unknown', 10)).toBe(false)
    })

    it('keeps settings', async () => {
      expect(await store.getSetting('signup')).toBeNull()
      await store.setSetting('signup', 'open')
      await store.setSetting('signup', 'invite')
      expect(await store.getSetting('signup')).toBe('invite')
    })

    it('deletes the settings under a prefix and only those', async () => {
      await store.setSetting('mcp-oauth:u1:github', 'a')
      await store.setSetting('mcp-oauth:u1:linear', 'b')
      await store.setSetting('mcp-oauth:u10:github', 'c')
      await store.setSetting('signup', 'open')
      await store.deleteSettings('mcp-oauth:u1:')
      expect(await store.getSetting('mcp-oauth:u1:github')).toBeNull()
      expect(await store.getSetting('mcp-oauth:u1:linear')).toBeNull()
      expect(await store.getSetting('mcp-oauth:u10:github')).toBe('c')
      expect(await store.getSetting('signup')).toBe('open')
    })

    it('gives a lock to one owner at a time until it is released or expires', async () => {
      // A store shared by instances (Convex) reads its own clock; the others take the time given.
      const lockAt = (now: number, owner: string, key = 'refresh:u1:github') => {
        vi.setSystemTime(now)
        return store.tryLock(key, owner, 1_000, now)
      }
      vi.useFakeTimers({ toFake: ['Date'] })
      try {
        expect(await lockAt(10_000, 'a')).toBe(true)
        expect(await lockAt(10_500, 'b')).toBe(false)
        // Its holder may take it again (renewal), another key is free.
        expect(await lockAt(10_600, 'a')).toBe(true)
        expect(await lockAt(10_600, 'b', 'refresh:u2:github')).toBe(true)
        // Only its holder releases it.
        await store.unlock('refresh:u1:github', 'b')
        expect(await lockAt(10_700, 'b')).toBe(false)
        await store.unlock('refresh:u1:github', 'a')
        expect(await lockAt(10_700, 'b')).toBe(true)
        // An expired lock is free.
        expect(await lockAt(11_701, 'c')).toBe(true)
      } finally {
        vi.useRealTimers()
      }
    })

    it('adds usage per principal and day, lists a day by tokens, and forgets a principal', async () => {
      expect(await store.getUsage('u1', '2026-11-22')).toBeNull()
      await store.addUsage('u1', '2026-11-22', { tokens: 100, cost: 0.5 })
      await store.addUsage('u1', '2026-11-22', { tokens: 50, cost: 0.25 })
      await store.addUsage('u1', '2026-11-23', { tokens: 7, cost: 0 })
      await store.addUsage('u2', '2026-11-22', { tokens: 500, cost: 0 })
      await Promise.all(Array.from({ length: 5 }, () => store.addUsage('u3', '2026-11-22', { tokens: 1, cost: 0 })))
      expect(await store.getUsage('u1', '2026-11-22')).toEqual({ userId: 'u1', day: '2026-11-22', tokens: 150, cost: 0.75, jobs: 2 })
      expect(await store.getUsage('u3', '2026-11-22')).toMatchObject({ tokens: 5, jobs: 5 })
      expect((await store.listUsage('2026-11-22', 10)).map(row => [row.userId, row.tokens])).toEqual([['u2', 500], ['u1', 150], ['u3', 5]])
      expect(await store.listUsage('2026-11-22', 1)).toHaveLength(1)
      await store.deleteUsage('u1')
      expect(await store.getUsage('u1', '2026-11-22')).toBeNull()
      expect(await store.getUsage('u1', '2026-11-23')).toBeNull()
      expect(await store.getUsage('u2', '2026-11-22')).toMatchObject({ tokens: 500 })
    })

    it('keeps each model\'s share per principal and day with the day\'s total, lists a span by day and tokens, and forgets a principal\'s', async () => {
      await store.addUsage('m1', '2026-11-20', { tokens: 30, cost: 0.3, byModel: [{ model: 'openai/gpt-4o', tokens: 20, cost: 0.2 }, { model: 'or3/offline-demo', tokens: 10, cost: 0.1 }] })
      await store.addUsage('m1', '2026-11-20', { tokens: 5, cost: 0, byModel: [{ model: 'or3/offline-demo', tokens: 5, cost: 0 }] })
      await store.addUsage('m1', '2026-11-21', { tokens: 7, cost: 0, byModel: [{ model: 'openai/gpt-4o', tokens: 7, cost: 0 }] })
      await store.addUsage('m2', '2026-11-21', { tokens: 90, cost: 1, byModel: [{ model: 'openai/gpt-4o', tokens: 90, cost: 1 }] })
      // Without shares (as before the ledger had models): the day counts, no model row.
      await store.addUsage('m2', '2026-11-22', { tokens: 4, cost: 0 })
      await Promise.all(Array.from({ length: 4 }, () => store.addUsage('m3', '2026-11-20', { tokens: 1, cost: 0, byModel: [{ model: 'x/y', tokens: 1, cost: 0 }] })))
      expect(await store.getUsage('m1', '2026-11-20')).toMatchObject({ tokens: 35, jobs: 2 })
      const of = (rows: Array<{ userId: string, day: string, model: string, tokens: number, jobs: number }>) => rows.map(row => `${row.userId} ${row.day} ${row.model} ${row.tokens}/${row.jobs}`)
      expect(of(await store.listModelUsage({ userId: 'm1', from: '2026-11-01', to: '2026-11-30' }, 100))).toEqual([
        'm1 2026-11-21 openai/gpt-4o 7/1',
        'm1 2026-11-20 openai/gpt-4o 20/1',
        'm1 2026-11-20 or3/offline-demo 15/2',
      ])
      expect(of(await store.listModelUsage({ from: '2026-11-20', to: '2026-11-20' }, 100))).toEqual([
        'm1 2026-11-20 openai/gpt-4o 20/1',
        'm1 2026-11-20 or3/offline-demo 15/2',
        'm3 2026-11-20 x/y 4/4',
      ])
      expect(of(await store.listModelUsage({ from: '2026-11-21', to: '2026-11-22' }, 1))).toEqual(['m2 2026-11-21 openai/gpt-4o 90/1'])
      expect(await store.listModelUsage({ userId: 'nobody', from: '2026-11-01', to: '2026-11-30' }, 10)).toEqual([])
      await store.deleteUsage('m1')
      expect(await store.listModelUsage({ userId: 'm1', from: '2026-11-01', to: '2026-11-30' }, 100)).toEqual([])
      expect(await store.listModelUsage({ userId: 'm2', from: '2026-11-01', to: '2026-11-30' }, 100)).toHaveLength(1)
    })
  })
}
