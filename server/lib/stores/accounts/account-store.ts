/** The one interface every account store implements (memory, sqlite, Convex); one contract suite pins it. */
import type { Account } from '../../../../shared/types/account'
import type { SettingsStore } from '../settings/settings-store'
import type { UsageLedger } from '../usage/usage-ledger'

/** An account as stored: with its password hash and the version its sessions must carry. */
export interface StoredAccount extends Account {
  passwordHash: string
  /** Bumped when the password is reset or the account disabled: sessions of an older version end. */
  sessionVersion: number
}

/** A personal API token as stored: only a hash of its secret. */
export interface StoredApiToken {
  id: string
  userId: string
  name: string
  prefix: string
  tokenHash: string
  createdAt: number
  lastUsedAt: number | null
}

/** What an admin may change on an account. */
export interface AccountPatch {
  role?: Account['role']
  disabled?: boolean
  passwordHash?: string
  /** End every session of the account ("sign out everywhere"). */
  endSessions?: boolean
  /**
   * Refuse (`LastAdminError`) a change that would leave no active admin: checked and applied in
   * one transaction, so two admins demoting each other at once cannot both succeed.
   */
  keepAnAdmin?: boolean
}

/** A change refused because it would leave no active admin (see `AccountPatch.keepAnAdmin`). */
export class LastAdminError extends Error {
  override name = 'LastAdminError'
  constructor() {
    super('This is the only active admin. Make another account admin first.')
  }

  static isInstance(error: unknown): error is LastAdminError {
    return error instanceof Error && error.name === 'LastAdminError'
  }
}

/** Whether `before` → `after` takes away an active admin. */
export function losesActiveAdmin(before: Pick<StoredAccount, 'role' | 'disabled'>, after: Pick<StoredAccount, 'role' | 'disabled'>): boolean {
  return before.role === 'admin' && !before.disabled && (after.role !== 'admin' || after.disabled)
}

/** Accounts, and the invites that let people create one. */
export interface AccountStore {
  /** Whether any account exists (none: the first visitor creates the admin). */
  hasAccounts(): Promise<boolean>
  /**
   * Creates an account. Null when the name is taken (names compare case-insensitively), the id is
   * taken (two sign-ups from one guest session at once), or when `onlyIfNone` and an account
   * already exists (so only one first-run admin can be created).
   */
  createAccount(input: { name: string, passwordHash: string, role: Account['role'], onlyIfNone?: boolean, id?: string, now?: number }): Promise<StoredAccount | null>
  getAccount(id: string): Promise<StoredAccount | null>
  findAccountByName(name: string): Promise<StoredAccount | null>
  /** Accounts, oldest first, at most `limit`. */
  listAccounts(limit: number): Promise<StoredAccount[]>
  /** Changes an account; a new password, a change of `disabled` or `endSessions` bumps its session version. Null when unknown. */
  updateAccount(id: string, patch: AccountPatch): Promise<StoredAccount | null>
  /** Deletes the account, its API tokens and its linked identities. */
  deleteAccount(id: string): Promise<boolean>

  createInvite(input: { codeHash: string, createdBy: string, expiresAt: number, now?: number }): Promise<void>
  /** Uses up an invite: true only the first time, and only before it expires. */
  useInvite(codeHash: string, now?: number): Promise<boolean>
  /** Whether an invite could be used now (unused, not expired), without using it. */
  inviteUsable(codeHash: string, now?: number): Promise<boolean>
}

/** People's personal API tokens (only hashes of their secrets). */
export interface ApiTokenStore {
  createApiToken(token: StoredApiToken): Promise<void>
  findApiToken(tokenHash: string): Promise<StoredApiToken | null>
  /** A user's tokens, newest first. */
  listApiTokens(userId: string): Promise<StoredApiToken[]>
  deleteApiToken(userId: string, tokenId: string): Promise<boolean>
  touchApiToken(tokenId: string, now: number): Promise<void>
}

/** An identity at a sign-in provider (OpenID Connect), linked to the account it signs in to. */
export interface StoredIdentity {
  /** The provider's id in the operator's config (`keycloak`, `entra`…). */
  provider: string
  /** The provider's stable id of the person (the ID token's `sub`). */
  subject: string
  accountId: string
  /** The e-mail the provider last said it verified, if any. */
  email: string | null
  createdAt: number
  lastSignInAt: number
}

/** Which provider identities sign in to which account; removed with the account. */
export interface IdentityStore {
  /** Links an identity to an account; false when that identity is already linked (to any account). */
  linkIdentity(identity: { provider: string, subject: string, accountId: string, email: string | null, now?: number }): Promise<boolean>
  findIdentity(provider: string, subject: string): Promise<StoredIdentity | null>
  /** An account's linked identities, oldest first. */
  listIdentities(accountId: string): Promise<StoredIdentity[]>
  /** Records a sign-in through the identity, with the e-mail the provider gives now. */
  touchIdentity(provider: string, subject: string, email: string | null, now: number): Promise<void>
}

/**
 * What one backend (memory, sqlite, Convex) keeps about people: five stores over the same
 * tables or deployment, handed out separately (`openStores`) so each service sees only its own.
 */
export interface AccountBackend extends AccountStore, ApiTokenStore, IdentityStore, SettingsStore, UsageLedger {
  close(): Promise<void>
}

/** How names compare: trimmed, case-insensitive. */
export function accountNameKey(name: string): string {
  return name.trim().toLowerCase()
}
