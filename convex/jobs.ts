/**
 * Job functions for the Convex job provider. Every function needs the server secret (see
 * lib/serverGuard.ts). Writes take the writing instance as `owner`: once another instance holds
 * the job's lease, the old one's writes are refused (they answer false).
 */
import { paginationOptsValidator } from 'convex/server'
import { v } from 'convex/values'
import { serverMutation, serverQuery } from './lib/serverGuard'
import type { Doc } from './_generated/dataModel'
import type { MutationCtx } from './_generated/server'
import { activeToolCall, assembleJob, deleteJobRows, extendLease, findJob, findRequest, recordToolExecution, replaceActiveToolCalls, toolExecution, writableJob, writeCheckpoint, type ActiveToolCallArg } from './lib/jobRecords'
import { appendJobText, chunkedLength, readJobText, replaceJobText, type JobTextState } from './lib/jobText'
import { readSmallJobBlob, writeJobBlob } from './lib/jobBlobs'
import { freeSlot, parkSlot, refusedCap, SLOT_GRACE_MS, takeSlot } from './lib/jobSlots'
import { jobError, jobStatus, usage } from './schema'
import { appendJobEvents, deleteJobEvents, readJobEvents, storedEvent, type StoredEventArg } from './lib/jobEvents'
import { STOPPED_CALL_ERROR } from '../shared/job-state'

const owner = v.optional(v.string())

/**
 * Creates a streaming job; fails if the id is taken. With `caps`, the job takes a running slot
 * counted across instances, or is refused (`{ refused }`) when its user or the deployment is full.
 */
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
    caps: v.optional(v.object({ user: v.number(), total: v.number() })),
  },
  handler: async (ctx, args): Promise<{ refused: 'user' | 'server', limit: number } | string> => {
    if (await findJob(ctx, args.jobId)) throw new Error(`Job ${args.jobId} already exists.`)
    const now = Date.now()
    if (args.caps) {
      const refused = await refusedCap(ctx, args.userId, args.caps, now)
      if (refused) return { refused: refused.scope, limit: refused.limit }
      await takeSlot(ctx, args.jobId, args.userId, now + Math.max(args.leaseMs ?? 0, SLOT_GRACE_MS))
    }
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
      content_length: 0,
      reasoning_length: 0,
      chunks_received: 0,
      started_at: args.now,
      updated_at: args.now,
      resume_count: 0,
      api_key_ciphertext: args.apiKeyCiphertext,
      lease_owner: args.owner,
      lease_expires_at: args.owner && args.leaseMs ? Date.now() + args.leaseMs : undefined,
    })
    if (args.request !== undefined) await writeJobBlob(ctx, args.jobId, 'request', args.request)
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

/** A viewer's place in a job's text: its generation and how much of each kind it has. */
const textCursor = v.object({ generation: v.number(), content: v.number(), reasoning: v.number() })

/**
 * What a viewer on another instance needs since `since`: status, counters, the tool calls, and the
 * text after its cursor (all of it when it has none or the text was rewritten since). Small
 * whatever the answer's length, so polling it costs what is new.
 */
export const watch = serverQuery({
  args: { jobId: v.string(), since: v.optional(textCursor) },
  handler: async (ctx, { jobId, since }) => {
    const job = await findJob(ctx, jobId)
    if (!job) return null
    const { request: _request, checkpoint: _checkpoint, apiKeyCiphertext: _key, ...view } = await assembleJob(ctx, job, { withText: false, withLargeValues: false })
    const generation = job.text_generation ?? 0
    const from = since && since.generation === generation ? since : { content: 0, reasoning: 0 }
    const content = await readJobText(ctx, job, 'content', from.content)
    const reasoning = await readJobText(ctx, job, 'reasoning', from.reasoning)
    return {
      job: view,
      restarted: from !== since,
      content,
      reasoning,
      cursor: { generation, content: from.content + content.length, reasoning: from.reasoning + reasoning.length },
    }
  },
})

