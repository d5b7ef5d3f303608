/**
 * Accounts: the first-run admin, sign-up under the admin's policy (signup-settings.ts), sign-in,
 * personal API tokens (personal-api-tokens.ts), usage reports (usage-reports.ts), and what an
 * admin may change. Sessions themselves (cookies) are the facade's; this
 * decides who someone is and whether a session of theirs still counts.
 */
import { TwoStepPolicy } from './two-step-policy'
import { randomBytes } from 'node:crypto'
import type { Account, Role, SessionPrincipal } from '../../../shared/types/account'
import type { RoleLimitTable } from '../../../shared/types/limits'
import type { AccountGroupView } from '../../../shared/types/groups'
import { accountNameKey, LastAdminError, type AccountPatch, type AccountStore, type ApiTokenStore, type IdentityStore, type StoredAccount } from '../stores/accounts/account-store'
import { PersonalApiTokens } from './personal-api-tokens'
import { DirectorySignIn } from './ldap/directory-sign-in'
import { LdapDirectory, type LdapSettings } from './ldap/ldap-directory'
import { UsageReports } from './usage-reports'
import { hashInviteCode, SignupSettings } from './signup-settings'
import { AttemptLimits, type AttemptLimitSettings } from './attempt-limits'
import { AuthError } from './auth-errors'
import { FirstRunGuard, type FirstRunRequest } from './first-run'
import { RoleLimitPolicy } from './role-limits'
import { IdentityAccounts } from './oidc/identity-accounts'
import { Groups } from './groups'
import { TwoStepSignIn } from './two-step'
import { Passkeys } from './passkeys'
import { createSecretBox, type SecretBox } from '../security/secret-box'
import type { SettingsStore } from '../stores/settings/settings-store'
import type { UsageLedger } from '../stores/usage/usage-ledger'

/** Hashing passwords (scrypt as nuxt-auth-utils makes them in the server, auth/password-hashing.ts; anything alike in tests). */
export interface PasswordHasher {
  hash(password: string): Promise<string>
  verify(hash: string, password: string): Promise<boolean>
}

/** What a signed-in session carries (sealed in its cookie). */
export interface SessionClaims {
  userId: string
  /** The account's session version when the session began: a reset password or a disable ends it. */
  version: number
}

/** The account settings of the runtime config. */
export interface AccountSettings extends AttemptLimitSettings {
  /** Most API tokens one account may hold. */
  tokensPerUser: number
  /** How long an invite link works. */
  inviteTtlMs: number
  /** Each role's limits as configured (`limits.roles`); the admin's changes go on top. */
  roleLimits: RoleLimitTable
  /** Whether people sign in with a name and password (else only through identity providers; default on). */
  passwords?: boolean
  /** With passwords off: the admin account that still may. */
  breakGlassAdmin?: string
  /** An LDAP directory whose people sign in with the same form (off without a URL). */
  ldap?: LdapSettings
  /** Seals two-step sign-in secrets (default: a key of this process only, for tests). */
  twoStepBox?: SecretBox
  /** The name authenticator apps show for this server (default "OR3 Chat"). */
  siteName?: string
}

/** Why a session or a password check no longer holds: its account changed or went. */
const SESSION_ENDED = 'Your session has ended (the password was changed or the account removed). Sign in again.'
/** Most accounts an admin listing returns. */
export const MAX_LISTED_ACCOUNTS = 1_000

/** The public form of a stored account. */
export function publicAccount(account: StoredAccount): Account {
  return { id: account.id, name: account.name, role: account.role, disabled: account.disabled, createdAt: account.createdAt }
}

/** `change`, with the store's refusal to leave no active admin as the 409 people see. */
async function keepingAnAdmin<T>(change: Promise<T>): Promise<T> {
  try {
    return await change
  } catch (error) {
    if (LastAdminError.isInstance(error)) throw new AuthError('last-admin', error.message)
    throw error
  }
}

function badInvite(invite: string | undefined): AuthError {
  return new AuthError('bad-invite', invite ? 'This invite link was already used or has expired. Ask the admin for a new one.' : 'Sign-up needs an invite link from the admin.')
}

