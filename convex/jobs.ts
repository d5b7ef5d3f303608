/**
 * Job functions for the Convex job provider. Every function needs the server secret (see
 * lib/serverGuard.ts). Writes take the writing instance as `owner`: once another instance holds
 * the job's lease, the old one's writes are refused (they answer false).
 */
import { paginationOptsValidator } from 'convex/server'
import { v } from 'convex/values'
import { serverMutation, serverQuery } from './lib/serverGuard'
import { activeToolCall, assembleJob, deleteJobRows, findJob, recordToolExecution, replaceActiveToolCalls, toolExecution, writableJob, writeCheckpoint } from './lib/jobRecords'
import { jobError, jobStatus, usage } from './schema'

const owner = v.optional(v.string())

/** Creates a streaming job; fails if the id is taken. */
export const create = serverMutation({
  args: {
    jobId: v.string(),
    userId: v.string(),
    threadId: v.string(),
    messageId: v.string(),
    type: v.union(v.literal('chat'), v.literal('workflow')),
    model: v.string(),
    request: v.optional(v.string()),
    apiKeyCiphertext: v.optional(v.string()),
    now: v.number(),
    owner,
    leaseMs: v.optional(v.number()),
  },
  handler: async (ctx, args) => {
    if (await findJob(ctx, args.jobId)) throw new Error(`Job ${args.jobId} already exists.`)
    await ctx.db.insert('background_jobs', {
      job_id: args.jobId,
      user_id: args.userId,
      thread_id: args.threadId,
      message_id: args.messageId,
      type: args.type,
      model: args.model,
      status: 'streaming',
      content: '',
      reasoning: '',
      chunks_received: 0,
      started_at: args.now,
      updated_at: args.now,
      resume_count: 0,
      request: args.request,
      api_key_ciphertext: args.apiKeyCiphertext,
      lease_owner: args.owner,
      lease_expires_at: args.owner && args.leaseMs ? args.now + args.leaseMs : undefined,
    })
    return args.jobId
  },
})

/** The whole job record, or null. */
export const get = serverQuery({
  args: { jobId: v.string() },
  handler: async (ctx, { jobId }) => {
    const job = await findJob(ctx, jobId)
    return job ? assembleJob(ctx, job) : null
  },
})

/**
 * What a viewer on another instance needs, kept small for a reactive subscription: status,
 * text, counters and the tool calls.
 */
export const watch = serverQuery({
  args: { jobId: v.string() },
  handler: async (ctx, { jobId }) => {
    const job = await findJob(ctx, jobId)
    if (!job) return null
    const { request: _request, checkpoint: _checkpoint, apiKeyCiphertext: _key, ...view } = await assembleJob(ctx, job)
    return view
  },
})

/** Appends streamed text and replaces counters and the active tool calls. */
export const appendProgress = serverMutation({
  args: {
    jobId: v.string(),
    contentChunk: v.optional(v.string()),
    reasoningChunk: v.optional(v.string()),
    chunksReceived: v.optional(v.number()),
    activeToolCalls: v.optional(v.array(activeToolCall)),
    now: v.number(),
    owner,
  },
  handler: async (ctx, args) => {
    const job = await writableJob(ctx, args.jobId, args.owner)
    if (!job) return false
    await ctx.db.patch(job._id, {
      content: args.contentChunk ? job.content + args.contentChunk : job.content,
      reasoning: args.reasoningChunk ? job.reasoning + args.reasoningChunk : job.reasoning,
      chunks_received: args.chunksReceived ?? job.chunks_received,
      updated_at: args.now,
    })
    if (args.activeToolCalls) await replaceActiveToolCalls(ctx, args.jobId, args.activeToolCalls)
    return true
  },
})

/** Adds one executed tool call to its round. */
export const appendToolExecution = serverMutation({
  args: { jobId: v.string(), round: v.number(), execution: toolExecution, now: v.number(), owner },
  handler: async (ctx, args) => {
    const job = await writableJob(ctx, args.jobId, args.owner)
    if (!job) return false
    await recordToolExecution(ctx, args.jobId, args.round, args.execution)
    await ctx.db.patch(job._id, { updated_at: args.now })
    return true
  },
})

/** Rounds, checkpoint (JSON, or null to remove), usage, text rewinds, resume count. */
export const updateMetadata = serverMutation({
  args: {
    jobId: v.string(),
    toolRounds: v.optional(v.array(v.object({ round: v.number(), toolCalls: v.array(toolExecution) }))),
    checkpoint: v.optional(v.union(v.string(), v.null())),
    usage: v.optional(usage),
    content: v.optional(v.string()),
    reasoning: v.optional(v.string()),
    resumeCount: v.optional(v.number()),
    now: v.number(),
    owner,
  },
  handler: async (ctx, args) => {
    const job = await writableJob(ctx, args.jobId, args.owner)
    if (!job) return false
    if (args.toolRounds) {
      for (const round of args.toolRounds) {
        for (const call of round.toolCalls) await recordToolExecution(ctx, args.jobId, round.round, call)
      }
    }
    if (args.checkpoint !== undefined) await writeCheckpoint(ctx, args.jobId, args.checkpoint)
    await ctx.db.patch(job._id, {
      usage: args.usage ?? job.usage,
      content: args.content ?? job.content,
      reasoning: args.reasoning ?? job.reasoning,
      resume_count: args.resumeCount ?? job.resume_count,
      updated_at: args.now,
    })
    return true
  },
})

