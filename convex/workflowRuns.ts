/** Kept workflow runs for the Convex run store (server/lib/stores/workflows/runs-convex.ts). Server secret required. */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import type { MutationCtx, QueryCtx } from './_generated/server'
import { serverMutation, serverQuery } from './lib/serverGuard'

/** Rows one page reads at most before it answers with what it found (and where to go on). */
const PAGE_SCAN_MAX = 2_000

const byJobId = (ctx: QueryCtx, jobId: string) => ctx.db.query('workflow_runs').withIndex('by_job_id', q => q.eq('job_id', jobId)).unique()
const totalOf = (ctx: QueryCtx, owner: string) => ctx.db.query('workflow_run_bytes').withIndex('by_owner', q => q.eq('owner', owner)).unique()

/** Adds `delta` bytes to an owner's total (a total that reaches 0 goes). */
async function addBytes(ctx: MutationCtx, owner: string, delta: number): Promise<void> {
  if (delta === 0) return
  const total = await totalOf(ctx, owner)
  const bytes = (total?.bytes ?? 0) + delta
  if (total && bytes <= 0) await ctx.db.delete(total._id)
  else if (total) await ctx.db.patch(total._id, { bytes })
  else if (bytes > 0) await ctx.db.insert('workflow_run_bytes', { owner, bytes })
}

/** Deletes a run and takes its bytes off its account's and its workflow's totals. */
async function removeRow(ctx: MutationCtx, row: Doc<'workflow_runs'>): Promise<void> {
  await ctx.db.delete(row._id)
  await addBytes(ctx, `user:${row.user_id}`, -(row.size ?? 0))
  await addBytes(ctx, `workflow:${row.workflow_id}`, -(row.size ?? 0))
}

export const save = serverMutation({
  args: { jobId: v.string(), userId: v.string(), workflowId: v.string(), status: v.string(), startedAt: v.number(), finishedAt: v.optional(v.number()), summary: v.string(), job: v.string(), size: v.optional(v.number()) },
  handler: async (ctx, args) => {
    const row = { job_id: args.jobId, user_id: args.userId, workflow_id: args.workflowId, status: args.status, started_at: args.startedAt, finished_at: args.finishedAt, summary: args.summary, job: args.job, size: args.size ?? 0 }
    const existing = await byJobId(ctx, args.jobId)
    if (existing) await ctx.db.replace(existing._id, row)
    else await ctx.db.insert('workflow_runs', row)
    const delta = row.size - (existing?.size ?? 0)
    await addBytes(ctx, `user:${args.userId}`, delta)
    await addBytes(ctx, `workflow:${args.workflowId}`, delta)
  },
})

/** The bytes an account's (`userId`) or a workflow's runs take. */
export const bytes = serverQuery({
  args: { userId: v.optional(v.string()), workflowId: v.optional(v.string()) },
  handler: async (ctx, { userId, workflowId }) => (await totalOf(ctx, userId !== undefined ? `user:${userId}` : `workflow:${workflowId}`))?.bytes ?? 0,
})

/** Deletes the oldest ended runs of an account or a workflow until they take at most `maxBytes` (up to `batch` runs); how many went. */
export const trim = serverMutation({
  args: { userId: v.optional(v.string()), workflowId: v.optional(v.string()), maxBytes: v.number(), batch: v.number() },
  handler: async (ctx, { userId, workflowId, maxBytes, batch }) => {
    let excess = ((await totalOf(ctx, userId !== undefined ? `user:${userId}` : `workflow:${workflowId}`))?.bytes ?? 0) - maxBytes
    if (excess <= 0) return []
    // Unfinished runs (no end time) sort first in the indexes: start above them.
    const oldest = userId !== undefined
      ? ctx.db.query('workflow_runs').withIndex('by_user_and_finished', q => q.eq('user_id', userId).gte('finished_at', 0))
      : ctx.db.query('workflow_runs').withIndex('by_workflow_and_finished', q => q.eq('workflow_id', workflowId!).gte('finished_at', 0))
    const deleted: string[] = []
    for (const row of await oldest.take(batch)) {
      if (excess <= 0) break
      await removeRow(ctx, row)
      excess -= row.size ?? 0
      deleted.push(row.job_id)
    }
    return deleted
  },
})

