/**
 * SCIM provisioning over the real account service and memory stores, with the requests Entra ID
 * and Okta send (their documented shapes): the filter and PATCH readers, people created,
 * matched, deactivated (sessions, tokens and running jobs ended), renamed and deleted, and groups
 * whose provisioned members get the group's limits.
 */
import { describe, expect, it } from 'vitest'
import { AccountService } from '../../../server/lib/auth/accounts'
import { testPasswordHasher } from '../../support/password-hasher'
import { parseScimFilter } from '../../../server/lib/auth/scim/scim-filter'
import { readScimPatch } from '../../../server/lib/auth/scim/scim-patch'
import { ScimError, SCIM_SCHEMAS } from '../../../server/lib/auth/scim/scim-protocol'
import { ScimProvisioning, type ScimRequest } from '../../../server/lib/auth/scim/scim-provisioning'
import { accountStoresOf } from '../../../server/lib/stores'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { testServerConfig } from '../../support/server-config'

const hasher = testPasswordHasher
const settings = { signInAttemptsPerIpPerMinute: 100, signInFailuresPerAccount: 5, sessionsPerIpPerMinute: 10, tokensPerUser: 2, inviteTtlMs: 60_000, roleLimits: testServerConfig().limits.roles }
const BASE = 'https://chat.example.com/scim/v2'
const patchOf = (...Operations: unknown[]) => ({ schemas: [SCIM_SCHEMAS.patch], Operations })

function setUp(options: { breakGlassAdmin?: string } = {}) {
  const store = createMemoryAccountBackend()
  const accounts = new AccountService(accountStoresOf(store), hasher, { ...settings, ...options })
  const stopped: string[] = []
  const scim = new ScimProvisioning({ accounts, accountStore: store, settings: store, stopJobs: async (userId) => { stopped.push(userId) }, role: 'user', maxAccounts: 1_000, ...options })
  const call = async (method: string, path: string, body?: unknown, query: Record<string, unknown> = {}) => {
    const request: ScimRequest = { method, path, query, body, base: BASE }
    try {
      return await scim.answer(request)
    } catch (error) {
      if (error instanceof ScimError) return { status: error.status, body: { detail: error.message, scimType: error.scimType } }
      throw error
    }
  }
  return { store, accounts, scim, stopped, call }
}