const WRONG_CREDENTIALS = 'That name and password do not match an account.'
const PASSWORDS_OFF = 'This server signs people in through its identity provider: use the button on the sign-in page.'

/** With passwords off only the break-glass admin signs in with one (or with its passkey). */
function refuseIfPasswordsOff(account: StoredAccount, passwordsAllowed: boolean, breakGlassKey: string | undefined): void {
  if (!passwordsAllowed && !(account.role === 'admin' && accountNameKey(account.name) === breakGlassKey)) throw new AuthError('passwords-off', PASSWORDS_OFF)
}

/** The stores the account service works over. */
export interface AccountServiceStores {
  accounts: AccountStore
  tokens: ApiTokenStore
  /** Which identity provider's person signs in to which account. */
  identities: IdentityStore
  /** The sign-up policy, the admin's role limits, groups and who is in them. */
  settings: SettingsStore
  /** Daily usage, shown to each person and to the admin. */
  usage: UsageLedger
}

/** Accounts and everything about them. */
export class AccountService {
  readonly attempts: AttemptLimits
  /** Each role's limits: the configured defaults with the admin's changes. */
  readonly limits: RoleLimitPolicy
  /** A real hash of a random password: "no such user" is checked against it, so it takes as long as "wrong password". */
  private decoyHash: Promise<string> | undefined

  private readonly deletionSteps: Array<(accountId: string) => Promise<void>> = []

  /** Each person's API tokens (a token is minted only with the account's password). */
  readonly tokens: PersonalApiTokens
  /** A code from an authenticator app (or a passkey) after the password, for accounts that turned it on. */
  readonly twoStep: TwoStepSignIn
  /** Passkeys: a sign-in alone, or the second step after the password. */
  readonly passkeys: Passkeys
  /** Whether the admin requires it, and of whom (two-step-policy.ts). */
  readonly twoStepPolicy: TwoStepPolicy
  /** Usage today, for each person and for the admin. */
  readonly usage: UsageReports
  /** The admin's sign-up policy and invites. */
  readonly signups: SignupSettings
  /** Accounts of people who sign in through an identity provider. */
  readonly identities: IdentityAccounts
  /** Groups, their members and the limits each gives. */
  readonly groups: Groups
  /** Whether people may sign up and sign in with a name and password (the sign-in page shows the form). */
  readonly passwordsAllowed: boolean
  private readonly breakGlassKey: string | undefined
  /** Sign-in against the operator's LDAP directory, when there is one. */
  private readonly directory: DirectorySignIn | undefined

  constructor(private readonly stores: AccountServiceStores, private readonly passwords: PasswordHasher, settings: AccountSettings) {
    this.attempts = new AttemptLimits(settings)
    this.groups = new Groups(stores.settings)
    this.identities = new IdentityAccounts(stores, this.groups)
    this.limits = new RoleLimitPolicy(stores.settings, settings.roleLimits, Date.now, this.groups)
    this.tokens = new PersonalApiTokens(stores, settings.tokensPerUser, (userId, password, wrong) => this.confirmPassword(userId, password, wrong))
    const confirmPassword = (userId: string, password: string, wrong: string) => this.confirmPassword(userId, password, wrong)
    this.twoStep = new TwoStepSignIn(stores.settings, settings.twoStepBox ?? createSecretBox(randomBytes(32).toString('hex'), 'two-step'), {
      issuer: settings.siteName ?? 'OR3 Chat',
      confirmPassword,
      passkeysOf: userId => this.passkeys.count(userId),
      limiterFor: settings.limiterFor,
    })
    this.passkeys = new Passkeys(stores.settings, {
      rpName: settings.siteName ?? 'OR3 Chat',
      confirmPassword,
      adding: userId => this.twoStep.passkeyAdding(userId),
      removed: userId => this.twoStep.passkeyRemoved(userId),
      // A passkey alone signs in a local account as its password would (with passwords off, only the break-glass admin).
      signInAccount: async (userId) => {
        const account = await stores.accounts.getAccount(userId)
        if (!account?.passwordHash) throw new AuthError('bad-passkey', 'That passkey is not of an account here. Sign in another way.')
        refuseIfPasswordsOff(account, this.passwordsAllowed, this.breakGlassKey)
        if (account.disabled) throw new AuthError('disabled', 'This account is disabled. Ask the admin of this server.')
        return account
      },
    })
    this.twoStepPolicy = new TwoStepPolicy(stores.settings, {
      hasPassword: async userId => Boolean((await stores.accounts.getAccount(userId))?.passwordHash),
      twoStepOn: userId => this.twoStep.isEnabled(userId),
    })
    this.usage = new UsageReports(stores, this.limits, async id => (await this.groups.groupsOf(id)).map(group => group.name))
    this.signups = new SignupSettings(stores, settings.inviteTtlMs)

    this.passwordsAllowed = settings.passwords ?? true
    this.breakGlassKey = settings.breakGlassAdmin ? accountNameKey(settings.breakGlassAdmin) : undefined
    this.directory = settings.ldap?.url ? new DirectorySignIn(new LdapDirectory(settings.ldap), this.identities) : undefined
  }