export const get = serverQuery({
  args: { jobId: v.string() },
  handler: async (ctx, { jobId }) => {
    const row = await byJobId(ctx, jobId)
    return row ? { ...JSON.parse(row.summary), job: JSON.parse(row.job) } : null
  },
})

/**
 * One page of an account's runs, newest first: by workflow or by account, in a start-time range,
 * filtered by status; reads at most `PAGE_SCAN_MAX` rows, then answers with what it has and where
 * the next page starts.
 */
export const list = serverQuery({
  args: {
    userId: v.string(),
    workflowId: v.optional(v.string()),
    statuses: v.optional(v.array(v.string())),
    startedFrom: v.optional(v.number()),
    startedBefore: v.optional(v.number()),
    after: v.optional(v.object({ startedAt: v.number(), jobId: v.string() })),
    limit: v.number(),
  },
  handler: async (ctx, { userId, workflowId, statuses, startedFrom, startedBefore, after, limit }) => {
    let upper = startedBefore
    if (after && (upper === undefined || after.startedAt < upper)) upper = after.startedAt + 1
    const lower = startedFrom ?? 0
    const below = upper ?? Number.MAX_SAFE_INTEGER
    const rows = workflowId === undefined
      ? ctx.db.query('workflow_runs').withIndex('by_user_and_started', q => q.eq('user_id', userId).gte('started_at', lower).lt('started_at', below)).order('desc')
      : ctx.db.query('workflow_runs').withIndex('by_workflow_and_started', q => q.eq('workflow_id', workflowId).gte('started_at', lower).lt('started_at', below)).order('desc')
    const found: Doc<'workflow_runs'>[] = []
    // The indexes end with the job id, so rows come newest first, then by job id (descending): the cursor's order.
    let scanned = 0
    let last: { startedAt: number, jobId: string } | undefined
    let more = false
    for await (const row of rows) {
      if (++scanned > PAGE_SCAN_MAX) {
        more = true
        break
      }
      last = { startedAt: row.started_at, jobId: row.job_id }
      if (after && row.started_at === after.startedAt && row.job_id >= after.jobId) continue
      if (row.user_id !== userId || (statuses && !statuses.includes(row.status))) continue
      found.push(row)
      if (found.length > limit) {
        more = true
        break
      }
    }
    const page = found.slice(0, limit).map(row => JSON.parse(row.summary))
    const end = found.length > limit ? page.at(-1) : last
    return { runs: page, ...(more && end ? { next: { startedAt: end.startedAt, jobId: end.jobId } } : {}) }
  },
})

export const listUnfinished = serverQuery({
  args: { limit: v.number() },
  handler: async (ctx, { limit }) => {
    const rows = await ctx.db.query('workflow_runs').withIndex('by_status_and_started', q => q.eq('status', 'streaming')).take(limit)
    return rows.map(row => JSON.parse(row.summary))
  },
})

export const remove = serverMutation({
  args: { jobId: v.string() },
  handler: async (ctx, { jobId }) => {
    const row = await byJobId(ctx, jobId)
    if (!row) return false
    await removeRow(ctx, row)
    return true
  },
})

/** Deletes up to `batch` runs of a workflow, of an account, or that ended before a time; how many went. */
export const removeMany = serverMutation({
  args: { workflowId: v.optional(v.string()), userId: v.optional(v.string()), finishedBefore: v.optional(v.number()), batch: v.number() },
  handler: async (ctx, { workflowId, userId, finishedBefore, batch }) => {
    const rows = workflowId !== undefined
      ? await ctx.db.query('workflow_runs').withIndex('by_workflow_and_started', q => q.eq('workflow_id', workflowId)).take(batch)
      : userId !== undefined
        ? await ctx.db.query('workflow_runs').withIndex('by_user_and_started', q => q.eq('user_id', userId)).take(batch)
        : finishedBefore !== undefined
          // Unfinished runs (no end time) sort first in the index: start above them.
          ? await ctx.db.query('workflow_runs').withIndex('by_finished', q => q.gte('finished_at', 0).lt('finished_at', finishedBefore)).take(batch)
          : []
    for (const row of rows) await removeRow(ctx, row)
    return rows.map(row => row.job_id)
  },
})
