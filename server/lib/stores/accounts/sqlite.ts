/** Accounts, API tokens, invites and settings in the app's sqlite file. */
import type { DailyUsage } from '../../../../shared/types/limits'
import type { LedgerSpend } from '../usage/usage-ledger'
import { openSqliteDatabase } from '../sqlite/database'
import { accountNameKey, LastAdminError, losesActiveAdmin, type AccountPatch, type AccountBackend, type StoredAccount, type StoredApiToken, type StoredIdentity } from './account-store'

interface AccountRow { id: string, name: string, password_hash: string, role: 'admin' | 'user', disabled: number, session_version: number, created_at: number }
interface TokenRow { id: string, user_id: string, name: string, prefix: string, token_hash: string, created_at: number, last_used_at: number | null }

function toAccount(row: AccountRow): StoredAccount {
  return { id: row.id, name: row.name, passwordHash: row.password_hash, role: row.role, disabled: row.disabled === 1, sessionVersion: row.session_version, createdAt: row.created_at }
}

interface IdentityRow { provider: string, subject: string, account_id: string, email: string | null, created_at: number, last_sign_in_at: number }

function toIdentity(row: IdentityRow): StoredIdentity {
  return { provider: row.provider, subject: row.subject, accountId: row.account_id, email: row.email, createdAt: row.created_at, lastSignInAt: row.last_sign_in_at }
}

interface UsageRow { user_id: string, day: string, tokens: number, cost: number, jobs: number }
interface ModelUsageRow extends UsageRow { model: string }

function toUsage(row: UsageRow): DailyUsage {
  return { userId: row.user_id, day: row.day, tokens: row.tokens, cost: row.cost, jobs: row.jobs }
}

function toToken(row: TokenRow): StoredApiToken {
  return { id: row.id, userId: row.user_id, name: row.name, prefix: row.prefix, tokenHash: row.token_hash, createdAt: row.created_at, lastUsedAt: row.last_used_at }
}

