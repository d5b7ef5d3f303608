/**
 * The account a provider's person signs in to: the one their identity is linked to; else, when
 * the operator allows it for that provider, the account named by the e-mail the provider verified;
 * else a new account (no password: it signs in only through the provider). Its role follows the
 * provider's role claim at every sign-in when one is configured.
 */
import type { Account } from '../../../../shared/types/account'
import { LastAdminError, type AccountStore, type IdentityStore, type StoredAccount } from '../../stores/accounts/account-store'
import { AuthError } from '../auth-errors'
import type { VerifiedIdentity } from './oidc-sign-in'
import type { OidcProviderConfig } from './provider-config'

/** Longest account name made from a provider's names. */
const MAX_NAME = 60
/** Tries at a free name ("Ada", "Ada 2", …) before one with a random tail. */
const NAME_TRIES = 20

/** What signing a provider's person in reads of the provider (an OpenID provider's config, or the directory's). */
export type IdentityProvider = Pick<OidcProviderConfig, 'id' | 'name' | 'roles' | 'groupsClaim' | 'linkByEmail'>

/** The role `identity` gets from `provider`'s role claim: undefined without a mapping, null when it maps to none. */
export function mappedRole(provider: Pick<IdentityProvider, 'roles'>, identity: VerifiedIdentity): Account['role'] | null | undefined {
  const roles = provider.roles
  if (!roles) return undefined
  const values = new Set(identity.claimValues(roles.claim))
  if (roles.admin.some(group => values.has(group))) return 'admin'
  if (roles.user.some(group => values.has(group))) return 'user'
  return roles.required ? null : undefined
}

/** Accounts for provider identities. */
export class IdentityAccounts {
  constructor(private readonly stores: { accounts: AccountStore, identities: IdentityStore }, private readonly groups?: { setFromProvider(accountId: string, names: readonly string[]): Promise<void> }) {}

  /** The account `identity` signs in to (created or linked on a first sign-in); 403 when it may not. */
  async signIn(provider: IdentityProvider, identity: VerifiedIdentity, now = Date.now()): Promise<StoredAccount> {
    const role = mappedRole(provider, identity)
    if (role === null) throw new AuthError('not-allowed', `Your ${provider.name} account is not in a group allowed to use this app. Ask your administrator.`)
    const linked = await this.stores.identities.findIdentity(provider.id, identity.subject)
    let account = linked ? await this.stores.accounts.getAccount(linked.accountId) : await this.linkOrCreate(provider, identity, role ?? 'user', now)
    if (!account) throw new AuthError('session-ended', 'The account this sign-in belongs to was deleted. Ask the admin of this server.')
    if (account.disabled) throw new AuthError('disabled', 'This account is disabled. Ask the admin of this server.')
    if (linked) await this.stores.identities.touchIdentity(provider.id, identity.subject, identity.email, now)
    // The provider's groups claim: the person's groups from this provider, kept in step at every sign-in.
    if (provider.groupsClaim && this.groups) await this.groups.setFromProvider(account.id, identity.claimValues(provider.groupsClaim))
    // The provider's groups decide the role at every sign-in; the last active admin is kept.
    if (role && role !== account.role) {
      try {
        account = await this.stores.accounts.updateAccount(account.id, { role, keepAnAdmin: true }) ?? account
      } catch (error) {
        if (!LastAdminError.isInstance(error)) throw error
      }
    }
    return account
  }

  private async linkOrCreate(provider: IdentityProvider, identity: VerifiedIdentity, role: Account['role'], now: number): Promise<StoredAccount | null> {
    // Only a verified e-mail, and only where the operator said so: an unverified one could be anyone's.
    if (provider.linkByEmail && identity.email && identity.emailVerified) {
      const existing = await this.stores.accounts.findAccountByName(identity.email)
      if (existing) return this.link(provider, identity, existing.id, now)
    }
    const account = await this.createNamed(this.baseName(identity), role, now)
    return this.link(provider, identity, account.id, now, account)
  }

  /** Links the identity to `accountId`; when another sign-in of the same person linked it first, that link wins (and `created` goes). */
  private async link(provider: IdentityProvider, identity: VerifiedIdentity, accountId: string, now: number, created?: StoredAccount): Promise<StoredAccount | null> {
    if (await this.stores.identities.linkIdentity({ provider: provider.id, subject: identity.subject, accountId, email: identity.email, now })) {
      return created ?? this.stores.accounts.getAccount(accountId)
    }
    if (created) await this.stores.accounts.deleteAccount(created.id)
    const winner = await this.stores.identities.findIdentity(provider.id, identity.subject)
    return winner ? this.stores.accounts.getAccount(winner.accountId) : null
  }

  private baseName(identity: VerifiedIdentity): string {
    const name = (identity.preferredUsername ?? identity.displayName ?? identity.email ?? `${identity.provider} user`).replace(/\s+/g, ' ').trim()
    return (name === '' ? `${identity.provider} user` : name).slice(0, MAX_NAME)
  }

  /** A new account under `base`, or `base 2`, `base 3`… when taken. */
  private async createNamed(base: string, role: Account['role'], now: number): Promise<StoredAccount> {
    for (let attempt = 1; attempt <= NAME_TRIES + 1; attempt++) {
      const suffix = attempt === 1 ? '' : attempt <= NAME_TRIES ? ` ${attempt}` : ` ${crypto.randomUUID().slice(0, 8)}`
      const account = await this.stores.accounts.createAccount({ name: `${base.slice(0, MAX_NAME - suffix.length)}${suffix}`, passwordHash: '', role, now })
      if (account) return account
    }
    throw new AuthError('name-taken', 'No free account name was found for this sign-in. Ask the admin of this server.')
  }
}
