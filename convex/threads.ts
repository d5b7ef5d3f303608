/** Threads and their messages for the Convex thread store. Server secret required. */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import type { MutationCtx, QueryCtx } from './_generated/server'
import { serverMutation, serverQuery } from './lib/serverGuard'
import { chatSettings, jobError, jobStatus, messageAttachment, messageFeedback } from './schema'
import { foldText, matchesAll } from '../shared/search-terms'

/** What the search indexes read: the text with case and accents folded, as the other stores match. */
const searchable = (text: string) => foldText(text.slice(0, 100_000))

function toThread(row: Doc<'threads'>) {
  return {
    id: row.thread_id, userId: row.user_id, title: row.title, createdAt: row.created_at, updatedAt: row.updated_at, activeMessageId: row.active_message_id,
    pinned: row.pinned || undefined, folderId: row.folder_id, settings: row.settings,
  }
}

function toMessage(row: Doc<'thread_messages'>) {
  return {
    id: row.message_id,
    threadId: row.thread_id,
    role: row.role,
    content: row.content,
    createdAt: row.created_at,
    parentId: row.parent_id,
    attachments: row.attachments,
    model: row.model,
    jobId: row.job_id,
    status: row.status,
    reasoning: row.reasoning,
    toolCalls: row.tool_calls ? JSON.parse(row.tool_calls) : undefined,
    error: row.error,
    finishReason: row.finish_reason,
    feedback: row.feedback,
  }
}

const findThread = (ctx: QueryCtx, threadId: string) => ctx.db.query('threads').withIndex('by_thread_id', q => q.eq('thread_id', threadId)).unique()
const findMessage = (ctx: QueryCtx, messageId: string) => ctx.db.query('thread_messages').withIndex('by_message_id', q => q.eq('message_id', messageId)).unique()