/** Replaces the workflow state (JSON). */
export const updateWorkflowState = serverMutation({
  args: { jobId: v.string(), state: v.string(), now: v.number(), owner },
  handler: async (ctx, args) => {
    const job = await writableJob(ctx, args.jobId, args.owner)
    if (!job) return false
    await ctx.db.patch(job._id, { workflow_state: args.state, updated_at: args.now })
    return true
  },
})

/**
 * Moves a streaming job to a terminal state with its final text. Unfinished tool calls are
 * marked stopped; the checkpoint, the key and the lease are dropped. False if it had already ended.
 */
export const finish = serverMutation({
  args: {
    jobId: v.string(),
    status: v.union(v.literal('complete'), v.literal('error'), v.literal('aborted'), v.literal('rejected')),
    content: v.optional(v.string()),
    reasoning: v.optional(v.string()),
    chunksReceived: v.optional(v.number()),
    usage: v.optional(usage),
    error: v.optional(jobError),
    finishReason: v.optional(v.string()),
    now: v.number(),
    owner,
  },
  handler: async (ctx, args) => {
    const job = await writableJob(ctx, args.jobId, args.owner)
    if (!job) return false
    await ctx.db.patch(job._id, {
      status: args.status,
      content: args.content ?? job.content,
      reasoning: args.reasoning ?? job.reasoning,
      chunks_received: args.chunksReceived ?? job.chunks_received,
      usage: args.usage ?? job.usage,
      error: args.error,
      finish_reason: args.finishReason ?? (args.status === 'complete' ? 'stop' : args.status),
      updated_at: args.now,
      completed_at: args.now,
      api_key_ciphertext: undefined,
      lease_owner: undefined,
      lease_expires_at: undefined,
    })
    await writeCheckpoint(ctx, args.jobId, null)
    for (const row of await ctx.db.query('job_tool_calls').withIndex('by_job_and_position', q => q.eq('job_id', args.jobId)).collect()) {
      if (row.active && (row.status === 'pending' || row.status === 'running')) {
        await ctx.db.patch(row._id, { status: 'error', error: 'stopped before it finished', finished_at: args.now })
      }
    }
    return true
  },
})

/** A user's jobs, running first then newest, up to `limit` (for the provider's list). */
export const listByUser = serverQuery({
  args: { userId: v.string(), status: v.optional(jobStatus), limit: v.number() },
  handler: async (ctx, { userId, status, limit }) => {
    if (status) {
      const jobs = await ctx.db.query('background_jobs').withIndex('by_user_status', q => q.eq('user_id', userId).eq('status', status)).collect()
      const newest = jobs.sort((a, b) => b.started_at - a.started_at).slice(0, limit)
      return Promise.all(newest.map(job => assembleJob(ctx, job)))
    }
    const running = await ctx.db.query('background_jobs').withIndex('by_user_status', q => q.eq('user_id', userId).eq('status', 'streaming')).collect()
    running.sort((a, b) => b.started_at - a.started_at)
    const recent = await ctx.db.query('background_jobs').withIndex('by_user_and_started', q => q.eq('user_id', userId)).order('desc').take(limit)
    const jobs = [...running, ...recent.filter(job => job.status !== 'streaming')].slice(0, limit)
    return Promise.all(jobs.map(job => assembleJob(ctx, job)))
  },
})

/** One page of a user's jobs, newest first, without tool calls (for long histories). */
export const listPage = serverQuery({
  args: { userId: v.string(), paginationOpts: paginationOptsValidator },
  handler: async (ctx, { userId, paginationOpts }) => {
    const page = await ctx.db.query('background_jobs').withIndex('by_user_and_started', q => q.eq('user_id', userId)).order('desc').paginate(paginationOpts)
    return { ...page, page: await Promise.all(page.page.map(job => assembleJob(ctx, job, { withToolCalls: false }))) }
  },
})

/** Every job still streaming (recovery and lease checks). */
export const listStreaming = serverQuery({
  args: {},
  handler: async (ctx) => {
    const jobs = await ctx.db.query('background_jobs').withIndex('by_status_and_lease', q => q.eq('status', 'streaming')).collect()
    return Promise.all(jobs.map(job => assembleJob(ctx, job)))
  },
})

/** Deletes up to `batch` jobs that finished before `finishedBefore`, with their rows. */
export const cleanupExpired = serverMutation({
  args: { finishedBefore: v.number(), batch: v.optional(v.number()) },
  handler: async (ctx, { finishedBefore, batch = 50 }) => {
    let deleted = 0
    for (const status of ['complete', 'error', 'aborted', 'rejected'] as const) {
      const expired = await ctx.db.query('background_jobs')
        .withIndex('by_status_and_completed', q => q.eq('status', status).lt('completed_at', finishedBefore))
        .take(batch - deleted)
      for (const job of expired) {
        await deleteJobRows(ctx, job.job_id)
        await ctx.db.delete(job._id)
        deleted++
      }
      if (deleted >= batch) return { deleted, hasMore: true }
    }
    return { deleted, hasMore: false }
  },
})
