/** Accounts, API tokens, invites and settings for the Convex account store. Server secret required. */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import type { QueryCtx } from './_generated/server'
import { serverMutation, serverQuery } from './lib/serverGuard'

const role = v.union(v.literal('admin'), v.literal('user'))

function toAccount(row: Doc<'accounts'>) {
  return { id: row.account_id, name: row.name, passwordHash: row.password_hash, role: row.role, disabled: row.disabled, sessionVersion: row.session_version, createdAt: row.created_at }
}

function toIdentity(row: Doc<'account_identities'>) {
  return { provider: row.provider, subject: row.subject, accountId: row.account_id, email: row.email, createdAt: row.created_at, lastSignInAt: row.last_sign_in_at }
}

const findIdentity = (ctx: QueryCtx, provider: string, subject: string) => ctx.db.query('account_identities').withIndex('by_identity', q => q.eq('provider', provider).eq('subject', subject)).unique()

function toToken(row: Doc<'api_tokens'>) {
  return { id: row.token_id, userId: row.user_id, name: row.name, prefix: row.prefix, tokenHash: row.token_hash, createdAt: row.created_at, lastUsedAt: row.last_used_at }
}

const findAccount = (ctx: QueryCtx, accountId: string) => ctx.db.query('accounts').withIndex('by_account_id', q => q.eq('account_id', accountId)).unique()
const findToken = (ctx: QueryCtx, tokenId: string) => ctx.db.query('api_tokens').withIndex('by_token_id', q => q.eq('token_id', tokenId)).unique()

/** Whether any account exists. */
export const any = serverQuery({
  args: {},
  handler: async ctx => (await ctx.db.query('accounts').first()) !== null,
})

/** Creates an account in one transaction: null when the name is taken or (`onlyIfNone`) an account exists. */
export const create = serverMutation({
  args: { accountId: v.string(), name: v.string(), nameKey: v.string(), passwordHash: v.string(), role, onlyIfNone: v.boolean(), now: v.number() },
  handler: async (ctx, args) => {
    if (args.onlyIfNone && await ctx.db.query('accounts').first()) return null
    if (await ctx.db.query('accounts').withIndex('by_name_key', q => q.eq('name_key', args.nameKey)).first()) return null
    if (await findAccount(ctx, args.accountId)) return null
    const id = await ctx.db.insert('accounts', { account_id: args.accountId, name: args.name, name_key: args.nameKey, password_hash: args.passwordHash, role: args.role, disabled: false, session_version: 1, created_at: args.now })
    return toAccount((await ctx.db.get(id))!)
  },
})

export const get = serverQuery({
  args: { accountId: v.string() },
  handler: async (ctx, { accountId }) => {
    const row = await findAccount(ctx, accountId)
    return row ? toAccount(row) : null
  },
})

export const byName = serverQuery({
  args: { nameKey: v.string() },
  handler: async (ctx, { nameKey }) => {
    const row = await ctx.db.query('accounts').withIndex('by_name_key', q => q.eq('name_key', nameKey)).first()
    return row ? toAccount(row) : null
  },
})

export const list = serverQuery({
  args: { limit: v.number() },
  handler: async (ctx, { limit }) => (await ctx.db.query('accounts').withIndex('by_created').order('asc').take(limit)).map(toAccount),
})