export const create = serverMutation({
  args: { threadId: v.string(), userId: v.string(), title: v.string(), now: v.number() },
  handler: async (ctx, args) => {
    if (await findThread(ctx, args.threadId)) throw new Error(`Thread ${args.threadId} already exists.`)
    const id = await ctx.db.insert('threads', { thread_id: args.threadId, user_id: args.userId, title: args.title, created_at: args.now, updated_at: args.now, search_title: searchable(args.title) })
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

/** Pinned first, then most recently active first; with `folderId`, that folder's only. */
export const list = serverQuery({
  args: { userId: v.string(), limit: v.number(), folderId: v.optional(v.string()) },
  handler: async (ctx, { userId, limit, folderId }) => {
    if (folderId !== undefined) {
      const rows = await ctx.db.query('threads').withIndex('by_user_folder_and_updated', q => q.eq('user_id', userId).eq('folder_id', folderId)).order('desc').take(limit)
      return rows.map(toThread).sort((a, b) => Number(b.pinned ?? false) - Number(a.pinned ?? false))
    }
    const pinned = await ctx.db.query('threads').withIndex('by_user_pinned_and_updated', q => q.eq('user_id', userId).eq('pinned', true)).order('desc').take(limit)
    const rows = [...pinned]
    for await (const row of ctx.db.query('threads').withIndex('by_user_and_updated', q => q.eq('user_id', userId)).order('desc')) {
      if (rows.length >= limit) break
      if (!row.pinned) rows.push(row)
    }
    return rows.map(toThread)
  },
})

/** Pins, files or sets how the thread asks the model; `null` clears. Leaves its place by activity alone. */
export const update = serverMutation({
  args: { threadId: v.string(), pinned: v.optional(v.boolean()), folderId: v.optional(v.union(v.string(), v.null())), settings: v.optional(v.union(chatSettings, v.null())) },
  handler: async (ctx, { threadId, pinned, folderId, settings }) => {
    const thread = await findThread(ctx, threadId)
    if (!thread) return false
    const patch: Partial<Doc<'threads'>> = {}
    if (pinned !== undefined) patch.pinned = pinned || undefined
    if (folderId !== undefined) patch.folder_id = folderId ?? undefined
    if (settings !== undefined) patch.settings = settings ?? undefined
    await ctx.db.patch(thread._id, patch)
    return true
  },
})

/** Sets or (null) takes back the 👍 / 👎 on a message. */
export const setFeedback = serverMutation({
  args: { messageId: v.string(), feedback: v.union(messageFeedback, v.null()) },
  handler: async (ctx, { messageId, feedback }) => {
    const message = await findMessage(ctx, messageId)
    if (!message) return false
    await ctx.db.patch(message._id, { feedback: feedback ?? undefined, feedback_at: feedback?.at })
    return true
  },
})

/** Feedback given at or after `since`, newest first, at most `limit`. */
export const listFeedback = serverQuery({
  args: { since: v.number(), limit: v.number() },
  handler: async (ctx, { since, limit }) => {
    const rows = await ctx.db.query('thread_messages').withIndex('by_feedback_at', q => q.gte('feedback_at', since)).order('desc').take(limit)
    return rows.filter(row => row.feedback).map(row => ({ ...row.feedback!, model: row.model ?? 'unknown' }))
  },
})

export const rename = serverMutation({
  args: { threadId: v.string(), title: v.string(), now: v.number() },
  handler: async (ctx, { threadId, title, now }) => {
    const thread = await findThread(ctx, threadId)
    if (!thread) return false
    await ctx.db.patch(thread._id, { title, updated_at: now, search_title: searchable(title) })
    return true
  },
})

/** Shows the branch ending at `messageId`. */
export const setActiveMessage = serverMutation({
  args: { threadId: v.string(), messageId: v.string() },
  handler: async (ctx, { threadId, messageId }) => {
    const thread = await findThread(ctx, threadId)
    if (!thread) return false
    await ctx.db.patch(thread._id, { active_message_id: messageId })
    return true
  },
})

async function deleteAttachmentChunks(ctx: MutationCtx, attachmentId: string) {
  for (const chunk of await ctx.db.query('thread_attachment_chunks').withIndex('by_attachment_and_index', q => q.eq('attachment_id', attachmentId)).collect()) {
    await ctx.db.delete(chunk._id)
  }
}

/** Stores one chunk of a file's bytes, before `addAttachment` records the file. */
export const addAttachmentChunk = serverMutation({
  args: { attachmentId: v.string(), index: v.number(), bytes: v.bytes() },
  handler: async (ctx, { attachmentId, index, bytes }) => {
    await ctx.db.insert('thread_attachment_chunks', { attachment_id: attachmentId, index, bytes })
  },
})

/** Records a file whose `chunks` chunks are stored; a thread that is gone takes its chunks with it. */
export const addAttachment = serverMutation({
  args: { attachment: messageAttachment, threadId: v.string(), userId: v.string(), now: v.number(), chunks: v.number() },
  handler: async (ctx, { attachment, threadId, userId, now, chunks }) => {
    if (!await findThread(ctx, threadId)) {
      await deleteAttachmentChunks(ctx, attachment.id)
      throw new Error(`Thread ${threadId} does not exist.`)
    }
    await ctx.db.insert('thread_attachments', {
      attachment_id: attachment.id, thread_id: threadId, user_id: userId, name: attachment.name, media_type: attachment.mediaType,
      kind: attachment.kind, size: attachment.size, created_at: now, chunks,
    })
  },
})

/** A file's description, its thread and how many chunks hold its bytes, or null. */
export const getAttachment = serverQuery({
  args: { attachmentId: v.string() },
  handler: async (ctx, { attachmentId }) => {
    const row = await ctx.db.query('thread_attachments').withIndex('by_attachment_id', q => q.eq('attachment_id', attachmentId)).unique()
    if (!row) return null
    return {
      attachment: { id: row.attachment_id, name: row.name, mediaType: row.media_type, kind: row.kind, size: row.size },
      threadId: row.thread_id, userId: row.user_id, createdAt: row.created_at, chunks: row.chunks,
    }
  },
})

/** One chunk of a file's bytes. */
export const attachmentChunk = serverQuery({
  args: { attachmentId: v.string(), index: v.number() },
  handler: async (ctx, { attachmentId, index }) => {
    const chunk = await ctx.db.query('thread_attachment_chunks').withIndex('by_attachment_and_index', q => q.eq('attachment_id', attachmentId).eq('index', index)).unique()
    return chunk?.bytes ?? null
  },
})

/** The bytes of every file a person keeps. */
export const attachmentBytes = serverQuery({
  args: { userId: v.string() },
  handler: async (ctx, { userId }) => {
    let total = 0
    for await (const row of ctx.db.query('thread_attachments').withIndex('by_user', q => q.eq('user_id', userId))) total += row.size
    return total
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
    for (const attachment of await ctx.db.query('thread_attachments').withIndex('by_thread', q => q.eq('thread_id', threadId)).collect()) {
      await deleteAttachmentChunks(ctx, attachment.attachment_id)
      await ctx.db.delete(attachment._id)
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
    parentId: v.optional(v.string()),
    attachments: v.optional(v.array(messageAttachment)),
    model: v.optional(v.string()),
    jobId: v.optional(v.string()),
    status: v.optional(jobStatus),
  },
  handler: async (ctx, args) => {
    const thread = await findThread(ctx, args.threadId)
    if (!thread) throw new Error(`Thread ${args.threadId} does not exist.`)
    const id = await ctx.db.insert('thread_messages', {
      message_id: args.messageId, thread_id: args.threadId, role: args.role, content: args.content, created_at: args.now,
      parent_id: args.parentId, attachments: args.attachments, model: args.model, job_id: args.jobId, status: args.status, user_id: thread.user_id, search_text: searchable(args.content),
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
    if (fields.content !== undefined) {
      patch.content = fields.content
      patch.search_text = searchable(fields.content)
    }
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

/**
 * A person's conversations whose title or messages hold every one of `terms` (Convex full-text
 * search finds candidates; each is checked for every word, as the other stores match), one hit per
 * conversation: titles first, then messages by relevance.
 */
export const search = serverQuery({
  args: { userId: v.string(), terms: v.array(v.string()), limit: v.number(), folderId: v.optional(v.string()) },
  handler: async (ctx, { userId, terms, limit, folderId }) => {
    const inFolder = (row: Doc<'threads'>) => folderId === undefined || row.folder_id === folderId
    const text = terms.join(' ')
    const hits = new Map<string, { thread: ReturnType<typeof toThread>, message?: ReturnType<typeof toMessage> }>()
    const titles = await ctx.db.query('threads').withSearchIndex('search_title', q => q.search('search_title', text).eq('user_id', userId)).take(limit * 5)
    for (const row of titles) if (hits.size < limit && inFolder(row) && matchesAll(row.title, terms)) hits.set(row.thread_id, { thread: toThread(row) })
    const found = await ctx.db.query('thread_messages').withSearchIndex('search_content', q => q.search('search_text', text).eq('user_id', userId)).take(limit * 10)
    for (const row of found) {
      if (hits.size >= limit) break
      if (hits.has(row.thread_id) || !matchesAll(row.content, terms)) continue
      const thread = await findThread(ctx, row.thread_id)
      if (thread && thread.user_id === userId && inFolder(thread)) hits.set(row.thread_id, { thread: toThread(thread), message: toMessage(row) })
    }
    return [...hits.values()]
  },
})