/** Opens the account store in the sqlite file at `path`. */
export function createSqliteAccountBackend(options: { path: string }): AccountBackend {
  const db = openSqliteDatabase(options.path)
  const statements = {
    count: db.prepare<[], { count: number }>('SELECT COUNT(*) AS count FROM accounts'),
    otherActiveAdmins: db.prepare<[string], { count: number }>('SELECT COUNT(*) AS count FROM accounts WHERE role = \'admin\' AND disabled = 0 AND id != ?'),
    insert: db.prepare('INSERT INTO accounts (id, name, name_key, password_hash, role, created_at) VALUES (@id, @name, @nameKey, @passwordHash, @role, @now) ON CONFLICT DO NOTHING'),
    get: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?'),
    byName: db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE name_key = ?'),
    list: db.prepare<[number], AccountRow>('SELECT * FROM accounts ORDER BY created_at, id LIMIT ?'),
    update: db.prepare('UPDATE accounts SET role = @role, disabled = @disabled, password_hash = @passwordHash, session_version = @sessionVersion WHERE id = @id'),
    remove: db.prepare('DELETE FROM accounts WHERE id = ?'),
    insertToken: db.prepare('INSERT INTO api_tokens (id, user_id, name, prefix, token_hash, created_at, last_used_at) VALUES (@id, @userId, @name, @prefix, @tokenHash, @createdAt, @lastUsedAt)'),
    tokenByHash: db.prepare<[string], TokenRow>('SELECT * FROM api_tokens WHERE token_hash = ?'),
    tokensOf: db.prepare<[string], TokenRow>('SELECT * FROM api_tokens WHERE user_id = ? ORDER BY created_at DESC'),
    removeToken: db.prepare('DELETE FROM api_tokens WHERE id = ? AND user_id = ?'),
    touchToken: db.prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ?'),
    // Its identities go with a deleted account (a trigger of the migration).
    linkIdentity: db.prepare('INSERT INTO account_identities (provider, subject, account_id, email, created_at, last_sign_in_at) VALUES (@provider, @subject, @accountId, @email, @now, @now) ON CONFLICT DO NOTHING'),
    findIdentity: db.prepare<[string, string], IdentityRow>('SELECT * FROM account_identities WHERE provider = ? AND subject = ?'),
    identitiesOf: db.prepare<[string], IdentityRow>('SELECT * FROM account_identities WHERE account_id = ? ORDER BY created_at, provider, subject'),
    touchIdentity: db.prepare('UPDATE account_identities SET email = @email, last_sign_in_at = @now WHERE provider = @provider AND subject = @subject'),
    insertInvite: db.prepare('INSERT INTO invites (code_hash, created_by, created_at, expires_at) VALUES (@codeHash, @createdBy, @now, @expiresAt)'),
    useInvite: db.prepare('UPDATE invites SET used_at = @now WHERE code_hash = @codeHash AND used_at IS NULL AND expires_at > @now'),
    inviteUsable: db.prepare<{ codeHash: string, now: number }, { usable: number }>('SELECT 1 AS usable FROM invites WHERE code_hash = @codeHash AND used_at IS NULL AND expires_at > @now'),
    getSetting: db.prepare<[string], { value: string }>('SELECT value FROM settings WHERE key = ?'),
    setSetting: db.prepare('INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value'),
    deleteSettings: db.prepare<[string, string]>('DELETE FROM settings WHERE substr(key, 1, length(?)) = ?'),
    // Taken when free, expired or already ours; one statement, so two processes on the file cannot both win.
    tryLock: db.prepare('INSERT INTO locks (key, owner, expires_at) VALUES (@key, @owner, @expiresAt) ON CONFLICT (key) DO UPDATE SET owner = excluded.owner, expires_at = excluded.expires_at WHERE locks.owner = excluded.owner OR locks.expires_at <= @now'),
    unlock: db.prepare('DELETE FROM locks WHERE key = ? AND owner = ?'),
    addUsage: db.prepare('INSERT INTO usage_daily (user_id, day, tokens, cost, jobs) VALUES (@userId, @day, @tokens, @cost, 1) ON CONFLICT (user_id, day) DO UPDATE SET tokens = tokens + excluded.tokens, cost = cost + excluded.cost, jobs = jobs + 1'),
    getUsage: db.prepare<[string, string], UsageRow>('SELECT * FROM usage_daily WHERE user_id = ? AND day = ?'),
    listUsage: db.prepare<[string, number], UsageRow>('SELECT * FROM usage_daily WHERE day = ? ORDER BY tokens DESC, user_id LIMIT ?'),
    deleteUsage: db.prepare('DELETE FROM usage_daily WHERE user_id = ?'),
    addModelUsage: db.prepare('INSERT INTO usage_by_model (user_id, day, model, tokens, cost, jobs) VALUES (@userId, @day, @model, @tokens, @cost, 1) ON CONFLICT (user_id, day, model) DO UPDATE SET tokens = tokens + excluded.tokens, cost = cost + excluded.cost, jobs = jobs + 1'),
    listModelUsage: db.prepare<{ from: string, to: string, limit: number }, ModelUsageRow>('SELECT * FROM usage_by_model WHERE day BETWEEN @from AND @to ORDER BY day DESC, tokens DESC, model LIMIT @limit'),
    listModelUsageOf: db.prepare<{ userId: string, from: string, to: string, limit: number }, ModelUsageRow>('SELECT * FROM usage_by_model WHERE user_id = @userId AND day BETWEEN @from AND @to ORDER BY day DESC, tokens DESC, model LIMIT @limit'),
    deleteModelUsage: db.prepare('DELETE FROM usage_by_model WHERE user_id = ?'),
  }
  // A job's day and its models' shares together: a crash keeps all of it or none.
  const addUsage = db.transaction((userId: string, day: string, spent: LedgerSpend) => {
    statements.addUsage.run({ userId, day, tokens: Math.round(spent.tokens), cost: spent.cost })
    for (const { model, tokens, cost } of spent.byModel ?? []) statements.addModelUsage.run({ userId, day, model, tokens: Math.round(tokens), cost })
  })
  const createAccount = db.transaction((input: { id: string, name: string, passwordHash: string, role: string, onlyIfNone: boolean, now: number }) => {
    if (input.onlyIfNone && statements.count.get()!.count > 0) return null
    const inserted = statements.insert.run({ id: input.id, name: input.name.trim(), nameKey: accountNameKey(input.name), passwordHash: input.passwordHash, role: input.role, now: input.now }).changes > 0
    return inserted ? toAccount(statements.get.get(input.id)!) : null
  })
  // Read, checked and written in one immediate transaction: another process on the file waits.
  const updateAccount = db.transaction((id: string, patch: AccountPatch) => {
    const row = statements.get.get(id)
    if (!row) return null
    const current = toAccount(row)
    const { endSessions, keepAnAdmin, ...fields } = patch
    const endsSessions = endSessions === true || patch.passwordHash !== undefined || (patch.disabled !== undefined && patch.disabled !== current.disabled)
    const next = { ...current, ...Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) } as StoredAccount
    if (keepAnAdmin && losesActiveAdmin(current, next) && statements.otherActiveAdmins.get(id)!.count === 0) throw new LastAdminError()
    statements.update.run({ id, role: next.role, disabled: next.disabled ? 1 : 0, passwordHash: next.passwordHash, sessionVersion: current.sessionVersion + (endsSessions ? 1 : 0) })
    return toAccount(statements.get.get(id)!)
  })
  return {
    async hasAccounts() {
      return statements.count.get()!.count > 0
    },
    async createAccount({ name, passwordHash, role, onlyIfNone = false, id = crypto.randomUUID(), now = Date.now() }) {
      return createAccount.immediate({ id, name, passwordHash, role, onlyIfNone, now })
    },
    async getAccount(id) {
      const row = statements.get.get(id)
      return row ? toAccount(row) : null
    },
    async findAccountByName(name) {
      const row = statements.byName.get(accountNameKey(name))
      return row ? toAccount(row) : null
    },
    async listAccounts(limit) {
      return statements.list.all(limit).map(toAccount)
    },
    async updateAccount(id, patch) {
      return updateAccount.immediate(id, patch)
    },
    async deleteAccount(id) {
      return statements.remove.run(id).changes > 0
    },
    async createApiToken(token) {
      statements.insertToken.run(token)
    },
    async findApiToken(tokenHash) {
      const row = statements.tokenByHash.get(tokenHash)
      return row ? toToken(row) : null
    },
    async listApiTokens(userId) {
      return statements.tokensOf.all(userId).map(toToken)
    },
    async deleteApiToken(userId, tokenId) {
      return statements.removeToken.run(tokenId, userId).changes > 0
    },
    async touchApiToken(tokenId, now) {
      statements.touchToken.run(now, tokenId)
    },
    async linkIdentity({ provider, subject, accountId, email, now = Date.now() }) {
      return statements.linkIdentity.run({ provider, subject, accountId, email, now }).changes > 0
    },
    async findIdentity(provider, subject) {
      const row = statements.findIdentity.get(provider, subject)
      return row ? toIdentity(row) : null
    },
    async listIdentities(accountId) {
      return statements.identitiesOf.all(accountId).map(toIdentity)
    },
    async touchIdentity(provider, subject, email, now) {
      statements.touchIdentity.run({ provider, subject, email, now })
    },
    async createInvite({ codeHash, createdBy, expiresAt, now = Date.now() }) {
      statements.insertInvite.run({ codeHash, createdBy, expiresAt, now })
    },
    async useInvite(codeHash, now = Date.now()) {
      return statements.useInvite.run({ codeHash, now }).changes > 0
    },
    async inviteUsable(codeHash, now = Date.now()) {
      return statements.inviteUsable.get({ codeHash, now }) !== undefined
    },
    async getSetting(key) {
      return statements.getSetting.get(key)?.value ?? null
    },
    async addUsage(userId, day, spent) {
      addUsage.immediate(userId, day, spent)
    },
    async listModelUsage({ userId, from, to }, limit) {
      const rows = userId === undefined ? statements.listModelUsage.all({ from, to, limit }) : statements.listModelUsageOf.all({ userId, from, to, limit })
      return rows.map(row => ({ ...toUsage(row), model: row.model }))
    },
    async getUsage(userId, day) {
      const row = statements.getUsage.get(userId, day)
      return row ? toUsage(row) : null
    },
    async listUsage(day, limit) {
      return statements.listUsage.all(day, limit).map(toUsage)
    },
    async deleteUsage(userId) {
      statements.deleteUsage.run(userId)
      statements.deleteModelUsage.run(userId)
    },
    async setSetting(key, value) {
      statements.setSetting.run(key, value)
    },
    async deleteSettings(prefix) {
      statements.deleteSettings.run(prefix, prefix)
    },
    async tryLock(key, owner, ttlMs, now = Date.now()) {
      return statements.tryLock.run({ key, owner, expiresAt: now + ttlMs, now }).changes > 0
    },
    async unlock(key, owner) {
      statements.unlock.run(key, owner)
    },
    async close() {
      if (db.open) db.close()
    },
  }
}