/** Changes an account; a new password, a change of `disabled` or `endSessions` bumps its session version. */
export const update = serverMutation({
  args: { accountId: v.string(), role: v.optional(role), disabled: v.optional(v.boolean()), passwordHash: v.optional(v.string()), endSessions: v.optional(v.boolean()), keepAnAdmin: v.optional(v.boolean()) },
  handler: async (ctx, { accountId, role, disabled, passwordHash, endSessions, keepAnAdmin }) => {
    const row = await findAccount(ctx, accountId)
    if (!row) return null
    const endsSessions = endSessions === true || passwordHash !== undefined || (disabled !== undefined && disabled !== row.disabled)
    // Checked in this mutation's transaction: two admins demoting each other at once cannot both win.
    const losesAdmin = row.role === 'admin' && !row.disabled && ((role ?? row.role) !== 'admin' || (disabled ?? row.disabled))
    if (keepAnAdmin && losesAdmin) {
      const admins = await ctx.db.query('accounts').filter(q => q.and(q.eq(q.field('role'), 'admin'), q.eq(q.field('disabled'), false))).collect()
      if (!admins.some(admin => admin.account_id !== accountId)) return { lastAdmin: true as const }
    }
    await ctx.db.patch(row._id, {
      ...(role !== undefined && { role }),
      ...(disabled !== undefined && { disabled }),
      ...(passwordHash !== undefined && { password_hash: passwordHash }),
      session_version: row.session_version + (endsSessions ? 1 : 0),
    })
    return toAccount((await ctx.db.get(row._id))!)
  },
})

/** Deletes an account and its tokens. */
export const remove = serverMutation({
  args: { accountId: v.string() },
  handler: async (ctx, { accountId }) => {
    const row = await findAccount(ctx, accountId)
    if (!row) return false
    for (const token of await ctx.db.query('api_tokens').withIndex('by_user', q => q.eq('user_id', accountId)).collect()) await ctx.db.delete(token._id)
    for (const identity of await ctx.db.query('account_identities').withIndex('by_account', q => q.eq('account_id', accountId)).collect()) await ctx.db.delete(identity._id)
    await ctx.db.delete(row._id)
    return true
  },
})

/** Links a provider's person to an account in one transaction: false when that identity is already linked. */
export const linkIdentity = serverMutation({
  args: { provider: v.string(), subject: v.string(), accountId: v.string(), email: v.union(v.string(), v.null()), now: v.number() },
  handler: async (ctx, args) => {
    if (await findIdentity(ctx, args.provider, args.subject)) return false
    await ctx.db.insert('account_identities', { provider: args.provider, subject: args.subject, account_id: args.accountId, email: args.email, created_at: args.now, last_sign_in_at: args.now })
    return true
  },
})

export const findIdentityOf = serverQuery({
  args: { provider: v.string(), subject: v.string() },
  handler: async (ctx, { provider, subject }) => {
    const row = await findIdentity(ctx, provider, subject)
    return row ? toIdentity(row) : null
  },
})

export const identitiesOf = serverQuery({
  args: { accountId: v.string() },
  handler: async (ctx, { accountId }) => (await ctx.db.query('account_identities').withIndex('by_account', q => q.eq('account_id', accountId)).take(100)).map(toIdentity),
})

export const touchIdentity = serverMutation({
  args: { provider: v.string(), subject: v.string(), email: v.union(v.string(), v.null()), now: v.number() },
  handler: async (ctx, { provider, subject, email, now }) => {
    const row = await findIdentity(ctx, provider, subject)
    if (row) await ctx.db.patch(row._id, { email, last_sign_in_at: now })
  },
})

export const createToken = serverMutation({
  args: { tokenId: v.string(), userId: v.string(), name: v.string(), prefix: v.string(), tokenHash: v.string(), createdAt: v.number() },
  handler: async (ctx, args) => {
    await ctx.db.insert('api_tokens', { token_id: args.tokenId, user_id: args.userId, name: args.name, prefix: args.prefix, token_hash: args.tokenHash, created_at: args.createdAt, last_used_at: null })
  },
})

export const tokenByHash = serverQuery({
  args: { tokenHash: v.string() },
  handler: async (ctx, { tokenHash }) => {
    const row = await ctx.db.query('api_tokens').withIndex('by_token_hash', q => q.eq('token_hash', tokenHash)).first()
    return row ? toToken(row) : null
  },
})

export const tokensOf = serverQuery({
  args: { userId: v.string() },
  handler: async (ctx, { userId }) => (await ctx.db.query('api_tokens').withIndex('by_user', q => q.eq('user_id', userId)).order('desc').take(100)).map(toToken),
})

