/**
 * Rate-limit counters for rate-limiter-flexible, shared by every instance of the server. Each
 * call is one transaction, so instances counting the same key at once never lose a point.
 * Expired counters are deleted a few at a time by the calls that pass by. Windows run on the
 * store's clock, never an instance's: each answer says how long its window has left (a `now`
 * sent by an instance of the previous version is ignored).
 */
import { v } from 'convex/values'
import type { MutationCtx } from './_generated/server'
import { serverMutation, serverQuery } from './lib/serverGuard'

/** Expired counters deleted per call, so the table does not grow with every address ever seen. */
const SWEEP_PER_CALL = 10

async function sweepExpired(ctx: MutationCtx, now: number): Promise<void> {
  const expired = await ctx.db.query('rate_limits').withIndex('by_expire', q => q.gt('expire', null).lte('expire', now)).take(SWEEP_PER_CALL)
  for (const row of expired) await ctx.db.delete(row._id)
}

/**
 * Adds `points` under `key` (a negative number gives points back) and answers the counter. A counter
 * past its expiry starts again at `points`, expiring `msDuration` from now (0: never); with
 * `forceExpire` it is set to `points` with a new expiry whatever it held.
 */
export const upsert = serverMutation({
  args: { key: v.string(), points: v.number(), msDuration: v.number(), forceExpire: v.boolean(), now: v.optional(v.number()) },
  handler: async (ctx, { key, points, msDuration, forceExpire }) => {
    const now = Date.now()
    const newExpire = msDuration > 0 ? now + msDuration : null
    const row = await ctx.db.query('rate_limits').withIndex('by_key', q => q.eq('key', key)).first()
    let result: { points: number, expire: number | null }
    if (!row) {
      result = { points, expire: newExpire }
      await ctx.db.insert('rate_limits', { key, ...result })
    } else {
      const live = row.expire === null || row.expire > now
      result = forceExpire || !live ? { points, expire: newExpire } : { points: row.points + points, expire: row.expire }
      await ctx.db.patch(row._id, result)
    }
    await sweepExpired(ctx, now)
    return { ...result, msLeft: result.expire === null ? -1 : Math.max(result.expire - now, 0) }
  },
})

/** The live counter under `key`, or null. */
export const get = serverQuery({
  args: { key: v.string(), now: v.optional(v.number()) },
  handler: async (ctx, { key }) => {
    const now = Date.now()
    const row = await ctx.db.query('rate_limits').withIndex('by_key', q => q.eq('key', key)).first()
    if (!row || (row.expire !== null && row.expire <= now)) return null
    return { points: row.points, expire: row.expire, msLeft: row.expire === null ? -1 : row.expire - now }
  },
})

/** Deletes the counter under `key`; true when there was one. */
export const remove = serverMutation({
  args: { key: v.string() },
  handler: async (ctx, { key }) => {
    const row = await ctx.db.query('rate_limits').withIndex('by_key', q => q.eq('key', key)).first()
    if (row) await ctx.db.delete(row._id)
    return row !== null
  },
})