  /**
   * Adds a step that removes what an account owns elsewhere (conversations, workflows, running
   * jobs, credentials) when it is deleted, before the account goes; steps run in the order added.
   */
  onAccountDeleted(removeData: (accountId: string) => Promise<void>): void {
    this.deletionSteps.push(removeData)
  }

  /** The role of principal `id`: its account's, or `guest` when it has none. */
  async roleOf(id: string): Promise<Role> {
    return (await this.stores.accounts.getAccount(id))?.role ?? 'guest'
  }

  /** Who `id` is for the tool policy: their role and, for an account, their name, groups and whether it is disabled (an unknown id is a guest). */
  async policyPrincipal(id: string): Promise<{ userId: string, role: Role, name?: string, disabled?: boolean, groups?: string[] }> {
    const account = await this.stores.accounts.getAccount(id)
    if (!account) return { userId: id, role: 'guest' }
    const groups = (await this.groups.groupsOf(id)).map(group => group.name)
    return { userId: id, role: account.role, name: account.name, ...(groups.length > 0 ? { groups } : {}), ...(account.disabled ? { disabled: true } : {}) }
  }

  /** Whether the first visitor still has to create the admin account. */
  async needsSetup(): Promise<boolean> {
    return !(await this.stores.accounts.hasAccounts())
  }

  /** Who may create the first account (the setup code printed at start-up). */
  readonly firstRun = new FirstRunGuard()

  /** Creates the admin account on first run (with `id`, when it takes over a guest's); 409 once any account exists. */
  async createFirstAdmin(name: string, password: string, id?: string): Promise<StoredAccount> {
    const account = await this.stores.accounts.createAccount({ name, passwordHash: await this.passwords.hash(password), role: 'admin', onlyIfNone: true, id })
    if (!account) throw new AuthError('already-set-up', 'This server already has its admin account. Sign in instead.')
    return account
  }

  /** An account the admin creates (whatever the sign-up policy); 409 when the name is taken. */
  async createAccount(name: string, password: string, role: Account['role']): Promise<Account> {
    const account = await this.stores.accounts.createAccount({ name, passwordHash: await this.passwords.hash(password), role })
    if (!account) throw new AuthError('name-taken', `The name "${name}" is taken. Choose another.`)
    return publicAccount(account)
  }

