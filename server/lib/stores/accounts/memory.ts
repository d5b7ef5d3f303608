/** In-memory account store for tests. */
import type { DailyUsage, ModelUsage } from '../../../../shared/types/limits'
import { accountNameKey, LastAdminError, losesActiveAdmin, type AccountBackend, type StoredAccount, type StoredApiToken, type StoredIdentity } from './account-store'

/** Creates an empty in-memory account store. */
export function createMemoryAccountBackend(): AccountBackend {
  const accounts = new Map<string, StoredAccount>()
  const tokens = new Map<string, StoredApiToken>()
  /** By `<provider> <subject>` (a provider id has no space). */
  const identities = new Map<string, StoredIdentity>()
  const invites = new Map<string, { expiresAt: number, usedAt: number | null }>()
  const settings = new Map<string, string>()
  const locks = new Map<string, { owner: string, expiresAt: number }>()
  const usage = new Map<string, DailyUsage>()
  /** By `<user>|<day>|<model>`. */
  const modelUsage = new Map<string, ModelUsage>()
  const byName = (name: string) => [...accounts.values()].find(item => accountNameKey(item.name) === accountNameKey(name))
  return {
    async hasAccounts() {
      return accounts.size > 0
    },
    async createAccount({ name, passwordHash, role, onlyIfNone, id, now = Date.now() }) {
      if ((onlyIfNone && accounts.size > 0) || byName(name) || (id !== undefined && accounts.has(id))) return null
      const account: StoredAccount = { id: id ?? crypto.randomUUID(), name: name.trim(), passwordHash, role, disabled: false, createdAt: now, sessionVersion: 1 }
      accounts.set(account.id, account)
      return { ...account }
    },
    async getAccount(id) {
      const account = accounts.get(id)
      return account ? { ...account } : null
    },
    async findAccountByName(name) {
      const account = byName(name)
      return account ? { ...account } : null
    },
    async listAccounts(limit) {
      return [...accounts.values()].sort((a, b) => a.createdAt - b.createdAt).slice(0, limit).map(item => ({ ...item }))
    },
    async updateAccount(id, patch) {
      const account = accounts.get(id)
      if (!account) return null
      const { endSessions, keepAnAdmin, ...fields } = patch
      const endsSessions = endSessions === true || patch.passwordHash !== undefined || (patch.disabled !== undefined && patch.disabled !== account.disabled)
      const changes = Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined))
      if (keepAnAdmin && losesActiveAdmin(account, { ...account, ...changes }) && ![...accounts.values()].some(other => other.id !== id && other.role === 'admin' && !other.disabled)) throw new LastAdminError()
      Object.assign(account, changes)
      if (endsSessions) account.sessionVersion++
      return { ...account }
    },
    async deleteAccount(id) {
      for (const [key, token] of tokens) if (token.userId === id) tokens.delete(key)
      for (const [key, identity] of identities) if (identity.accountId === id) identities.delete(key)
      return accounts.delete(id)
    },
    async linkIdentity({ provider, subject, accountId, email, now = Date.now() }) {
      const key = `${provider} ${subject}`
      if (identities.has(key)) return false
      identities.set(key, { provider, subject, accountId, email, createdAt: now, lastSignInAt: now })
      return true
    },
    async findIdentity(provider, subject) {
      const identity = identities.get(`${provider} ${subject}`)
      return identity ? { ...identity } : null
    },
    async listIdentities(accountId) {
      return [...identities.values()].filter(item => item.accountId === accountId).sort((a, b) => a.createdAt - b.createdAt).map(item => ({ ...item }))
    },
    async touchIdentity(provider, subject, email, now) {
      const identity = identities.get(`${provider} ${subject}`)
      if (identity) Object.assign(identity, { email, lastSignInAt: now })
    },
    async createApiToken(token) {
      tokens.set(token.id, { ...token })
    },
    async findApiToken(tokenHash) {
      const token = [...tokens.values()].find(item => item.tokenHash === tokenHash)
      return token ? { ...token } : null
    },
    async listApiTokens(userId) {
      return [...tokens.values()].filter(item => item.userId === userId).sort((a, b) => b.createdAt - a.createdAt).map(item => ({ ...item }))
    },
    async deleteApiToken(userId, tokenId) {
      if (tokens.get(tokenId)?.userId !== userId) return false
      return tokens.delete(tokenId)
    },
    async touchApiToken(tokenId, now) {
      const token = tokens.get(tokenId)
      if (token) token.lastUsedAt = now
    },
    async createInvite({ codeHash, expiresAt }) {
      invites.set(codeHash, { expiresAt, usedAt: null })
    },
    async useInvite(codeHash, now = Date.now()) {
      const invite = invites.get(codeHash)
      if (!invite || invite.usedAt !== null || invite.expiresAt <= now) return false
      invite.usedAt = now
      return true
    },
    async inviteUsable(codeHash, now = Date.now()) {
      const invite = invites.get(codeHash)
      return invite !== undefined && invite.usedAt === null && invite.expiresAt > now
    },
    async getSetting(key) {
      return settings.get(key) ?? null
    },
    async setSetting(key, value) {
      settings.set(key, value)
    },
    async deleteSettings(prefix) {
      for (const key of [...settings.keys()]) if (key.startsWith(prefix)) settings.delete(key)
    },
    async tryLock(key, owner, ttlMs, now = Date.now()) {
      const held = locks.get(key)
      if (held && held.owner !== owner && held.expiresAt > now) return false
      locks.set(key, { owner, expiresAt: now + ttlMs })
      return true
    },
    async unlock(key, owner) {
      if (locks.get(key)?.owner === owner) locks.delete(key)
    },
    async addUsage(userId, day, spent) {
      const row = usage.get(`${userId}|${day}`) ?? { userId, day, tokens: 0, cost: 0, jobs: 0 }
      usage.set(`${userId}|${day}`, { ...row, tokens: row.tokens + spent.tokens, cost: row.cost + spent.cost, jobs: row.jobs + 1 })
      for (const { model, tokens, cost } of spent.byModel ?? []) {
        const kept = modelUsage.get(`${userId}|${day}|${model}`) ?? { userId, day, model, tokens: 0, cost: 0, jobs: 0 }
        modelUsage.set(`${userId}|${day}|${model}`, { ...kept, tokens: kept.tokens + tokens, cost: kept.cost + cost, jobs: kept.jobs + 1 })
      }
    },
    async listModelUsage({ userId, from, to }, limit) {
      return [...modelUsage.values()]
        .filter(row => row.day >= from && row.day <= to && (userId === undefined || row.userId === userId))
        .sort((a, b) => b.day.localeCompare(a.day) || b.tokens - a.tokens || a.model.localeCompare(b.model))
        .slice(0, limit)
        .map(row => ({ ...row }))
    },
    async getUsage(userId, day) {
      const row = usage.get(`${userId}|${day}`)
      return row ? { ...row } : null
    },
    async listUsage(day, limit) {
      return [...usage.values()].filter(row => row.day === day).sort((a, b) => b.tokens - a.tokens || a.userId.localeCompare(b.userId)).slice(0, limit).map(row => ({ ...row }))
    },
    async deleteUsage(userId) {
      for (const [key, row] of usage) if (row.userId === userId) usage.delete(key)
      for (const [key, row] of modelUsage) if (row.userId === userId) modelUsage.delete(key)
    },
    async close() {
      accounts.clear()
      tokens.clear()
      invites.clear()
      settings.clear()
      usage.clear()
      modelUsage.clear()
    },
  }
}
