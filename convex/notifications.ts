/** Notes for users whose jobs ended while nobody watched. Server secret required. */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import { serverMutation, serverQuery } from './lib/serverGuard'

function toNotification(row: Doc<'job_notifications'>) {
  return { id: row._id as string, userId: row.user_id, jobId: row.job_id, threadId: row.thread_id, kind: row.kind, title: row.title, body: row.body, createdAt: row.created_at, readAt: row.read_at }
}

export const add = serverMutation({
  args: {
    userId: v.string(),
    jobId: v.string(),
    threadId: v.string(),
    kind: v.union(v.literal('job-complete'), v.literal('job-error'), v.literal('job-aborted'), v.literal('input-needed')),
    title: v.string(),
    body: v.string(),
    now: v.number(),
  },
  handler: async (ctx, args) => {
    const id = await ctx.db.insert('job_notifications', { user_id: args.userId, job_id: args.jobId, thread_id: args.threadId, kind: args.kind, title: args.title, body: args.body, created_at: args.now })
    return toNotification((await ctx.db.get(id))!)
  },
})

/** Newest first. */
export const list = serverQuery({
  args: { userId: v.string(), unreadOnly: v.optional(v.boolean()), limit: v.number() },
  handler: async (ctx, { userId, unreadOnly, limit }) => {
    const rows = ctx.db.query('job_notifications').withIndex('by_user_and_created', q => q.eq('user_id', userId)).order('desc')
    const picked = unreadOnly ? await rows.filter(q => q.eq(q.field('read_at'), undefined)).take(limit) : await rows.take(limit)
    return picked.map(toNotification)
  },
})

/** Marks the given notifications (or all unread ones) of the user read; returns how many changed. */
export const markRead = serverMutation({
  args: { userId: v.string(), ids: v.optional(v.array(v.string())), now: v.number() },
  handler: async (ctx, { userId, ids, now }) => {
    let rows: Array<Doc<'job_notifications'>>
    if (ids) {
      rows = []
      for (const id of ids) {
        const normalized = ctx.db.normalizeId('job_notifications', id)
        const row = normalized ? await ctx.db.get(normalized) : null
        if (row) rows.push(row)
      }
    } else {
      rows = await ctx.db.query('job_notifications').withIndex('by_user_and_created', q => q.eq('user_id', userId)).filter(q => q.eq(q.field('read_at'), undefined)).collect()
    }
    let changed = 0
    for (const row of rows) {
      if (row.user_id !== userId || row.read_at !== undefined) continue
      await ctx.db.patch(row._id, { read_at: now })
      changed++
    }
    return changed
  },
})
