/**
 * Sign-in through identity providers, below HTTP: the operator's provider file, the account a
 * provider's person gets (created, linked, named, its role kept in step), and passwords turned
 * off with one break-glass admin. The protocol itself runs against a real provider in
 * tests/e2e/identity-providers.test.ts.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { testServerConfig } from '../../support/server-config'
import { AccountService } from '../../../server/lib/auth/accounts'
import { testPasswordHasher } from '../../support/password-hasher'
import { AuthError } from '../../../server/lib/auth/auth-errors'
import { IdentityAccounts, mappedRole } from '../../../server/lib/auth/oidc/identity-accounts'
import { OidcConfigError, parseOidcProviders, type OidcProviderConfig } from '../../../server/lib/auth/oidc/provider-config'
import type { VerifiedIdentity } from '../../../server/lib/auth/oidc/oidc-sign-in'
import { createMemoryAccountBackend } from '../../../server/lib/stores/accounts/memory'
import { accountStoresOf } from '../../../server/lib/stores'
import type { AccountBackend } from '../../../server/lib/stores/accounts/account-store'

const hasher = testPasswordHasher
const settings = { signInAttemptsPerIpPerMinute: 100, signInFailuresPerAccount: 5, sessionsPerIpPerMinute: 10, tokensPerUser: 2, inviteTtlMs: 60_000, roleLimits: testServerConfig().limits.roles }

async function refusal(promise: Promise<unknown>): Promise<AuthError> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught)
  if (!AuthError.isInstance(error)) throw new Error(`expected an AuthError, got ${String(error)}`)
  return error
}

function configError(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    if (error instanceof OidcConfigError) return error.message
    throw error
  }
  throw new Error('expected an OidcConfigError')
}

const corp = (change: Partial<OidcProviderConfig> = {}): OidcProviderConfig => parseOidcProviders({ providers: [{ id: 'corp', name: 'Corp', issuer: 'https://login.corp.example', clientId: 'or3', ...change }] }, {})[0]!

function person(subject: string, claims: { email?: string, verified?: boolean, username?: string, groups?: string[] } = {}): VerifiedIdentity {
  return {
    provider: 'corp',
    subject,
    email: claims.email ?? null,
    emailVerified: claims.verified ?? false,
    displayName: claims.username ?? null,
    preferredUsername: claims.username ?? null,
    claimValues: claim => (claim === 'groups' ? claims.groups ?? [] : []),
  }
}

describe('the identity provider file', () => {
  it('takes providers with their defaults and each secret from the variable it names', () => {
    const [provider] = parseOidcProviders({ providers: [{ id: 'keycloak', name: 'Company SSO', issuer: 'https://idp.example/realms/corp', clientId: 'or3', clientSecretEnv: 'OIDC_SECRET' }] }, { OIDC_SECRET: 's3cret' })
    expect(provider).toMatchObject({ id: 'keycloak', scopes: ['openid', 'profile', 'email'], linkByEmail: false, allowHttp: false, clientSecret: 's3cret' })
  })

  it('says what to fix: a secret in the file, a missing secret variable, an http issuer, a repeated id, a bad id', () => {
    expect(configError(() => parseOidcProviders({ providers: [{ id: 'corp', name: 'C', issuer: 'https://x.example', clientId: 'a', clientSecret: 'inline' }] }, {}))).toMatch(/providers\.0: Unrecognized key: "clientSecret"/)
    expect(configError(() => parseOidcProviders({ providers: [{ id: 'corp', name: 'C', issuer: 'https://x.example', clientId: 'a', clientSecretEnv: 'MISSING_SECRET' }] }, {}))).toMatch(/MISSING_SECRET \(its client secret\) is not set/)
    expect(configError(() => parseOidcProviders({ providers: [{ id: 'corp', name: 'C', issuer: 'http://x.example', clientId: 'a' }] }, {}))).toMatch(/field "issuer": must be https:\/\//)
    expect(configError(() => parseOidcProviders({ providers: [{ id: 'corp', name: 'C', issuer: 'https://x.example', clientId: 'a' }, { id: 'corp', name: 'D', issuer: 'https://y.example', clientId: 'b' }] }, {}))).toMatch(/"corp": the id is used twice/)
    expect(configError(() => parseOidcProviders({ providers: [{ id: 'Corp SSO', name: 'C', issuer: 'https://x.example', clientId: 'a' }] }, {}))).toMatch(/providers\.0\.id: must be 1-32 lower-case/)
  })
})

describe('the account a provider\'s person signs in to', () => {
  let store: AccountBackend
  let identities: IdentityAccounts
  beforeEach(() => {
    store = createMemoryAccountBackend()
    identities = new IdentityAccounts({ accounts: store, identities: store })
  })

  it('maps roles from the claim: admin first, then user; none is the default or, when required, a refusal', () => {
    const roles = { claim: 'groups', admin: ['admins'], user: ['staff'], required: false }
    expect(mappedRole(corp({ roles }), person('a', { groups: ['staff', 'admins'] }))).toBe('admin')
    expect(mappedRole(corp({ roles }), person('a', { groups: ['staff'] }))).toBe('user')
    expect(mappedRole(corp({ roles }), person('a', { groups: ['other'] }))).toBeUndefined()
    expect(mappedRole(corp({ roles: { ...roles, required: true } }), person('a', { groups: ['other'] }))).toBeNull()
    expect(mappedRole(corp(), person('a'))).toBeUndefined()
  })

  it('creates an account without a password under a free name, and finds it again by its subject', async () => {
    await store.createAccount({ name: 'ada', passwordHash: 'x', role: 'admin' })
    const first = await identities.signIn(corp(), person('sub-ada', { username: 'ada' }))
    expect(first).toMatchObject({ name: 'ada 2', role: 'user', passwordHash: '' })
    expect(await identities.signIn(corp(), person('sub-ada', { username: 'renamed' }))).toMatchObject({ id: first.id, name: 'ada 2' })
    expect(await store.listIdentities(first.id)).toMatchObject([{ provider: 'corp', subject: 'sub-ada' }])
  })

  it('leaves one account when the same person\'s first sign-in arrives twice at once', async () => {
    const [a, b] = await Promise.all([identities.signIn(corp(), person('sub-twice', { username: 'twice' })), identities.signIn(corp(), person('sub-twice', { username: 'twice' }))])
    expect(a.id).toBe(b.id)
    expect((await store.listAccounts(10)).filter(account => account.name.startsWith('twice'))).toHaveLength(1)
  })

  it('links by e-mail only when the provider verified it and the operator allows it', async () => {
    const local = (await store.createAccount({ name: 'Eve@Corp.example', passwordHash: 'x', role: 'user' }))!
    expect((await identities.signIn(corp({ linkByEmail: true }), person('s1', { email: 'eve@corp.example', verified: false, username: 'eve' }))).id).not.toBe(local.id)
    expect((await identities.signIn(corp(), person('s2', { email: 'eve@corp.example', verified: true, username: 'eve' }))).id).not.toBe(local.id)
    expect((await identities.signIn(corp({ linkByEmail: true }), person('s3', { email: 'eve@corp.example', verified: true }))).id).toBe(local.id)
  })

  it('refuses a disabled account and one outside the required groups, and never demotes the last admin', async () => {
    const roles = { claim: 'groups', admin: ['admins'], user: ['staff'], required: true }
    const admin = await identities.signIn(corp({ roles }), person('boss', { username: 'boss', groups: ['admins'] }))
    expect(admin.role).toBe('admin')
    // The only admin's groups change: it stays admin (another admin must exist first).
    expect((await identities.signIn(corp({ roles }), person('boss', { groups: ['staff'] }))).role).toBe('admin')
    expect((await refusal(identities.signIn(corp({ roles }), person('outsider', { groups: [] })))).refusal).toBe('not-allowed')
    const staff = await identities.signIn(corp({ roles }), person('worker', { username: 'worker', groups: ['staff'] }))
    await store.updateAccount(staff.id, { disabled: true })
    expect((await refusal(identities.signIn(corp({ roles }), person('worker', { groups: ['staff'] })))).refusal).toBe('disabled')
  })
})

describe('passwords turned off', () => {
  it('lets only the first-run admin be created and only the break-glass admin sign in with a password; a provider account never', async () => {
    const store = createMemoryAccountBackend()
    const accounts = new AccountService(accountStoresOf(store), hasher, { ...settings, passwords: false, breakGlassAdmin: 'Keeper' })
    expect(accounts.passwordsAllowed).toBe(false)
    expect((await accounts.signUp('Keeper', 'password-1', undefined)).role).toBe('admin')
    await accounts.signups.setPolicy('open')
    expect((await refusal(accounts.signUp('Bob', 'password-1', undefined))).refusal).toBe('passwords-off')
    await accounts.createAccount('Other Admin', 'password-2', 'admin')
    expect((await accounts.signIn('Keeper', 'password-1', '10.0.0.1')).name).toBe('Keeper')
    expect((await refusal(accounts.signIn('Other Admin', 'password-2', '10.0.0.1'))).refusal).toBe('passwords-off')
    // A wrong password says only that, not that passwords are off.
    expect((await refusal(accounts.signIn('Other Admin', 'wrong password', '10.0.0.1'))).refusal).toBe('bad-credentials')

    const withPasswords = new AccountService(accountStoresOf(store), hasher, settings)
    const fromProvider = await withPasswords.identities.signIn(corp(), person('p1', { username: 'sso person' }))
    expect((await refusal(withPasswords.signIn('sso person', '', '10.0.0.2'))).refusal).toBe('bad-credentials')
    expect((await refusal(withPasswords.tokens.create(fromProvider.id, 'script', 'anything'))).refusal).toBe('wrong-password')
  })
})