  /**
   * Signs up under the admin's policy (an invite code when it asks for one). `fromGuest`: the guest
   * id of the session signing up, whose conversations, workflows and jobs the account keeps (it
   * takes the guest's id, so they are its own without moving a record; that guest id is never a
   * guest again, see `isGuestId`).
   */
  async signUp(name: string, password: string, invite: string | undefined, fromGuest?: string, ip?: string, firstRun?: FirstRunRequest): Promise<StoredAccount> {
    await this.attempts.beforeSignUp(ip)
    if (fromGuest !== undefined && await this.stores.accounts.getAccount(fromGuest)) throw new AuthError('name-taken', 'This guest session already became an account. Sign in instead.')
    const firstAccount = await this.needsSetup()
    if (!firstAccount && !this.passwordsAllowed) throw new AuthError('passwords-off', PASSWORDS_OFF)
    if (firstAccount) {
      const refusal = this.firstRun.refusal(firstRun ?? { siteConfigured: false, loopback: true })
      if (refusal) throw new AuthError('setup-code', refusal)
      return this.createFirstAdmin(name, password, fromGuest)
    }
    const policy = await this.signups.policy()
    // An invite is the admin's decision: it works under every policy ("closed" only means nobody
    // signs up without one); under "open" none is needed and none is used up.
    const inviteHash = policy !== 'open' && invite ? hashInviteCode(invite) : undefined
    if (policy === 'closed' && !inviteHash) throw new AuthError('signup-closed', 'Sign-up is closed on this server. Ask its admin for an account or an invite link.')
    // The invite first: without a usable one nothing else is looked up or hashed, so a taken and a
    // free name get the same answer at the same cost.
    if (policy !== 'open' && !(inviteHash && await this.stores.accounts.inviteUsable(inviteHash))) throw badInvite(invite)
    if (await this.stores.accounts.findAccountByName(name)) throw new AuthError('name-taken', `The name "${name}" is taken. Choose another.`)
    const passwordHash = await this.passwords.hash(password)
    if (inviteHash && !await this.stores.accounts.useInvite(inviteHash)) throw badInvite(invite)
    const account = await this.stores.accounts.createAccount({ name, passwordHash, role: 'user', id: fromGuest })
    if (account) return account
    // Refused by the store: the name, or (a second sign-up from the same guest session at once) the id.
    if (fromGuest !== undefined && await this.stores.accounts.getAccount(fromGuest)) throw new AuthError('name-taken', 'This guest session already became an account. Sign in instead.')
    throw new AuthError('name-taken', `The name "${name}" is taken. Choose another.`)
  }

  /** Whether `id` may act as a guest: not once an account took it over (a copy of the old guest cookie must not open the account). */
  async isGuestId(id: string): Promise<boolean> {
    return (await this.stores.accounts.getAccount(id)) === null
  }

  /** The account for a name and password, or 401 with one message for every mismatch. */
  async signIn(name: string, password: string, ip: string | undefined): Promise<StoredAccount> {
    const key = accountNameKey(name)
    await this.attempts.beforeSignIn(ip, key)
    const account = await this.stores.accounts.findAccountByName(name)
    // An account without a password (it signs in through its identity provider) is checked against the decoy, and fails like a wrong password.
    const matches = await this.passwords.verify(account?.passwordHash || await this.decoy(), password) && Boolean(account?.passwordHash)
    if (!account || !matches) {
      // Not a local password: the directory's person of that name, when there is a directory (its people sign in even with local passwords off).
      const fromDirectory = await this.directory?.signIn(name, password)
      if (fromDirectory) {
        await this.attempts.signInSucceeded(key)
        return fromDirectory
      }
      // A failure keeps the count taken before the check (whether or not the account exists, so both look alike).
      throw new AuthError('bad-credentials', WRONG_CREDENTIALS)
    }
    // With passwords off only the break-glass admin signs in here (and says so only after the password matched).
    refuseIfPasswordsOff(account, this.passwordsAllowed, this.breakGlassKey)
    await this.attempts.signInSucceeded(key)
    if (account.disabled) throw new AuthError('disabled', 'This account is disabled. Ask the admin of this server.')
    return account
  }

  /** The principal of a signed-in session, or why it no longer counts. */
  async principalForSession(claims: SessionClaims): Promise<SessionPrincipal> {
    const account = await this.stores.accounts.getAccount(claims.userId)
    if (!account || account.sessionVersion !== claims.version) throw new AuthError('session-ended', SESSION_ENDED)
    if (account.disabled) throw new AuthError('disabled', 'This account is disabled. Ask the admin of this server.')
    return { id: account.id, name: account.name, role: account.role }
  }

  /** Ends every session of the account, on every device, and revokes its API tokens. */
  async endAllSessions(id: string): Promise<void> {
    await this.stores.accounts.updateAccount(id, { endSessions: true })
    await this.tokens.revokeAll(id)
  }

  async getAccount(id: string): Promise<StoredAccount | null> {
    return this.stores.accounts.getAccount(id)
  }

