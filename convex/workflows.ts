/** Saved workflows and their versions for the Convex workflow store. Server secret required. */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import type { MutationCtx, QueryCtx } from './_generated/server'
import { serverMutation, serverQuery } from './lib/serverGuard'

/** Versions kept per workflow (server/lib/stores/workflows/workflow-store.ts: WORKFLOW_VERSIONS_KEPT). */
const VERSIONS_KEPT = 100

function toWorkflow(row: Doc<'workflows'>) {
  return { id: row.workflow_id, userId: row.user_id, name: row.name, definition: JSON.parse(row.definition), createdAt: row.created_at, updatedAt: row.updated_at, version: row.version ?? 1 }
}

function toSummary(row: Doc<'workflow_versions'>) {
  return { workflowId: row.workflow_id, version: row.version, name: row.name, createdAt: row.created_at, createdBy: row.created_by, ...(row.note ? { note: row.note } : {}) }
}

const find = (ctx: QueryCtx, workflowId: string) => ctx.db.query('workflows').withIndex('by_workflow_id', q => q.eq('workflow_id', workflowId)).unique()

const versionsOf = (ctx: QueryCtx, workflowId: string) => ctx.db.query('workflow_versions').withIndex('by_workflow_and_version', q => q.eq('workflow_id', workflowId))

/** Records `row`'s current definition as its version `version`. */
async function keepVersion(ctx: MutationCtx, row: Doc<'workflows'>, version: number, by: string, note?: string): Promise<void> {
  await ctx.db.insert('workflow_versions', { workflow_id: row.workflow_id, version, name: row.name, definition: row.definition, created_at: row.updated_at, created_by: by, ...(note ? { note } : {}) })
}

/** A user's workflows, most recently changed first. */
export const list = serverQuery({
  args: { userId: v.string() },
  handler: async (ctx, { userId }) => {
    const rows = await ctx.db.query('workflows').withIndex('by_user_and_updated', q => q.eq('user_id', userId)).order('desc').take(200)
    return rows.map(toWorkflow)
  },
})

export const get = serverQuery({
  args: { workflowId: v.string() },
  handler: async (ctx, { workflowId }) => {
    const row = await find(ctx, workflowId)
    return row ? toWorkflow(row) : null
  },
})

export const create = serverMutation({
  args: { workflowId: v.string(), userId: v.string(), name: v.string(), definition: v.string(), now: v.number(), note: v.optional(v.string()) },
  handler: async (ctx, args) => {
    if (await find(ctx, args.workflowId)) throw new Error(`Workflow ${args.workflowId} already exists.`)
    const id = await ctx.db.insert('workflows', { workflow_id: args.workflowId, user_id: args.userId, name: args.name, definition: args.definition, created_at: args.now, updated_at: args.now, version: 1 })
    const row = (await ctx.db.get(id))!
    await keepVersion(ctx, row, 1, args.userId, args.note)
    return toWorkflow(row)
  },
})

/** Saves the next version; a workflow saved before versions first keeps what it had as version 1. */
export const update = serverMutation({
  args: { workflowId: v.string(), name: v.string(), definition: v.string(), now: v.number(), by: v.string(), note: v.optional(v.string()) },
  handler: async (ctx, { workflowId, name, definition, now, by, note }) => {
    const row = await find(ctx, workflowId)
    if (!row) return false
    const current = row.version ?? 1
    if (row.version === undefined && !(await versionsOf(ctx, workflowId).first())) await keepVersion(ctx, row, 1, row.user_id)
    await ctx.db.patch(row._id, { name, definition, updated_at: now, version: current + 1 })
    await keepVersion(ctx, (await ctx.db.get(row._id))!, current + 1, by, note)
    const dropped = await ctx.db.query('workflow_versions').withIndex('by_workflow_and_version', q => q.eq('workflow_id', workflowId).lte('version', current + 1 - VERSIONS_KEPT)).take(10)
    for (const old of dropped) await ctx.db.delete(old._id)
    return true
  },
})

/** A workflow's versions, newest first, without their definitions. */
export const listVersions = serverQuery({
  args: { workflowId: v.string() },
  handler: async (ctx, { workflowId }) => {
    const rows = await versionsOf(ctx, workflowId).order('desc').take(VERSIONS_KEPT)
    return rows.map(toSummary)
  },
})

export const getVersion = serverQuery({
  args: { workflowId: v.string(), version: v.number() },
  handler: async (ctx, { workflowId, version }) => {
    const row = await ctx.db.query('workflow_versions').withIndex('by_workflow_and_version', q => q.eq('workflow_id', workflowId).eq('version', version)).unique()
    return row ? { ...toSummary(row), definition: JSON.parse(row.definition) } : null
  },
})

export const remove = serverMutation({
  args: { workflowId: v.string() },
  handler: async (ctx, { workflowId }) => {
    const row = await find(ctx, workflowId)
    if (!row) return false
    for (const version of await versionsOf(ctx, workflowId).take(VERSIONS_KEPT + 10)) await ctx.db.delete(version._id)
    await ctx.db.delete(row._id)
    return true
  },
})
