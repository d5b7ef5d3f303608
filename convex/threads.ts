/** Threads and their messages for the Convex thread store. Server secret required. */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import type { QueryCtx } from './_generated/server'
import { serverMutation, serverQuery } from './lib/serverGuard'
import { jobError, jobStatus } from './schema'

function toThread(row: Doc<'threads'>) {
  return { id: row.thread_id, userId: row.user_id, title: row.title, createdAt: row.created_at, updatedAt: row.updated_at }
}

function toMessage(row: Doc<'thread_messages'>) {
  return {
    id: row.message_id,
    threadId: row.thread_id,
    role: row.role,
    content: row.content,
    createdAt: row.created_at,
    model: row.model,
    jobId: row.job_id,
    status: row.status,
    reasoning: row.reasoning,
    toolCalls: row.tool_calls ? JSON.parse(row.tool_calls) : undefined,
    error: row.error,
    finishReason: row.finish_reason,
  }
}

const findThread = (ctx: QueryCtx, threadId: string) => ctx.db.query('threads').withIndex('by_thread_id', q => q.eq('thread_id', threadId)).unique()
const findMessage = (ctx: QueryCtx, messageId: string) => ctx.db.query('thread_messages').withIndex('by_message_id', q => q.eq('message_id', messageId)).unique()

export const create = serverMutation({
  args: { threadId: v.string(), userId: v.string(), title: v.string(), now: v.number() },
  handler: async (ctx, args) => {
    if (await findThread(ctx, args.threadId)) throw new Error(`Thread ${args.threadId} already exists.`)
    const id = await ctx.db.insert('threads', { thread_id: args.threadId, user_id: args.userId, title: args.title, created_at: args.now, updated_at: args.now })
    return toThread((await ctx.db.get(id))!)
  },
})

export const get = serverQuery({
  args: { threadId: v.string() },
  handler: async (ctx, { threadId }) => {
    const thread = await findThread(ctx, threadId)
    return thread ? toThread(thread) : null
  },
})

/** Most recently active first. */
export const list = serverQuery({
  args: { userId: v.string(), limit: v.number() },
  handler: async (ctx, { userId, limit }) => {
    const rows = await ctx.db.query('threads').withIndex('by_user_and_updated', q => q.eq('user_id', userId)).order('desc').take(limit)
    return rows.map(toThread)
  },
})

export const rename = serverMutation({
  args: { threadId: v.string(), title: v.string(), now: v.number() },
  handler: async (ctx, { threadId, title, now }) => {
    const thread = await findThread(ctx, threadId)
    if (!thread) return false
    await ctx.db.patch(thread._id, { title, updated_at: now })
    return true
  },
})

/** Deletes the thread and its messages. */
export const remove = serverMutation({
  args: { threadId: v.string() },
  handler: async (ctx, { threadId }) => {
    const thread = await findThread(ctx, threadId)
    if (!thread) return false
    for (const message of await ctx.db.query('thread_messages').withIndex('by_thread_and_created', q => q.eq('thread_id', threadId)).collect()) {
      await ctx.db.delete(message._id)
    }
    await ctx.db.delete(thread._id)
    return true
  },
})

export const appendMessage = serverMutation({
  args: {
    messageId: v.string(),
    threadId: v.string(),
    role: v.union(v.literal('user'), v.literal('assistant')),
    content: v.string(),
    now: v.number(),
    model: v.optional(v.string()),
    jobId: v.optional(v.string()),
    status: v.optional(jobStatus),
  },
  handler: async (ctx, args) => {
    const thread = await findThread(ctx, args.threadId)
    if (!thread) throw new Error(`Thread ${args.threadId} does not exist.`)
    const id = await ctx.db.insert('thread_messages', {
      message_id: args.messageId, thread_id: args.threadId, role: args.role, content: args.content, created_at: args.now,
      model: args.model, job_id: args.jobId, status: args.status,
    })
    if (args.now > thread.updated_at) await ctx.db.patch(thread._id, { updated_at: args.now })
    return toMessage((await ctx.db.get(id))!)
  },
})

export const updateMessage = serverMutation({
  args: {
    messageId: v.string(),
    content: v.optional(v.string()),
    status: v.optional(jobStatus),
    reasoning: v.optional(v.string()),
    toolCalls: v.optional(v.string()),
    error: v.optional(jobError),
    finishReason: v.optional(v.string()),
    jobId: v.optional(v.string()),
  },
  handler: async (ctx, { messageId, toolCalls, finishReason, jobId, ...fields }) => {
    const message = await findMessage(ctx, messageId)
    if (!message) return false
    const patch: Partial<Doc<'thread_messages'>> = {}
    if (fields.content !== undefined) patch.content = fields.content
    if (fields.status !== undefined) patch.status = fields.status
    if (fields.reasoning !== undefined) patch.reasoning = fields.reasoning
    if (fields.error !== undefined) patch.error = fields.error
    if (toolCalls !== undefined) patch.tool_calls = toolCalls
    if (finishReason !== undefined) patch.finish_reason = finishReason
    if (jobId !== undefined) patch.job_id = jobId
    await ctx.db.patch(message._id, patch)
    return true
  },
})

export const getMessage = serverQuery({
  args: { messageId: v.string() },
  handler: async (ctx, { messageId }) => {
    const message = await findMessage(ctx, messageId)
    return message ? toMessage(message) : null
  },
})

/** Oldest first. */
export const listMessages = serverQuery({
  args: { threadId: v.string() },
  handler: async (ctx, { threadId }) => {
    const rows = await ctx.db.query('thread_messages').withIndex('by_thread_and_created', q => q.eq('thread_id', threadId)).collect()
    return rows.map(toMessage)
  },
})
