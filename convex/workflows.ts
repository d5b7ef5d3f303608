/** Saved workflows for the Convex workflow store. Server secret required. */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import type { QueryCtx } from './_generated/server'
import { serverMutation, serverQuery } from './lib/serverGuard'

function toWorkflow(row: Doc<'workflows'>) {
  return { id: row.workflow_id, userId: row.user_id, name: row.name, definition: JSON.parse(row.definition), createdAt: row.created_at, updatedAt: row.updated_at }
}

const find = (ctx: QueryCtx, workflowId: string) => ctx.db.query('workflows').withIndex('by_workflow_id', q => q.eq('workflow_id', workflowId)).unique()

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
  args: { workflowId: v.string(), userId: v.string(), name: v.string(), definition: v.string(), now: v.number() },
  handler: async (ctx, args) => {
    if (await find(ctx, args.workflowId)) throw new Error(`Workflow ${args.workflowId} already exists.`)
    const id = await ctx.db.insert('workflows', { workflow_id: args.workflowId, user_id: args.userId, name: args.name, definition: args.definition, created_at: args.now, updated_at: args.now })
    return toWorkflow((await ctx.db.get(id))!)
  },
})

export const update = serverMutation({
  args: { workflowId: v.string(), name: v.string(), definition: v.string(), now: v.number() },
  handler: async (ctx, { workflowId, name, definition, now }) => {
    const row = await find(ctx, workflowId)
    if (!row) return false
    await ctx.db.patch(row._id, { name, definition, updated_at: now })
    return true
  },
})

export const remove = serverMutation({
  args: { workflowId: v.string() },
  handler: async (ctx, { workflowId }) => {
    const row = await find(ctx, workflowId)
    if (!row) return false
    await ctx.db.delete(row._id)
    return true
  },
})
