/** Threads and their messages for the Convex thread store. Server secret required. */
import { v } from 'convex/values'
import type { Doc } from './_generated/dataModel'
import { internalMutation, type MutationCtx, type QueryCtx } from './_generated/server'
import { internal } from './_generated/api'
import { serverMutation, serverQuery } from './lib/serverGuard'
import { chatSettings, jobError, jobStatus, messageAttachment, messageFeedback, usage } from './schema'
import { foldText, matchesAll } from '../shared/search-terms'
import { deleteMessageParts, INLINE_CHARS, readLongField, writeLongField } from './lib/messageParts'

/** What the search indexes read: the text with case and accents folded, as the other stores match (its first 60,000 characters). */
const searchable = (text: string) => foldText(text.slice(0, 60_000))

function toThread(row: Doc<'threads'>) {
  return {
    id: row.thread_id, userId: row.user_id, title: row.title, createdAt: row.created_at, updatedAt: row.updated_at, activeMessageId: row.active_message_id,
    pinned: row.pinned || undefined, folderId: row.folder_id, settings: row.settings,
  }
}

async function toMessage(ctx: QueryCtx, row: Doc<'thread_messages'>) {
  const toolCalls = await readLongField(ctx, row, 'tool_calls')
  return {
    id: row.message_id,
    threadId: row.thread_id,
    role: row.role,
    content: (await readLongField(ctx, row, 'content'))!,
    createdAt: row.created_at,
    parentId: row.parent_id,
    attachments: row.attachments,
    model: row.model,
    jobId: row.job_id,
    status: row.status,
    reasoning: await readLongField(ctx, row, 'reasoning'),
    toolCalls: toolCalls ? JSON.parse(toolCalls) : undefined,
    error: row.error,
    finishReason: row.finish_reason,
    usage: row.usage,
    feedback: row.feedback,
    steers: row.steers ? JSON.parse(row.steers) : undefined,
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

/**
 * What one deleting pass reads at most: Convex allows 16 MiB read and 8,192 documents written per
 * transaction, and a deleted document counts as read again. Reads go in small pages (`take`) so
 * no page reads past the budget.
 */
const DELETE_PASS_BYTES = 6 * 1024 * 1024
const DELETE_PASS_DOCUMENTS = 2_000
const MESSAGES_PAGE = 100
/** More rows than a queue ever holds (the server keeps it at 20). */
const MAX_QUEUE_ROWS = 100
const CHUNKS_PAGE = 2

/**
 * Deletes what is left of a deleted thread (messages, files and their chunks) within one pass's
 * budget; true when nothing is left. A file of many chunks may take several passes.
 */
async function deleteThreadRows(ctx: MutationCtx, threadId: string): Promise<boolean> {
  let bytes = 0
  let documents = 0
  const spent = () => bytes >= DELETE_PASS_BYTES || documents >= DELETE_PASS_DOCUMENTS
  while (!spent()) {
    const messages = await ctx.db.query('thread_messages').withIndex('by_thread_and_created', q => q.eq('thread_id', threadId)).take(MESSAGES_PAGE)
    if (messages.length === 0) break
    for (const message of messages) {
      const parts = (message.content_parts ?? 0) + (message.reasoning_parts ?? 0) + (message.tool_calls_parts ?? 0)
      if (parts > 0 && !await deleteMessageParts(ctx, message.message_id, 4)) {
        // A long message's parts go a few at a time; the message itself once they are gone.
        bytes += 2 * 5 * 200_000 * 3
        continue
      }
      bytes += 2 * (message.content.length + (message.reasoning?.length ?? 0) + parts * 200_000) * 3
      documents++
      await ctx.db.delete(message._id)
    }
  }
  while (!spent()) {
    const attachment = await ctx.db.query('thread_attachments').withIndex('by_thread', q => q.eq('thread_id', threadId)).first()
    if (!attachment) return true
    const chunks = await ctx.db.query('thread_attachment_chunks').withIndex('by_attachment_and_index', q => q.eq('attachment_id', attachment.attachment_id)).take(CHUNKS_PAGE)
    for (const chunk of chunks) {
      bytes += 2 * chunk.bytes.byteLength
      documents++
      await ctx.db.delete(chunk._id)
    }
    if (chunks.length === 0) {
      documents++
      await ctx.db.delete(attachment._id)
    }
  }
  return false
}

/**
 * Deletes the thread: it is gone from every list at once; its messages and files go in passes a
 * transaction can hold, the rest in scheduled passes (Convex runs a scheduled function once the
 * transaction that scheduled it commits, and retries it until it does).
 */
export const remove = serverMutation({
  args: { threadId: v.string() },
  handler: async (ctx, { threadId }) => {
    const thread = await findThread(ctx, threadId)
    if (!thread) return false
    await ctx.db.delete(thread._id)
    for (const item of await ctx.db.query('thread_queue').withIndex('by_thread_and_position', q => q.eq('thread_id', threadId)).take(MAX_QUEUE_ROWS)) await ctx.db.delete(item._id)
    if (!await deleteThreadRows(ctx, threadId)) await ctx.scheduler.runAfter(0, internal.threads.removeRest, { threadId })
    return true
  },
})

/** One more pass of a deleted thread's rows (scheduled by `remove`, and by itself until done). */
export const removeRest = internalMutation({
  args: { threadId: v.string() },
  handler: async (ctx, { threadId }) => {
    if (!await deleteThreadRows(ctx, threadId)) await ctx.scheduler.runAfter(0, internal.threads.removeRest, { threadId })
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
    const content = await writeLongField(ctx, args.messageId, 'content', args.content)
    const id = await ctx.db.insert('thread_messages', {
      message_id: args.messageId, thread_id: args.threadId, role: args.role, content: args.content.slice(0, INLINE_CHARS), created_at: args.now,
      parent_id: args.parentId, attachments: args.attachments, model: args.model, job_id: args.jobId, status: args.status, user_id: thread.user_id, search_text: searchable(args.content),
      ...content,
    })
    if (args.now > thread.updated_at) await ctx.db.patch(thread._id, { updated_at: args.now })
    return toMessage(ctx, (await ctx.db.get(id))!)
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
    usage: v.optional(usage),
    jobId: v.optional(v.string()),
    steers: v.optional(v.string()),
    attachments: v.optional(v.array(messageAttachment)),
  },
  handler: async (ctx, { messageId, toolCalls, finishReason, jobId, steers, attachments, ...fields }) => {
    const message = await findMessage(ctx, messageId)
    if (!message) return false
    let patch: Partial<Doc<'thread_messages'>> = {}
    if (fields.content !== undefined) {
      patch = { ...patch, ...await writeLongField(ctx, messageId, 'content', fields.content) }
      patch.search_text = searchable(fields.content)
    }
    if (fields.status !== undefined) patch.status = fields.status
    if (fields.reasoning !== undefined) patch = { ...patch, ...await writeLongField(ctx, messageId, 'reasoning', fields.reasoning) }
    if (fields.error !== undefined) patch.error = fields.error
    if (toolCalls !== undefined) patch = { ...patch, ...await writeLongField(ctx, messageId, 'tool_calls', toolCalls) }
    if (finishReason !== undefined) patch.finish_reason = finishReason
    if (fields.usage !== undefined) patch.usage = fields.usage
    if (jobId !== undefined) patch.job_id = jobId
    if (steers !== undefined) patch.steers = steers
    if (attachments !== undefined) patch.attachments = attachments
    await ctx.db.patch(message._id, patch)
    return true
  },
})

export const getMessage = serverQuery({
  args: { messageId: v.string() },
  handler: async (ctx, { messageId }) => {
    const message = await findMessage(ctx, messageId)
    return message ? toMessage(ctx, message) : null
  },
})

/** Oldest first. */
export const listMessages = serverQuery({
  args: { threadId: v.string() },
  handler: async (ctx, { threadId }) => {
    const rows = await ctx.db.query('thread_messages').withIndex('by_thread_and_created', q => q.eq('thread_id', threadId)).collect()
    return Promise.all(rows.map(row => toMessage(ctx, row)))
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
    const hits = new Map<string, { thread: ReturnType<typeof toThread>, message?: Awaited<ReturnType<typeof toMessage>> }>()
    const titles = await ctx.db.query('threads').withSearchIndex('search_title', q => q.search('search_title', text).eq('user_id', userId)).take(limit * 5)
    for (const row of titles) if (hits.size < limit && inFolder(row) && matchesAll(row.title, terms)) hits.set(row.thread_id, { thread: toThread(row) })
    const found = await ctx.db.query('thread_messages').withSearchIndex('search_content', q => q.search('search_text', text).eq('user_id', userId)).take(limit * 10)
    for (const row of found) {
      if (hits.size >= limit) break
      if (hits.has(row.thread_id) || !matchesAll(row.content, terms)) continue
      const thread = await findThread(ctx, row.thread_id)
      if (thread && thread.user_id === userId && inFolder(thread)) hits.set(row.thread_id, { thread: toThread(thread), message: await toMessage(ctx, row) })
    }
    return [...hits.values()]
  },
})

const findQueued = (ctx: QueryCtx, itemId: string) => ctx.db.query('thread_queue').withIndex('by_item_id', q => q.eq('item_id', itemId)).unique()

function toQueued(row: Doc<'thread_queue'>) {
  return {
    id: row.item_id, threadId: row.thread_id, userId: row.user_id, position: row.position, content: row.content, model: row.model, createdAt: row.created_at, updatedAt: row.updated_at,
    ...(row.tools ? { tools: row.tools } : {}), ...(row.api_key_ciphertext ? { apiKeyCiphertext: row.api_key_ciphertext } : {}),
    ...(row.steer_job_id ? { steerJobId: row.steer_job_id } : {}), ...(row.steer_node_id ? { steerNodeId: row.steer_node_id } : {}), ...(row.blocked ? { blocked: row.blocked } : {}), ...(row.sending ? { sending: row.sending } : {}),
  }
}

/** A thread's queued messages, first to go first. */
export const queueList = serverQuery({
  args: { threadId: v.string() },
  handler: async (ctx, { threadId }) => {
    const rows = await ctx.db.query('thread_queue').withIndex('by_thread_and_position', q => q.eq('thread_id', threadId)).take(MAX_QUEUE_ROWS)
    return rows.sort((a, b) => a.position - b.position || a.created_at - b.created_at).map(toQueued)
  },
})

export const queueGet = serverQuery({
  args: { itemId: v.string() },
  handler: async (ctx, { itemId }) => {
    const row = await findQueued(ctx, itemId)
    return row ? toQueued(row) : null
  },
})

export const queueAdd = serverMutation({
  args: {
    itemId: v.string(), threadId: v.string(), userId: v.string(), position: v.number(), content: v.string(), model: v.string(),
    tools: v.optional(v.array(v.string())), apiKeyCiphertext: v.optional(v.string()), now: v.number(),
    steerJobId: v.optional(v.string()), steerNodeId: v.optional(v.string()),
  },
  handler: async (ctx, args) => {
    if (await findQueued(ctx, args.itemId)) throw new Error(`Queued message ${args.itemId} already exists.`)
    await ctx.db.insert('thread_queue', {
      item_id: args.itemId, thread_id: args.threadId, user_id: args.userId, position: args.position, content: args.content, model: args.model,
      tools: args.tools, api_key_ciphertext: args.apiKeyCiphertext, created_at: args.now, updated_at: args.now,
      ...(args.steerJobId ? { steer_job_id: args.steerJobId } : {}), ...(args.steerNodeId ? { steer_node_id: args.steerNodeId } : {}),
    })
  },
})

/** Changes a queued message whose send has not begun (`null` clears); false when gone or being sent. */
export const queueUpdate = serverMutation({
  args: {
    itemId: v.string(), now: v.number(), content: v.optional(v.string()), position: v.optional(v.number()),
    steerJobId: v.optional(v.union(v.string(), v.null())), blocked: v.optional(v.union(v.string(), v.null())),
  },
  handler: async (ctx, { itemId, now, content, position, steerJobId, blocked }) => {
    const row = await findQueued(ctx, itemId)
    if (!row || row.sending) return false
    await ctx.db.patch(row._id, {
      updated_at: now,
      ...(content !== undefined ? { content } : {}),
      ...(position !== undefined ? { position } : {}),
      ...(steerJobId !== undefined ? { steer_job_id: steerJobId ?? undefined } : {}),
      ...(blocked !== undefined ? { blocked: blocked ?? undefined } : {}),
    })
    return true
  },
})

/** Marks a send begun unless one had (one caller wins), or (`blocked`) lets it wait again. */
export const queueClaim = serverMutation({
  args: { itemId: v.string(), now: v.number(), sending: v.optional(v.object({ answerId: v.string(), jobId: v.string() })), blocked: v.optional(v.string()) },
  handler: async (ctx, { itemId, now, sending, blocked }) => {
    const row = await findQueued(ctx, itemId)
    if (!row) return false
    if (sending) {
      if (row.sending) return false
      await ctx.db.patch(row._id, { sending, blocked: undefined, updated_at: now })
    } else {
      await ctx.db.patch(row._id, { sending: undefined, blocked, updated_at: now })
    }
    return true
  },
})

export const queueRemove = serverMutation({
  args: { itemId: v.string() },
  handler: async (ctx, { itemId }) => {
    const row = await findQueued(ctx, itemId)
    if (!row) return false
    await ctx.db.delete(row._id)
    return true
  },
})

/** Threads with queued messages (at most `limit`). */
export const queueThreads = serverQuery({
  args: { limit: v.number() },
  handler: async (ctx, { limit }) => {
    const threads = new Set<string>()
    for await (const row of ctx.db.query('thread_queue')) {
      threads.add(row.thread_id)
      if (threads.size >= limit) break
    }
    return [...threads]
  },
})