/** A job's run log from event `fromSeq` on (at most `limit`), and the last number kept; null for an unknown job. */
export const events = serverQuery({
  args: { jobId: v.string(), fromSeq: v.number(), limit: v.number() },
  handler: async (ctx, { jobId, fromSeq, limit }) => {
    const job = await findJob(ctx, jobId)
    if (!job) return null
    return { events: await readJobEvents(ctx, jobId, fromSeq, limit), lastSeq: job.event_seq ?? 0, status: job.status }
  },
})

/** One progress write: text to append, counters, the active tool calls. */
const progress = {
  contentChunk: v.optional(v.string()),
  reasoningChunk: v.optional(v.string()),
  chunksReceived: v.optional(v.number()),
  activeToolCalls: v.optional(v.array(activeToolCall)),
  /** The run log's events viewers got since the last write (convex/lib/jobEvents.ts). */
  events: v.optional(v.array(storedEvent)),
}

async function writeProgress(ctx: MutationCtx, job: Doc<'background_jobs'>, update: { contentChunk?: string, reasoningChunk?: string, chunksReceived?: number, activeToolCalls?: ActiveToolCallArg[], events?: StoredEventArg[] }, now: number): Promise<void> {
  const patch: JobTextState & { chunks_received: number, updated_at: number, event_seq?: number } = { chunks_received: update.chunksReceived ?? job.chunks_received, updated_at: now }
  if (update.events?.length) patch.event_seq = await appendJobEvents(ctx, job, update.events)
  if (update.contentChunk) {
    await appendJobText(ctx, job.job_id, 'content', update.contentChunk, chunkedLength(job, 'content'))
    patch.content_length = chunkedLength(job, 'content') + update.contentChunk.length
  }
  if (update.reasoningChunk) {
    await appendJobText(ctx, job.job_id, 'reasoning', update.reasoningChunk, chunkedLength(job, 'reasoning'))
    patch.reasoning_length = chunkedLength(job, 'reasoning') + update.reasoningChunk.length
  }
  await ctx.db.patch(job._id, patch)
  if (update.activeToolCalls) await replaceActiveToolCalls(ctx, job.job_id, update.activeToolCalls)
}

/** Appends streamed text and replaces counters and the active tool calls. */
export const appendProgress = serverMutation({
  args: { jobId: v.string(), ...progress, now: v.number(), owner },
  handler: async (ctx, { jobId, owner, now: _now, ...update }) => {
    const job = await writableJob(ctx, jobId, owner)
    if (!job) return false
    await writeProgress(ctx, job, update, Date.now())
    return true
  },
})

/** How long a count of viewers on another instance holds without being reported again. */
const VIEWERS_HOLD_MS = 5_000

/**
 * One instance's heartbeat: the progress of every job it runs (one write each, in one
 * transaction), its leases renewed when a third of them has passed (by the store's clock), and
 * how many people watch jobs it follows for other instances. Answers, per job it holds, whether it
 * still owns it and whether someone asked to stop it, and which requests its jobs wait on were
 * answered, so a stop or an answer given on another instance reaches the runner within one
 * heartbeat whatever the lease.
 */
