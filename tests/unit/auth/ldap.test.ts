/**
 * Sign-in against a real LDAP directory (Debian's slapd, tests/support/ldap-server.ts) through the
 * account service, as the sign-in form does: StartTLS and LDAPS with the certificate checked,
 * accounts linked to their entry with their groups and role, and everything that must fail
 * failing with the same words as a wrong password (or a 503 when the directory cannot be asked).
 */
import { createServer, type Server, type Socket } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { AccountService } from '../../../server/lib/auth/accounts'
import { testPasswordHasher } from '../../support/password-hasher'
import { escapeFilterValue, firstRdnValue, type LdapSettings } from '../../../server/lib/auth/ldap/ldap-directory'
import { accountStoresOf } from '../../../server/lib/stores'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { DIRECTORY_SUFFIX, PEOPLE, SERVICE_DN, SERVICE_PASSWORD, startTestDirectory, type TestDirectory } from '../../support/ldap-server'
import { testServerConfig } from '../../support/server-config'

const hasher = testPasswordHasher

let directory: TestDirectory
beforeAll(async () => {
  directory = await startTestDirectory()
}, 30_000)
afterAll(async () => {
  await directory?.close()
})

function ldapSettings(changes: Partial<LdapSettings> = {}): LdapSettings {
  return {
    url: directory.url,
    startTls: true,
    caFile: directory.caFile,
    bindDn: SERVICE_DN,
    bindPassword: SERVICE_PASSWORD,
    searchBase: DIRECTORY_SUFFIX,
    searchFilter: '(uid={{username}})',
    nameAttribute: 'cn',
    emailAttribute: 'mail',
    groupsAttribute: '',
    groupSearchBase: `ou=groups,${DIRECTORY_SUFFIX}`,
    groupSearchFilter: '(member={{dn}})',
    adminGroups: 'admins',
    timeoutMs: 2_000,
    ...changes,
  }
}

function accountsWith(ldap: LdapSettings, options: { passwords?: boolean } = {}) {
  const store = createMemoryAccountBackend()
  const accounts = new AccountService(accountStoresOf(store), hasher, { signInAttemptsPerIpPerMinute: 1_000, signInFailuresPerAccount: 100, sessionsPerIpPerMinute: 10, tokensPerUser: 2, inviteTtlMs: 60_000, roleLimits: testServerConfig().limits.roles, ldap, ...options })
  return { store, accounts }
}

const refusalOf = (promise: Promise<unknown>) => promise.then(() => { throw new Error('expected a refusal') }, (error: { statusCode?: number, message: string }) => ({ status: (error as { httpAnswer?: () => { statusCode: number } }).httpAnswer?.().statusCode ?? error.statusCode, message: error.message }))

describe('LDAP filters and names', () => {
  it('escapes what a filter would read as syntax, and reads a group\'s name from its DN', () => {
    expect(escapeFilterValue('ann*)(uid=*')).toBe('ann\\2a\\29\\28uid=\\2a')
    expect(escapeFilterValue('back\\slash\0')).toBe('back\\5cslash\\00')
    expect(firstRdnValue('cn=Sales Team,ou=groups,dc=example,dc=com')).toBe('Sales Team')
    expect(firstRdnValue('CN=R\\2CD\\, Europe,OU=Groups,DC=corp')).toBe('R,D, Europe')
  })
})

describe('LDAP sign-in', () => {
  it('signs a directory person in over StartTLS: an account of their own, linked to their entry, with their groups and an admin group\'s role', async () => {
    const { accounts, store } = accountsWith(ldapSettings())
    const ann = await accounts.signIn('ann', PEOPLE.ann, '10.0.0.1')
    expect(ann).toMatchObject({ name: 'Ann Lee', role: 'admin', passwordHash: '' })
    expect((await accounts.groups.membershipOf(ann.id)).provider.sort()).toEqual(['Admins', 'Sales'])
    // The same entry again: the same account.
    expect((await accounts.signIn('ann', PEOPLE.ann, '10.0.0.1')).id).toBe(ann.id)
    const bob = await accounts.signIn('bob', PEOPLE.bob, '10.0.0.1')
    expect(bob).toMatchObject({ name: 'Bob Stone', role: 'user' })
    expect((await store.listAccounts(10)).length).toBe(2)
  })

  it('works over LDAPS, with groups from an attribute too, and with local passwords off', async () => {
    const { accounts } = accountsWith(ldapSettings({ url: directory.ldapsUrl, startTls: false, adminGroups: '' }), { passwords: false })
    expect(await accounts.signIn('bob', PEOPLE.bob, '10.0.0.2')).toMatchObject({ name: 'Bob Stone', role: 'user' })
  })

  it('refuses a wrong or empty password, an unknown or ambiguous name and an injected filter with the words of a wrong password', async () => {
    const { accounts, store } = accountsWith(ldapSettings())
    for (const [name, password] of <Array<[string, string]>>[['ann', 'not her password'], ['ann', ''], ['nobody', 'whatever'], ['twin', 'twin-password'], ['*', PEOPLE.ann], ['ann)(uid=*', PEOPLE.ann], ['a'.repeat(300), 'x']]) {
      expect(await refusalOf(accounts.signIn(name, password, '10.0.0.3')), `${name} / ${password}`).toMatchObject({ status: 401, message: 'That name and password do not match an account.' })
    }
    expect(await store.listAccounts(10)).toEqual([])
  })

  it('keeps local accounts signing in with their own password', async () => {
    const { accounts } = accountsWith(ldapSettings())
    const local = await accounts.createAccount('local person', 'a long local password', 'user')
    expect((await accounts.signIn('local person', 'a long local password', '10.0.0.4')).id).toBe(local.id)
  })

  it('answers 503 saying why when the directory refuses the service account, does not answer, or shows a certificate it cannot check', async () => {
    expect(await refusalOf(accountsWith(ldapSettings({ bindPassword: 'wrong' })).accounts.signIn('ann', PEOPLE.ann, '10.0.0.5'))).toMatchObject({ status: 503, message: expect.stringContaining('service account') })
    expect(await refusalOf(accountsWith(ldapSettings({ caFile: '' })).accounts.signIn('ann', PEOPLE.ann, '10.0.0.5'))).toMatchObject({ status: 503 })
    // A directory that takes the connection and never answers: the sign-in ends at its time limit, and other work goes on meanwhile.
    const held = new Set<Socket>()
    const silent: Server = createServer((socket) => {
      held.add(socket)
    })
    await new Promise<void>(resolve => silent.listen(0, '127.0.0.1', resolve))
    try {
      const port = (silent.address() as { port: number }).port
      const { accounts } = accountsWith(ldapSettings({ url: `ldap://127.0.0.1:${port}`, startTls: false, timeoutMs: 500 }))
      let otherWork = false
      setImmediate(() => { otherWork = true })
      expect(await refusalOf(accounts.signIn('ann', PEOPLE.ann, '10.0.0.6'))).toMatchObject({ status: 503, message: expect.stringContaining('did not answer') })
      expect(otherWork).toBe(true)
    } finally {
      for (const socket of held) socket.destroy()
      await new Promise(resolve => silent.close(resolve))
    }
  })
})
