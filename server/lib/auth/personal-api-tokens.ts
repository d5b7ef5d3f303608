/**
 * Personal API tokens: a person mints one with their password (counted like a sign-in), sees its
 * secret once, and uses it as `Authorization: Bearer`; only its hash is stored. A token is never
 * worth more than its account: a disabled account's tokens stop, and ending every session of the
 * account (a new password, a disable) revokes them.
 */
import type { ApiTokenSummary, CreatedApiToken, SessionPrincipal } from '../../../shared/types/account'
import type { AccountStore, ApiTokenStore, StoredApiToken } from '../stores/accounts/account-store'
import { hashApiToken, looksLikeApiToken, newApiToken } from './api-tokens'
import { AuthError } from './auth-errors'

function tokenSummary(token: StoredApiToken): ApiTokenSummary {
  return { id: token.id, name: token.name, prefix: token.prefix, createdAt: token.createdAt, lastUsedAt: token.lastUsedAt }
}

/** Every account's API tokens. */
export class PersonalApiTokens {
  constructor(
    private readonly stores: { accounts: AccountStore, tokens: ApiTokenStore },
    /** Most tokens one account may hold. */
    private readonly perUser: number,
    /** Checks the password is the account's, throwing `wrong` (or why the session ended) when not. */
    private readonly confirmPassword: (userId: string, password: string, wrong: string) => Promise<void>,
  ) {}

  /** The principal an `Authorization: Bearer` token stands for. */
  async principalFor(token: string, now = Date.now()): Promise<SessionPrincipal> {
    const stored = looksLikeApiToken(token) ? await this.stores.tokens.findApiToken(hashApiToken(token)) : null
    const account = stored ? await this.stores.accounts.getAccount(stored.userId) : null
    if (!stored || !account) throw new AuthError('bad-token', 'This API token is not valid: it was revoked or mistyped. Create a new one in Settings.')
    if (account.disabled) throw new AuthError('disabled', 'This account is disabled. Ask the admin of this server.')
    // Last use to the minute is plenty, and saves a write per request.
    if (stored.lastUsedAt === null || now - stored.lastUsedAt > 60_000) await this.stores.tokens.touchApiToken(stored.id, now)
    return { id: account.id, name: account.name, role: account.role }
  }

  /** The account's tokens (never their secrets). */
  async list(userId: string): Promise<ApiTokenSummary[]> {
    return (await this.stores.tokens.listApiTokens(userId)).map(tokenSummary)
  }

  /**
   * A new token for the user, its secret shown this once. The account's password is asked again
   * (a session or a token alone cannot mint one), counted like a sign-in against the account.
   */
  async create(userId: string, name: string, password: string, now = Date.now()): Promise<CreatedApiToken> {
    await this.confirmPassword(userId, password, 'That is not your password; a token is created only with it.')
    if ((await this.stores.tokens.listApiTokens(userId)).length >= this.perUser) {
      throw new AuthError('too-many-tokens', `You have ${this.perUser} API tokens, the most allowed. Revoke one you no longer use first.`)
    }
    const { token, prefix, tokenHash } = newApiToken()
    const stored: StoredApiToken = { id: crypto.randomUUID(), userId, name, prefix, tokenHash, createdAt: now, lastUsedAt: null }
    await this.stores.tokens.createApiToken(stored)
    return { ...tokenSummary(stored), token }
  }

  /** Revokes one of the account's tokens; false when it has no such token. */
  async revoke(userId: string, tokenId: string): Promise<boolean> {
    return this.stores.tokens.deleteApiToken(userId, tokenId)
  }

  /** Revokes every API token of the account (its sessions ended: a token must not outlive them). */
  async revokeAll(userId: string): Promise<void> {
    for (const token of await this.stores.tokens.listApiTokens(userId)) await this.stores.tokens.deleteApiToken(userId, token.id)
  }
}