export const pulse = serverMutation({
  args: {
    owner: v.string(),
    leaseMs: v.number(),
    progress: v.array(v.object({ jobId: v.string(), ...progress })),
    held: v.array(v.string()),
    viewers: v.array(v.object({ jobId: v.string(), count: v.number() })),
    /** Requests this instance's jobs wait on: the reply names those answered (or closed) meanwhile. */
    waiting: v.optional(v.array(v.object({ jobId: v.string(), requestId: v.string() }))),
  },
  handler: async (ctx, { owner, leaseMs, progress: updates, held, viewers, waiting = [] }) => {
    const now = Date.now()
    const written: boolean[] = []
    for (const { jobId, ...update } of updates) {
      const job = await writableJob(ctx, jobId, owner)
      if (job) await writeProgress(ctx, job, update, now)
      written.push(job !== null)
    }
    const leases: Array<{ jobId: string, owned: boolean, abortRequested: boolean }> = []
    for (const jobId of held) {
      const job = await findJob(ctx, jobId)
      if (!job || job.status !== 'streaming' || job.lease_owner !== owner) {
        leases.push({ jobId, owned: false, abortRequested: false })
        continue
      }
      if ((job.lease_expires_at ?? 0) - now < (leaseMs * 2) / 3) await extendLease(ctx, job, now + leaseMs)
      leases.push({ jobId, owned: true, abortRequested: job.abort_requested_at !== undefined })
    }
    for (const { jobId, count } of viewers) {
      const row = await ctx.db.query('job_viewers').withIndex('by_job_and_instance', q => q.eq('job_id', jobId).eq('instance', owner)).unique()
      if (count <= 0) {
        if (row) await ctx.db.delete(row._id)
      } else if (row) {
        await ctx.db.patch(row._id, { count, expires_at: now + VIEWERS_HOLD_MS })
      } else {
        await ctx.db.insert('job_viewers', { job_id: jobId, instance: owner, count, expires_at: now + VIEWERS_HOLD_MS })
      }
    }
    const settled: string[] = []
    for (const { jobId, requestId } of waiting) {
      if ((await findRequest(ctx, jobId, requestId))?.status !== 'open') settled.push(requestId)
    }
    return { written, leases, settled }
  },
})

/** A running job starts (true) or stops (false) waiting for a person: its slot stops or starts counting as running. */
export const setParked = serverMutation({
  args: { jobId: v.string(), parked: v.boolean() },
  handler: async (ctx, { jobId, parked }) => parkSlot(ctx, jobId, parked),
})

/** How many people watch the job from instances other than `owner`, as they last reported. */
export const remoteViewers = serverQuery({
  args: { jobId: v.string(), owner: v.string() },
  handler: async (ctx, { jobId, owner }) => {
    const now = Date.now()
    const rows = await ctx.db.query('job_viewers').withIndex('by_job_and_instance', q => q.eq('job_id', jobId)).take(100)
    return rows.filter(row => row.instance !== owner && row.expires_at > now).reduce((sum, row) => sum + row.count, 0)
  },
})

/** Makes the job's stored text what `text` says (each kind given), appending when it can. */
async function replaceText(ctx: MutationCtx, job: Doc<'background_jobs'>, text: { content?: string, reasoning?: string }): Promise<JobTextState> {
  let patch: JobTextState = {}
  if (text.content !== undefined) patch = { ...patch, ...await replaceJobText(ctx, job, 'content', text.content, patch) }
  if (text.reasoning !== undefined) patch = { ...patch, ...await replaceJobText(ctx, job, 'reasoning', text.reasoning, patch) }
  return patch
}

/**
 * A job's run state in one write: rounds, one executed tool call, the checkpoint (JSON, or null to
 * remove), usage, text rewinds, resume count, and a workflow's state: its root (JSON) and the parts
 * that changed (shared/workflow-state-parts.ts). `knownAt`: when the caller last wrote the job (the
 * parts it leaves out are as it wrote them then); `'stale'` (nothing written) when anything wrote
 * the job since, and the caller sends every part.
 */