  /**
   * A person's own change of password: the current one is asked (counted like a sign-in against
   * the account); every session (this one too: the caller starts a fresh one) and token ends, as
   * after an admin's reset.
   */
  async changePassword(userId: string, currentPassword: string, newPassword: string): Promise<StoredAccount> {
    await this.confirmPassword(userId, currentPassword, 'That is not your current password.')
    // Tokens first: a crash between the two leaves the old password with no tokens (the person
    // tries again), never a new password with the old tokens still working.
    await this.tokens.revokeAll(userId)
    const updated = await this.stores.accounts.updateAccount(userId, { passwordHash: await this.passwords.hash(newPassword) })
    if (!updated) throw new AuthError('session-ended', SESSION_ENDED)
    return updated
  }

  /**
   * A person deletes their own account and everything it owns, confirming with their password
   * (counted like a sign-in). The last active admin cannot (`AuthError('last-admin')`): they make
   * another admin first.
   */
  async deleteOwnAccount(userId: string, password: string): Promise<void> {
    await this.confirmPassword(userId, password, 'That is not your password; your account was not deleted.')
    if (!await this.deleteAccount(userId)) throw new AuthError('session-ended', SESSION_ENDED)
  }

  /** Checks `password` is the account's (a second factor for what a stolen session alone must not do). */
  private async confirmPassword(userId: string, password: string, wrong: string): Promise<void> {
    const account = await this.stores.accounts.getAccount(userId)
    if (!account) throw new AuthError('session-ended', SESSION_ENDED)
    const key = accountNameKey(account.name)
    await this.attempts.beforeSignIn(undefined, key)
    if (!account.passwordHash) throw new AuthError('wrong-password', 'This account signs in through its identity provider and has no password here, so this cannot be confirmed with one. Ask the admin of this server.')
    if (!await this.passwords.verify(account.passwordHash, password)) throw new AuthError('wrong-password', wrong)
    await this.attempts.signInSucceeded(key)
  }

  /** An account's groups (by an admin, from its provider, in effect) and its limits with where each comes from; null for no account. */
  async groupView(id: string): Promise<AccountGroupView | null> {
    const account = await this.stores.accounts.getAccount(id)
    if (!account) return null
    const [membership, effective] = await Promise.all([this.groups.membershipOf(id), this.limits.explain(account.role, id)])
    return { membership, ...effective }
  }

  async listAccounts(): Promise<Account[]> {
    return (await this.stores.accounts.listAccounts(MAX_LISTED_ACCOUNTS)).map(publicAccount)
  }

  /**
   * An admin's change to an account; the last active admin cannot be demoted or disabled (checked
   * in the store's transaction, so two admins demoting each other at once leave one).
   */
  async updateAccount(id: string, change: { role?: Account['role'], disabled?: boolean, password?: string }): Promise<Account | null> {
    const patch: AccountPatch = { role: change.role, disabled: change.disabled, keepAnAdmin: true }
    if (change.password !== undefined) patch.passwordHash = await this.passwords.hash(change.password)
    const updated = await keepingAnAdmin(this.stores.accounts.updateAccount(id, patch))
    // A new password or a disabled account ends its sessions; its tokens end with them.
    if (updated && (change.password !== undefined || change.disabled === true)) await this.tokens.revokeAll(id)
    // An admin's new password is how a person who lost their authenticator gets back in: two-step sign-in is off again until they set it up.
    if (updated && change.password !== undefined) await this.twoStep.deleteUser(id)
    return updated ? publicAccount(updated) : null
  }

  /** Deletes an account with its tokens and (`onAccountDeleted` steps) its data; the last active admin cannot be deleted. */
  async deleteAccount(id: string): Promise<boolean> {
    // Disabled first, in one transaction with the last-admin check (two admins deleting each other
    // at once leave one); its data goes next, the account last (a failure leaves it disabled, to retry).
    if (!await keepingAnAdmin(this.stores.accounts.updateAccount(id, { disabled: true, keepAnAdmin: true }))) return false
    for (const removeData of this.deletionSteps) await removeData(id)
    await this.stores.usage.deleteUsage(id)
    await this.groups.forget(id)
    await this.twoStep.deleteUser(id)
    return this.stores.accounts.deleteAccount(id)
  }

  private decoy(): Promise<string> {
    this.decoyHash ??= this.passwords.hash(randomBytes(16).toString('hex'))
    return this.decoyHash
  }
}
