/** Accounts, API tokens, invites and settings on Convex (see convex/accounts.ts). */
import { api } from '../../../../convex/_generated/api'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { DailyUsage, ModelUsage } from '../../../../shared/types/limits'
import { accountNameKey, LastAdminError, type AccountBackend, type StoredAccount, type StoredApiToken, type StoredIdentity } from './account-store'

/** A Convex account store. */
export function createConvexAccountBackend(options: { client: ConvexFunctionClient, secret: string }): AccountBackend {
  const { client, secret } = options
  return {
    async hasAccounts() {
      return await client.query(api.accounts.any, { secret }) as boolean
    },
    async createAccount({ name, passwordHash, role, onlyIfNone = false, id = crypto.randomUUID(), now = Date.now() }) {
      return await client.mutation(api.accounts.create, { secret, accountId: id, name: name.trim(), nameKey: accountNameKey(name), passwordHash, role, onlyIfNone, now }) as StoredAccount | null
    },
    async getAccount(accountId) {
      return await client.query(api.accounts.get, { secret, accountId }) as StoredAccount | null
    },
    async findAccountByName(name) {
      return await client.query(api.accounts.byName, { secret, nameKey: accountNameKey(name) }) as StoredAccount | null
    },
    async listAccounts(limit) {
      return await client.query(api.accounts.list, { secret, limit }) as StoredAccount[]
    },
    async updateAccount(accountId, patch) {
      const result = await client.mutation(api.accounts.update, { secret, accountId, ...patch }) as StoredAccount | { lastAdmin: true } | null
      if (result && 'lastAdmin' in result) throw new LastAdminError()
      return result
    },
    async deleteAccount(accountId) {
      return await client.mutation(api.accounts.remove, { secret, accountId }) as boolean
    },
    async createApiToken(token) {
      await client.mutation(api.accounts.createToken, { secret, tokenId: token.id, userId: token.userId, name: token.name, prefix: token.prefix, tokenHash: token.tokenHash, createdAt: token.createdAt })
    },
    async findApiToken(tokenHash) {
      return await client.query(api.accounts.tokenByHash, { secret, tokenHash }) as StoredApiToken | null
    },
    async listApiTokens(userId) {
      return await client.query(api.accounts.tokensOf, { secret, userId }) as StoredApiToken[]
    },
    async deleteApiToken(userId, tokenId) {
      return await client.mutation(api.accounts.removeToken, { secret, userId, tokenId }) as boolean
    },
    async touchApiToken(tokenId, now) {
      await client.mutation(api.accounts.touchToken, { secret, tokenId, now })
    },
    async linkIdentity({ provider, subject, accountId, email, now = Date.now() }) {
      return await client.mutation(api.accounts.linkIdentity, { secret, provider, subject, accountId, email, now }) as boolean
    },
    async findIdentity(provider, subject) {
      return await client.query(api.accounts.findIdentityOf, { secret, provider, subject }) as StoredIdentity | null
    },
    async listIdentities(accountId) {
      return await client.query(api.accounts.identitiesOf, { secret, accountId }) as StoredIdentity[]
    },
    async touchIdentity(provider, subject, email, now) {
      await client.mutation(api.accounts.touchIdentity, { secret, provider, subject, email, now })
    },
    async createInvite({ codeHash, createdBy, expiresAt, now = Date.now() }) {
      await client.mutation(api.accounts.createInvite, { secret, codeHash, createdBy, expiresAt, now })
    },
    async useInvite(codeHash, now = Date.now()) {
      return await client.mutation(api.accounts.useInvite, { secret, codeHash, now }) as boolean
    },
    async inviteUsable(codeHash, now = Date.now()) {
      return await client.query(api.accounts.inviteUsable, { secret, codeHash, now }) as boolean
    },
    async getSetting(key) {
      return await client.query(api.accounts.getSetting, { secret, key }) as string | null
    },
    async setSetting(key, value) {
      await client.mutation(api.accounts.setSetting, { secret, key, value })
    },
    async deleteSettings(prefix) {
      while (await client.mutation(api.accounts.deleteSettings, { secret, prefix }) as number >= 500) { /* more remain */ }
    },
    async tryLock(key, owner, ttlMs) {
      // The deployment's clock decides expiry, not this instance's.
      return await client.mutation(api.accounts.tryLock, { secret, key, owner, ttlMs }) as boolean
    },
    async unlock(key, owner) {
      await client.mutation(api.accounts.unlock, { secret, key, owner })
    },
    async addUsage(userId, day, spent) {
      await client.mutation(api.accounts.addUsage, { secret, userId, day, tokens: spent.tokens, cost: spent.cost, byModel: spent.byModel?.map(({ model, tokens, cost }) => ({ model, tokens, cost })) })
    },
    async listModelUsage(query, limit) {
      return await client.query(api.accounts.listModelUsage, { secret, ...query, limit }) as ModelUsage[]
    },
    async getUsage(userId, day) {
      return await client.query(api.accounts.getUsage, { secret, userId, day }) as DailyUsage | null
    },
    async listUsage(day, limit) {
      return await client.query(api.accounts.listUsage, { secret, day, limit }) as DailyUsage[]
    },
    async deleteUsage(userId) {
      await client.mutation(api.accounts.deleteUsage, { secret, userId })
    },
    async close() {},
  }
}