export const updateRunState = serverMutation({
  args: {
    jobId: v.string(),
    toolRounds: v.optional(v.array(v.object({ round: v.number(), toolCalls: v.array(toolExecution) }))),
    toolExecution: v.optional(v.object({ round: v.number(), execution: toolExecution })),
    checkpoint: v.optional(v.union(v.string(), v.null())),
    usage: v.optional(usage),
    content: v.optional(v.string()),
    reasoning: v.optional(v.string()),
    resumeCount: v.optional(v.number()),
    steers: v.optional(v.string()),
    workflow: v.optional(v.object({ state: v.string(), parts: v.array(v.object({ path: v.string(), body: v.string() })), knownAt: v.optional(v.number()) })),
    now: v.number(),
    owner,
  },
  handler: async (ctx, args): Promise<boolean | 'stale'> => {
    const job = await writableJob(ctx, args.jobId, args.owner)
    if (!job) return false
    if (args.workflow?.knownAt !== undefined && job.updated_at !== args.workflow.knownAt) return 'stale'
    for (const round of args.toolRounds ?? []) {
      for (const call of round.toolCalls) await recordToolExecution(ctx, args.jobId, round.round, call)
    }
    if (args.toolExecution) await recordToolExecution(ctx, args.jobId, args.toolExecution.round, args.toolExecution.execution)
    if (args.checkpoint !== undefined) await writeCheckpoint(ctx, args.jobId, args.checkpoint)
    const text = await replaceText(ctx, job, args)
    await ctx.db.patch(job._id, {
      ...text,
      usage: args.usage ?? job.usage,
      resume_count: args.resumeCount ?? job.resume_count,
      ...(args.steers !== undefined ? { steers: args.steers } : {}),
      ...(args.workflow ? { workflow_state: args.workflow.state } : {}),
      updated_at: args.now,
    })
    for (const part of args.workflow?.parts ?? []) {
      const stored = await ctx.db.query('job_workflow_state_parts').withIndex('by_job_and_path', q => q.eq('job_id', args.jobId).eq('path', part.path)).unique()
      if (stored) await ctx.db.patch(stored._id, { body: part.body })
      else await ctx.db.insert('job_workflow_state_parts', { job_id: args.jobId, path: part.path, body: part.body })
    }
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
    const text = await replaceText(ctx, job, args)
    await ctx.db.patch(job._id, {
      ...text,
      status: args.status,
      chunks_received: args.chunksReceived ?? job.chunks_received,
      usage: args.usage ?? job.usage,
      error: args.error,
      finish_reason: args.finishReason ?? (args.status === 'complete' ? 'stop' : args.status),
      updated_at: args.now,
      completed_at: args.now,
      api_key_ciphertext: undefined,
      lease_owner: undefined,
      lease_expires_at: undefined,
      // Its run log stays a while for viewers and relays catching up (`compactLogs` folds it away).
      ...(job.event_seq ? { log_kept: true } : {}),
    })
    await writeCheckpoint(ctx, args.jobId, null)
    await freeSlot(ctx, args.jobId)
    for (const row of await ctx.db.query('job_tool_calls').withIndex('by_job_and_position', q => q.eq('job_id', args.jobId)).collect()) {
      if (row.active && (row.status === 'pending' || row.status === 'running')) {
        await ctx.db.patch(row._id, { status: 'error', error: STOPPED_CALL_ERROR, finished_at: args.now })
      }
    }
    return true
  },
})

/** Characters of requests one list reads at most (each ≤ one part): the rest are listed without their prompt line. */
const LIST_REQUEST_CHARS = 3_000_000

/**
 * A user's jobs, running first then newest, up to `limit` (for the provider's list), without their
 * text (a list of 200 answers of up to a million characters each would pass what one query may
 * read): `listedContentLength` says how long each answer is.
 */