export const removeToken = serverMutation({
  args: { userId: v.string(), tokenId: v.string() },
  handler: async (ctx, { userId, tokenId }) => {
    const row = await findToken(ctx, tokenId)
    if (!row || row.user_id !== userId) return false
    await ctx.db.delete(row._id)
    return true
  },
})

export const touchToken = serverMutation({
  args: { tokenId: v.string(), now: v.number() },
  handler: async (ctx, { tokenId, now }) => {
    const row = await findToken(ctx, tokenId)
    if (row) await ctx.db.patch(row._id, { last_used_at: now })
  },
})

export const createInvite = serverMutation({
  args: { codeHash: v.string(), createdBy: v.string(), expiresAt: v.number(), now: v.number() },
  handler: async (ctx, { codeHash, createdBy, expiresAt, now }) => {
    await ctx.db.insert('invites', { code_hash: codeHash, created_by: createdBy, created_at: now, expires_at: expiresAt, used_at: null })
  },
})

/** Uses up an invite in one transaction: true only the first time, before it expires. */
export const useInvite = serverMutation({
  args: { codeHash: v.string(), now: v.number() },
  handler: async (ctx, { codeHash, now }) => {
    const row = await ctx.db.query('invites').withIndex('by_code_hash', q => q.eq('code_hash', codeHash)).first()
    if (!row || row.used_at !== null || row.expires_at <= now) return false
    await ctx.db.patch(row._id, { used_at: now })
    return true
  },
})

/** Whether an invite could be used now (unused, not expired), without using it. */
export const inviteUsable = serverQuery({
  args: { codeHash: v.string(), now: v.number() },
  handler: async (ctx, { codeHash, now }) => {
    const row = await ctx.db.query('invites').withIndex('by_code_hash', q => q.eq('code_hash', codeHash)).first()
    return row !== null && row.used_at === null && row.expires_at > now
  },
})

export const getSetting = serverQuery({
  args: { key: v.string() },
  handler: async (ctx, { key }) => (await ctx.db.query('settings').withIndex('by_key', q => q.eq('key', key)).first())?.value ?? null,
})

export const setSetting = serverMutation({
  args: { key: v.string(), value: v.string() },
  handler: async (ctx, { key, value }) => {
    const row = await ctx.db.query('settings').withIndex('by_key', q => q.eq('key', key)).first()
    if (row) await ctx.db.patch(row._id, { value })
    else await ctx.db.insert('settings', { key, value })
  },
})

/** Removes every setting whose key starts with `prefix` (at most 500 per call; the store calls again while some remain). */
export const deleteSettings = serverMutation({
  args: { prefix: v.string() },
  handler: async (ctx, { prefix }) => {
    const rows = await ctx.db.query('settings').withIndex('by_key', q => q.gte('key', prefix).lt('key', `${prefix}\uffff`)).take(500)
    for (const row of rows) await ctx.db.delete(row._id)
    return rows.length
  },
})

/**
 * Takes a lock that is free, expired or already the caller's; in one transaction, so two instances
 * cannot both win; expiry by the store's clock, so an instance whose clock runs fast takes nothing
 * early (a `now` sent by an instance of the previous version is ignored).
 */
export const tryLock = serverMutation({
  args: { key: v.string(), owner: v.string(), ttlMs: v.number(), now: v.optional(v.number()) },
  handler: async (ctx, { key, owner, ttlMs }) => {
    const now = Date.now()
    const row = await ctx.db.query('locks').withIndex('by_key', q => q.eq('key', key)).first()
    if (row && row.owner !== owner && row.expires_at > now) return false
    if (row) await ctx.db.patch(row._id, { owner, expires_at: now + ttlMs })
    else await ctx.db.insert('locks', { key, owner, expires_at: now + ttlMs })
    return true
  },
})

export const unlock = serverMutation({
  args: { key: v.string(), owner: v.string() },
  handler: async (ctx, { key, owner }) => {
    const row = await ctx.db.query('locks').withIndex('by_key', q => q.eq('key', key)).first()
    if (row?.owner === owner) await ctx.db.delete(row._id)
  },
})