describe('SCIM filters and patches', () => {
  it('reads the filters providers send, and refuses others saying what is supported', () => {
    expect(parseScimFilter('userName eq "ann@example.com"')).toEqual([{ path: 'username', value: 'ann@example.com' }])
    expect(parseScimFilter('externalId eq "a \\"quoted\\" id"')).toEqual([{ path: 'externalid', value: 'a "quoted" id' }])
    expect(parseScimFilter('id eq "g1" and members[value eq "u1"]')).toEqual([{ path: 'id', value: 'g1' }, { path: 'members.value', value: 'u1' }])
    expect(parseScimFilter('urn:ietf:params:scim:schemas:core:2.0:User:userName eq "x"')).toEqual([{ path: 'username', value: 'x' }])
    expect(parseScimFilter('active eq true')).toEqual([{ path: 'active', value: true }])
    for (const bad of ['userName co "a"', 'userName eq "a" or userName eq "b"', 'userName eq "open', '(userName eq "a")', 'userName eq']) {
      expect(() => parseScimFilter(bad), bad).toThrow(expect.objectContaining({ status: 400, scimType: 'invalidFilter' }))
    }
    // A long hostile filter is refused at once, before it is read.
    expect(() => parseScimFilter(`userName eq "${'a'.repeat(100_000)}`)).toThrow(/1,000 are read|at most 1000/)
    expect(() => parseScimFilter(Array.from({ length: 11 }, () => 'id eq "x"').join(' and '))).toThrow(/At most 10/)
  })

  it('reads Entra\'s and Okta\'s PATCH forms into plain operations', () => {
    expect(readScimPatch(patchOf({ op: 'Replace', path: 'active', value: 'False' }))).toEqual([{ op: 'replace', path: 'active', value: 'False' }])
    expect(readScimPatch(patchOf({ op: 'replace', value: { active: false, name: { givenName: 'Ann' }, 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department': 'Sales' } }))).toEqual([
      { op: 'replace', path: 'active', value: false },
      { op: 'replace', path: 'name.givenname', value: 'Ann' },
    ])
    expect(readScimPatch(patchOf({ op: 'Remove', path: 'members[value eq "u1"]' }))).toEqual([{ op: 'remove', path: 'members', where: { attribute: 'value', value: 'u1' }, value: undefined }])
    expect(readScimPatch(patchOf({ op: 'replace', path: 'emails[type eq "work"].value', value: 'a@b.c' }))).toEqual([{ op: 'replace', path: 'emails', where: { attribute: 'type', value: 'work' }, sub: 'value', value: 'a@b.c' }])
    expect(readScimPatch(patchOf({ op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:manager', value: 'x' }))).toEqual([])
    expect(() => readScimPatch({ Operations: [{ op: 'move', path: 'x' }] })).toThrow(/add, replace or remove/)
    expect(() => readScimPatch({ schemas: [] })).toThrow(/PatchOp|Operations/)
    expect(() => readScimPatch(patchOf(...Array.from({ length: 101 }, () => ({ op: 'add', path: 'x', value: 1 }))))).toThrow(/at most 100/)
  })
})

describe('SCIM provisioning', () => {
  it('creates a person without a password, finds them by userName and externalId, and matches an account that was here before', async () => {
    const { call, store } = setUp()
    const created = await call('POST', 'Users', { schemas: [SCIM_SCHEMAS.user], externalId: 'e-1', userName: 'ann@example.com', active: true, name: { givenName: 'Ann', familyName: 'Lee' }, emails: [{ primary: true, type: 'work', value: 'ann@example.com' }] })
    expect(created.status).toBe(201)
    const ann = created.body as { id: string, userName: string, active: boolean, meta: { location: string } }
    expect(ann).toMatchObject({ userName: 'ann@example.com', active: true, name: { givenName: 'Ann', familyName: 'Lee' }, emails: [{ value: 'ann@example.com', primary: true }], meta: { location: `${BASE}/Users/${ann.id}` } })
    expect((await store.getAccount(ann.id))).toMatchObject({ name: 'ann@example.com', passwordHash: '', role: 'user', disabled: false })
    expect((await call('POST', 'Users', { userName: 'ANN@example.com' })).status).toBe(409)
    expect((await call('POST', 'Users', { userName: 'other@example.com', externalId: 'e-1' })).body).toMatchObject({ scimType: 'uniqueness' })

    const byName = await call('GET', 'Users', undefined, { filter: 'userName eq "Ann@Example.com"' })
    expect(byName.body).toMatchObject({ totalResults: 1, Resources: [{ id: ann.id }] })
    expect((await call('GET', 'Users', undefined, { filter: 'externalId eq "e-1"' })).body).toMatchObject({ totalResults: 1 })
    expect((await call('GET', 'Users', undefined, { filter: 'userName eq "nobody"' })).body).toMatchObject({ totalResults: 0, Resources: [] })
    expect((await call('GET', 'Users', undefined, { filter: 'emails co "x"' })).status).toBe(400)

    // Someone who had an account before the provider came is matched by name, and then managed.
    const old = await store.createAccount({ name: 'bob@example.com', passwordHash: 'x', role: 'user' })
    expect((await call('GET', 'Users', undefined, { filter: 'userName eq "bob@example.com"' })).body).toMatchObject({ Resources: [{ id: old!.id }] })
    const page = await call('GET', 'Users', undefined, { startIndex: '2', count: '1' })
    expect(page.body).toMatchObject({ totalResults: 2, startIndex: 2, itemsPerPage: 1 })
  })

  it('deactivates a person the way Entra and Okta ask: sessions and tokens end, running jobs stop; and activates them again', async () => {
    const { call, accounts, store, stopped } = setUp()
    const kim = await accounts.createAccount('kim@example.com', 'a long password', 'user')
    const token = await accounts.tokens.create(kim.id, 'script', 'a long password')
    const version = (await store.getAccount(kim.id))!.sessionVersion
    const entra = await call('PATCH', `Users/${kim.id}`, patchOf({ op: 'Replace', path: 'active', value: 'False' }))
    expect(entra).toMatchObject({ status: 200, body: { active: false } })
    expect(await store.getAccount(kim.id)).toMatchObject({ disabled: true })
    expect((await store.getAccount(kim.id))!.sessionVersion).not.toBe(version)
    await expect(accounts.tokens.principalFor(token.token)).rejects.toThrow()
    expect(stopped).toEqual([kim.id])
    const okta = await call('PATCH', `Users/${kim.id}`, patchOf({ op: 'replace', value: { active: true } }))
    expect(okta.body).toMatchObject({ active: true })
    expect(stopped).toEqual([kim.id])
    // PUT: the whole resource.
    const put = await call('PUT', `Users/${kim.id}`, { schemas: [SCIM_SCHEMAS.user], userName: 'kim.new@example.com', active: false, displayName: 'Kim N.' })
    expect(put.body).toMatchObject({ userName: 'kim.new@example.com', displayName: 'Kim N.', active: false, emails: [] })
    expect((await call('GET', 'Users', undefined, { filter: 'userName eq "kim.new@example.com"' })).body).toMatchObject({ totalResults: 1 })
    expect((await call('GET', 'Users', undefined, { filter: 'userName eq "kim@example.com"' })).body).toMatchObject({ totalResults: 0 })
    expect((await call('PATCH', `Users/${kim.id}`, patchOf({ op: 'replace', path: 'emails[type eq "work"].value', value: 'kim@corp.example' }))).body).toMatchObject({ emails: [{ value: 'kim@corp.example' }] })
    expect((await call('PATCH', `Users/${kim.id}`, patchOf({ op: 'replace', path: 'colour', value: 'red' }))).status).toBe(400)

    expect((await call('DELETE', `Users/${kim.id}`)).status).toBe(204)
    expect(await store.getAccount(kim.id)).toBeNull()
    expect((await call('GET', `Users/${kim.id}`)).status).toBe(404)
    expect((await call('GET', 'Users', undefined, { filter: 'userName eq "kim.new@example.com"' })).body).toMatchObject({ totalResults: 0 })
  })

  it('deactivates once more when a crash came between stopping the jobs and disabling the account (the provider retries)', async () => {
    const { call, accounts, store, stopped } = setUp()
    const kim = await accounts.createAccount('kim@example.com', 'a long password', 'user')
    const updateAccount = accounts.updateAccount.bind(accounts)
    accounts.updateAccount = async () => {
      accounts.updateAccount = updateAccount
      throw new Error('the process died here')
    }
    await expect(call('PATCH', `Users/${kim.id}`, patchOf({ op: 'Replace', path: 'active', value: 'False' }))).rejects.toThrow('the process died here')
    expect(stopped).toEqual([kim.id])
    expect(await store.getAccount(kim.id)).toMatchObject({ disabled: false })
    expect(await call('PATCH', `Users/${kim.id}`, patchOf({ op: 'Replace', path: 'active', value: 'False' }))).toMatchObject({ status: 200, body: { active: false } })
    expect(stopped).toEqual([kim.id, kim.id])
    expect(await store.getAccount(kim.id)).toMatchObject({ disabled: true })
  })

  it('never changes the break-glass admin, and keeps the last admin', async () => {
    const { call, accounts } = setUp({ breakGlassAdmin: 'Keeper' })
    const keeper = await accounts.createAccount('Keeper', 'a long password', 'admin')
    expect((await call('PATCH', `Users/${keeper.id}`, patchOf({ op: 'replace', path: 'active', value: false }))).status).toBe(403)
    expect((await call('DELETE', `Users/${keeper.id}`)).status).toBe(403)
    const { call: other, accounts: more } = setUp()
    const only = await more.createAccount('Only Admin', 'a long password', 'admin')
    expect((await other('PATCH', `Users/${only.id}`, patchOf({ op: 'replace', path: 'active', value: false }))).status).toBe(409)
  })

  it('keeps groups: members given by the provider get the group\'s limits, and move with a rename', async () => {
    const { call, accounts } = setUp()
    const ann = await accounts.createAccount('ann@example.com', 'a long password', 'user')
    const bob = await accounts.createAccount('bob@example.com', 'a long password', 'user')
    const created = await call('POST', 'Groups', { schemas: [SCIM_SCHEMAS.group], displayName: 'Sales', externalId: 'g-ext', members: [{ value: ann.id }] })
    expect(created.status).toBe(201)
    const sales = created.body as { id: string }
    expect(created.body).toMatchObject({ displayName: 'Sales', externalId: 'g-ext', members: [{ value: ann.id, display: 'ann@example.com' }] })
    expect((await accounts.groups.groupsOf(ann.id)).map(group => group.name)).toEqual(['Sales'])
    expect((await call('POST', 'Groups', { displayName: 'sales' })).status).toBe(409)
    expect((await call('POST', 'Groups', { displayName: 'R&D / Europe' })).body).toMatchObject({ scimType: 'invalidValue' })

    // An admin gives Sales more models; provisioned members get them.
    const group = (await accounts.groups.list()).find(item => item.name === 'Sales')!
    await accounts.groups.save('Sales', { description: '', limits: { jobsAtOnce: 42 } })
    expect((await accounts.limits.explain('user', ann.id)).sources.jobsAtOnce).toBe('group:Sales')
    expect(group.name).toBe('Sales')

    // Entra: add, then remove by filter; Okta: replace the list.
    await call('PATCH', `Groups/${sales.id}`, patchOf({ op: 'Add', path: 'members', value: [{ value: bob.id }, { value: 'no-such-account' }] }))
    expect((await call('GET', `Groups/${sales.id}`)).body).toMatchObject({ members: [{ value: ann.id }, { value: bob.id }] })
    expect((await call('GET', 'Groups', undefined, { filter: `id eq "${sales.id}" and members[value eq "${bob.id}"]`, excludedAttributes: 'members' })).body).toMatchObject({ totalResults: 1, Resources: [{ id: sales.id }] })
    expect((await call('GET', 'Groups', undefined, { filter: `id eq "${sales.id}" and members[value eq "${bob.id}"]`, excludedAttributes: 'members' })).body).not.toHaveProperty('Resources.0.members')
    await call('PATCH', `Groups/${sales.id}`, patchOf({ op: 'Remove', path: `members[value eq "${ann.id}"]` }))
    expect(await accounts.groups.groupsOf(ann.id)).toEqual([])
    await call('PATCH', `Groups/${sales.id}`, patchOf({ op: 'replace', path: 'members', value: [{ value: ann.id }] }))
    expect((await accounts.groups.membershipOf(bob.id)).scim).toEqual([])

    // A rename keeps what the group gives, and its members.
    const renamed = await call('PATCH', `Groups/${sales.id}`, patchOf({ op: 'replace', value: { id: sales.id, displayName: 'Sales EMEA' } }))
    expect(renamed.body).toMatchObject({ id: sales.id, displayName: 'Sales EMEA', members: [{ value: ann.id }] })
    expect((await accounts.groups.groupsOf(ann.id)).map(item => [item.name, item.limits.jobsAtOnce])).toEqual([['Sales EMEA', 42]])
    expect((await call('GET', `Users/${ann.id}`)).body).toMatchObject({ groups: [{ value: sales.id, display: 'Sales EMEA' }] })
    expect((await call('GET', 'Groups', undefined, { filter: 'displayName eq "sales emea"' })).body).toMatchObject({ totalResults: 1 })

    // Deleting a person takes them out of the group; deleting the group takes its members' grants.
    await call('PATCH', `Groups/${sales.id}`, patchOf({ op: 'add', path: 'members', value: [{ value: bob.id }] }))
    expect((await call('DELETE', `Users/${bob.id}`)).status).toBe(204)
    expect((await call('GET', `Groups/${sales.id}`)).body).toMatchObject({ members: [{ value: ann.id }] })
    expect((await call('DELETE', `Groups/${sales.id}`)).status).toBe(204)
    expect(await accounts.groups.groupsOf(ann.id)).toEqual([])
    expect((await call('GET', `Groups/${sales.id}`)).status).toBe(404)
  })

  it('takes over a group an admin made: its externalId, members and name set by the provider, a taken name refused', async () => {
    const { call, accounts } = setUp()
    const ann = await accounts.createAccount('ann@example.com', 'a long password', 'user')
    await accounts.groups.save('Support', { description: 'Made by an admin', limits: { jobsAtOnce: 7 } })
    await accounts.groups.save('Ops', {})
    const [support] = ((await call('GET', 'Groups', undefined, { filter: 'displayName eq "Support"' })).body as { Resources: Array<{ id: string }> }).Resources
    expect((await call('PATCH', `Groups/${support!.id}`, patchOf({ op: 'replace', path: 'externalId', value: 'ext-support' }))).body).toMatchObject({ displayName: 'Support', externalId: 'ext-support', members: [] })
    expect((await call('PATCH', `Groups/${support!.id}`, patchOf({ op: 'replace', path: 'displayName', value: 'OPS' }))).body).toMatchObject({ scimType: 'uniqueness' })
    expect((await call('PUT', `Groups/${support!.id}`, { displayName: 'Support Desk', members: [{ value: ann.id }] })).body).toMatchObject({ displayName: 'Support Desk', members: [{ value: ann.id }] })
    expect((await accounts.groups.groupsOf(ann.id)).map(group => [group.name, group.description, group.limits.jobsAtOnce])).toEqual([['Support Desk', 'Made by an admin', 7]])
  })

  it('answers discovery, and refuses what it does not serve in SCIM\'s words', async () => {
    const { call } = setUp()
    expect((await call('GET', 'ServiceProviderConfig')).body).toMatchObject({ patch: { supported: true }, filter: { supported: true }, bulk: { supported: false } })
    expect((await call('GET', 'ResourceTypes')).body).toMatchObject({ totalResults: 2 })
    expect((await call('GET', 'Nope')).status).toBe(404)
    expect((await call('POST', 'Users/abc')).status).toBe(405)
    expect((await call('POST', 'Users', { userName: 'x' })).body).toMatchObject({ scimType: 'invalidValue' })
    expect((await call('POST', 'Users', [])).status).toBe(400)
  })
})