export const listByUser = serverQuery({
  args: { userId: v.string(), status: v.optional(jobStatus), limit: v.number() },
  handler: async (ctx, { userId, status, limit }) => {
    // The prompt line of a list comes from each job's request, read while the list's budget lasts.
    let requestChars = 0
    const summary = async (job: Doc<'background_jobs'>) => {
      const listed = { ...await assembleJob(ctx, job, { withText: false, withLargeValues: false }), listedContentLength: job.content.length + (job.content_length ?? 0) }
      const request = requestChars < LIST_REQUEST_CHARS ? await readSmallJobBlob(ctx, job, 'request') : undefined
      requestChars += request?.length ?? 0
      return request ? { ...listed, request: JSON.parse(request) } : listed
    }
    if (status) {
      const jobs = await ctx.db.query('background_jobs').withIndex('by_user_status', q => q.eq('user_id', userId).eq('status', status)).order('desc').take(limit)
      return Promise.all(jobs.sort((a, b) => b.started_at - a.started_at).map(summary))
    }
    const running = await ctx.db.query('background_jobs').withIndex('by_user_status', q => q.eq('user_id', userId).eq('status', 'streaming')).take(limit)
    running.sort((a, b) => b.started_at - a.started_at)
    const recent = await ctx.db.query('background_jobs').withIndex('by_user_and_started', q => q.eq('user_id', userId)).order('desc').take(limit)
    const jobs = [...running, ...recent.filter(job => job.status !== 'streaming')].slice(0, limit)
    return Promise.all(jobs.map(summary))
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

/** Characters of text one cleanup pass deletes at most (a chunk is read to be deleted; ≤ 3 bytes a character). */
const CLEANUP_TEXT_BUDGET = 2_000_000

/**
 * Deletes up to `batch` jobs that finished before `finishedBefore`, with their rows, stopping
 * early once their text reaches what one transaction may read; `hasMore` asks for another pass.
 */
/** Drops the run logs of jobs that ended before `endedBefore` (their rows are the whole of them), a batch of events at a time. */
export const compactLogs = serverMutation({
  args: { endedBefore: v.number() },
  handler: async (ctx, { endedBefore }) => {
    const ended = await ctx.db.query('background_jobs').withIndex('by_log_kept_and_completed', q => q.eq('log_kept', true).lt('completed_at', endedBefore)).take(20)
    let events = 0
    for (const job of ended) {
      const dropped = await deleteJobEvents(ctx, job.job_id, 4_000 - events)
      events += dropped.deleted
      if (dropped.hasMore) return { hasMore: true }
      await ctx.db.patch(job._id, { log_kept: undefined })
    }
    return { hasMore: ended.length === 20 }
  },
})

type EndedStatus = 'complete' | 'error' | 'aborted' | 'rejected'

/**
 * Deletes ended jobs (with their rows) that `endedOf` finds for each ended status: at most `batch`
 * jobs, and about `CLEANUP_TEXT_BUDGET` of their text, per mutation; `hasMore` when it stopped there.
 */
async function deleteEndedJobs(ctx: MutationCtx, batch: number, endedOf: (status: EndedStatus, take: number) => Promise<Array<Doc<'background_jobs'>>>): Promise<{ deleted: number, hasMore: boolean }> {
  let deleted = 0
  let text = 0
  for (const status of ['complete', 'error', 'aborted', 'rejected'] as const) {
    for (const job of await endedOf(status, batch - deleted)) {
      const size = job.content.length + job.reasoning.length + (job.content_length ?? 0) + (job.reasoning_length ?? 0)
      if (deleted > 0 && text + size > CLEANUP_TEXT_BUDGET) return { deleted, hasMore: true }
      await deleteJobRows(ctx, job.job_id)
      await ctx.db.delete(job._id)
      deleted++
      text += size
    }
    if (deleted >= batch) return { deleted, hasMore: true }
  }
  return { deleted, hasMore: false }
}

/** One person's ended jobs (finished before `finishedBefore`) and all their notifications, in batches: their account is being deleted. */
export const deleteEndedOfUser = serverMutation({
  args: { userId: v.string(), finishedBefore: v.number(), batch: v.optional(v.number()) },
  handler: async (ctx, { userId, finishedBefore, batch = 50 }) => {
    const jobs = await deleteEndedJobs(ctx, batch, (status, take) => ctx.db.query('background_jobs')
      .withIndex('by_user_status', q => q.eq('user_id', userId).eq('status', status))
      .filter(q => q.lt(q.field('completed_at'), finishedBefore))
      .take(take))
    if (jobs.hasMore) return jobs
    const notifications = await ctx.db.query('job_notifications').withIndex('by_user_and_created', q => q.eq('user_id', userId)).take(batch)
    for (const notification of notifications) await ctx.db.delete(notification._id)
    return { deleted: jobs.deleted, hasMore: notifications.length === batch }
  },
})

export const cleanupExpired = serverMutation({
  args: { finishedBefore: v.number(), batch: v.optional(v.number()) },
  handler: async (ctx, { finishedBefore, batch = 50 }) => deleteEndedJobs(ctx, batch, (status, take) => ctx.db.query('background_jobs')
    .withIndex('by_status_and_completed', q => q.eq('status', status).lt('completed_at', finishedBefore))
    .take(take)),
})