/** Adds a job's usage to a principal's day (one row per principal and day, updated in one transaction). */
export const addUsage = serverMutation({
  args: { userId: v.string(), day: v.string(), tokens: v.number(), cost: v.number(), byModel: v.optional(v.array(v.object({ model: v.string(), tokens: v.number(), cost: v.number() }))) },
  handler: async (ctx, { userId, day, tokens, cost, byModel }) => {
    const row = await ctx.db.query('usage_daily').withIndex('by_user_day', q => q.eq('user_id', userId).eq('day', day)).first()
    if (row) await ctx.db.patch(row._id, { tokens: row.tokens + tokens, cost: row.cost + cost, jobs: row.jobs + 1 })
    else await ctx.db.insert('usage_daily', { user_id: userId, day, tokens, cost, jobs: 1 })
    // Each model's share of the job, in the same transaction.
    for (const share of (byModel ?? []).slice(0, 100)) {
      const kept = await ctx.db.query('usage_by_model').withIndex('by_user_day_model', q => q.eq('user_id', userId).eq('day', day).eq('model', share.model)).first()
      if (kept) await ctx.db.patch(kept._id, { tokens: kept.tokens + share.tokens, cost: kept.cost + share.cost, jobs: kept.jobs + 1 })
      else await ctx.db.insert('usage_by_model', { user_id: userId, day, model: share.model, tokens: share.tokens, cost: share.cost, jobs: 1 })
    }
  },
})

/** Model rows over the UTC days `from`…`to`: one principal's or everyone's, newest day first, most tokens first within a day. */
export const listModelUsage = serverQuery({
  args: { userId: v.optional(v.string()), from: v.string(), to: v.string(), limit: v.number() },
  handler: async (ctx, { userId, from, to, limit }) => {
    const bound = Math.max(0, Math.min(limit, 10_000))
    const rows = userId === undefined
      ? await ctx.db.query('usage_by_model').withIndex('by_day', q => q.gte('day', from).lte('day', to)).order('desc').take(bound)
      : await ctx.db.query('usage_by_model').withIndex('by_user_day_model', q => q.eq('user_id', userId).gte('day', from).lte('day', to)).order('desc').take(bound)
    return rows
      .map(row => ({ userId: row.user_id, day: row.day, model: row.model, tokens: row.tokens, cost: row.cost, jobs: row.jobs }))
      .sort((a, b) => b.day.localeCompare(a.day) || b.tokens - a.tokens || a.model.localeCompare(b.model))
  },
})

function toUsage(row: { user_id: string, day: string, tokens: number, cost: number, jobs: number }) {
  return { userId: row.user_id, day: row.day, tokens: row.tokens, cost: row.cost, jobs: row.jobs }
}

export const getUsage = serverQuery({
  args: { userId: v.string(), day: v.string() },
  handler: async (ctx, { userId, day }) => {
    const row = await ctx.db.query('usage_daily').withIndex('by_user_day', q => q.eq('user_id', userId).eq('day', day)).first()
    return row ? toUsage(row) : null
  },
})

export const listUsage = serverQuery({
  args: { day: v.string(), limit: v.number() },
  handler: async (ctx, { day, limit }) => {
    const rows = await ctx.db.query('usage_daily').withIndex('by_day_tokens', q => q.eq('day', day)).order('desc').take(Math.max(0, Math.min(limit, 1_000)))
    return rows.map(toUsage)
  },
})

export const deleteUsage = serverMutation({
  args: { userId: v.string() },
  handler: async (ctx, { userId }) => {
    const rows = await ctx.db.query('usage_daily').withIndex('by_user_day', q => q.eq('user_id', userId)).collect()
    for (const row of rows) await ctx.db.delete(row._id)
    const models = await ctx.db.query('usage_by_model').withIndex('by_user_day_model', q => q.eq('user_id', userId)).collect()
    for (const row of models) await ctx.db.delete(row._id)
  },
})
