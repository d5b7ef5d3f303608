/**
 * Reading and writing a job's rows: the job document plus its tool calls and checkpoint,
 * assembled into the record shape the Nitro server uses (camelCase, like BackgroundJob).
 */
import type { Doc } from '../_generated/dataModel'
import type { MutationCtx, QueryCtx } from '../_generated/server'
import { v, type Infer } from 'convex/values'
import { deleteJobText, readJobText } from './jobText'
import { freeSlot, renewSlot } from './jobSlots'
import { deleteJobBlobs, readJobBlob, writeJobBlob } from './jobBlobs'
import { joinWorkflowState } from '../../shared/workflow-state-parts'
import type { WorkflowState } from '../../shared/types/workflow'
import { deleteJobEvents } from './jobEvents'

export const activeToolCall = v.object({
  id: v.string(),
  name: v.string(),
  arguments: v.string(),
  round: v.number(),
  status: v.union(v.literal('pending'), v.literal('running'), v.literal('completed'), v.literal('error')),
  timedOut: v.optional(v.boolean()),
  startedAt: v.optional(v.number()),
  finishedAt: v.optional(v.number()),
  executionTimeMs: v.optional(v.number()),
  result: v.optional(v.string()),
  error: v.optional(v.string()),
})

export const toolExecution = v.object({
  id: v.string(),
  name: v.string(),
  arguments: v.string(),
  result: v.string(),
  error: v.optional(v.string()),
  executionTimeMs: v.number(),
})

export type ActiveToolCallArg = Infer<typeof activeToolCall>

/** The job document of `jobId`, if any. */
export async function findJob(ctx: QueryCtx, jobId: string): Promise<Doc<'background_jobs'> | null> {
  return ctx.db.query('background_jobs').withIndex('by_job_id', q => q.eq('job_id', jobId)).unique()
}

/**
 * The job if it may still be written by `owner`: it exists, is streaming, and no other instance
 * holds its lease. A stale instance's late writes are refused this way.
 */
export async function writableJob(ctx: QueryCtx, jobId: string, owner: string | undefined): Promise<Doc<'background_jobs'> | null> {
  const job = await findJob(ctx, jobId)
  if (!job || job.status !== 'streaming') return null
  if (owner !== undefined && job.lease_owner !== undefined && job.lease_owner !== owner) return null
  return job
}

export async function toolCallRows(ctx: QueryCtx, jobId: string): Promise<Array<Doc<'job_tool_calls'>>> {
  return ctx.db.query('job_tool_calls').withIndex('by_job_and_position', q => q.eq('job_id', jobId)).collect()
}

function toActiveToolCall(row: Doc<'job_tool_calls'>): ActiveToolCallArg {
  const call: ActiveToolCallArg = { id: row.call_id, name: row.name, arguments: row.arguments, round: row.round, status: row.status }
  if (row.timed_out !== undefined) call.timedOut = row.timed_out
  if (row.started_at !== undefined) call.startedAt = row.started_at
  if (row.finished_at !== undefined) call.finishedAt = row.finished_at
  if (row.execution_time_ms !== undefined) call.executionTimeMs = row.execution_time_ms
  if (row.display_result !== undefined) call.result = row.display_result
  if (row.error !== undefined) call.error = row.error
  return call
}

/** Replaces the job's active tool call list, keeping executed calls for its tool rounds. */
export async function replaceActiveToolCalls(ctx: MutationCtx, jobId: string, calls: ActiveToolCallArg[]): Promise<void> {
  const rows = await toolCallRows(ctx, jobId)
  const listed = new Set<string>()
  for (const [position, call] of calls.entries()) {
    listed.add(`${call.round}:${call.id}`)
    const fields = {
      position,
      active: true,
      name: call.name,
      arguments: call.arguments,
      status: call.status,
      timed_out: call.timedOut,
      started_at: call.startedAt,
      finished_at: call.finishedAt,
      execution_time_ms: call.executionTimeMs,
      display_result: call.result,
      error: call.error,
    }
    const existing = rows.find(row => row.round === call.round && row.call_id === call.id)
    if (existing) await ctx.db.patch(existing._id, fields)
    else await ctx.db.insert('job_tool_calls', { job_id: jobId, round: call.round, call_id: call.id, ...fields })
  }
  for (const row of rows) {
    if (listed.has(`${row.round}:${row.call_id}`)) continue
    if (row.executed) {
      if (row.active) await ctx.db.patch(row._id, { active: false })
    } else {
      await ctx.db.delete(row._id)
    }
  }
}

/** Records an executed call (its full result) in its round. */
export async function recordToolExecution(ctx: MutationCtx, jobId: string, round: number, execution: Infer<typeof toolExecution>): Promise<void> {
  const existing = await ctx.db.query('job_tool_calls').withIndex('by_job_and_call', q => q.eq('job_id', jobId).eq('round', round).eq('call_id', execution.id)).unique()
  const rows = await toolCallRows(ctx, jobId)
  const sequence = existing?.executed?.sequence ?? rows.filter(row => row.executed).length
  const executed = { result: execution.result, error: execution.error, execution_time_ms: execution.executionTimeMs, sequence }
  if (existing) {
    await ctx.db.patch(existing._id, { executed, name: execution.name, arguments: execution.arguments })
  } else {
    await ctx.db.insert('job_tool_calls', {
      job_id: jobId, round, call_id: execution.id, position: rows.length + 1_000_000, active: false,
      name: execution.name, arguments: execution.arguments, status: execution.error === undefined ? 'completed' : 'error', executed,
    })
  }
}

/** The request `requestId` of `jobId`, or null (a request of another job counts as none). */
export async function findRequest(ctx: QueryCtx, jobId: string, requestId: string): Promise<Doc<'job_input_requests'> | null> {
  const row = await ctx.db.query('job_input_requests').withIndex('by_request_id', q => q.eq('request_id', requestId)).unique()
  return row && row.job_id === jobId ? row : null
}

/** Holds `job`'s lease until `until` (taking it for `owner` when given), and its running slot with it. */
export async function extendLease(ctx: MutationCtx, job: Doc<'background_jobs'>, until: number, owner?: string): Promise<void> {
  await ctx.db.patch(job._id, { ...(owner === undefined ? {} : { lease_owner: owner }), lease_expires_at: until })
  await renewSlot(ctx, job.job_id, until)
}

/** Deletes a job's text, tool calls, checkpoint, viewers and notifications (the job document stays). */
export async function deleteJobRows(ctx: MutationCtx, jobId: string): Promise<void> {
  await deleteJobText(ctx, jobId)
  await freeSlot(ctx, jobId)
  for (const row of await toolCallRows(ctx, jobId)) await ctx.db.delete(row._id)
  for (const row of await ctx.db.query('job_viewers').withIndex('by_job_and_instance', q => q.eq('job_id', jobId)).collect()) await ctx.db.delete(row._id)
  await deleteJobBlobs(ctx, jobId)
  await deleteJobEvents(ctx, jobId)
  for (const part of await ctx.db.query('job_workflow_state_parts').withIndex('by_job_and_path', q => q.eq('job_id', jobId)).collect()) await ctx.db.delete(part._id)
  for (const notification of await ctx.db.query('job_notifications').withIndex('by_job_id', q => q.eq('job_id', jobId)).collect()) {
    await ctx.db.delete(notification._id)
  }
  for (const request of await ctx.db.query('job_input_requests').withIndex('by_job_and_created', q => q.eq('job_id', jobId)).collect()) {
    await ctx.db.delete(request._id)
  }
}

/** Stores, replaces or (with null) removes the job's checkpoint. */
export async function writeCheckpoint(ctx: MutationCtx, jobId: string, checkpoint: string | null): Promise<void> {
  await writeJobBlob(ctx, jobId, 'checkpoint', checkpoint)
}

/** A workflow run's state from its root and, when the root names any, its parts (shared/workflow-state-parts.ts). */
async function readWorkflowState(ctx: QueryCtx, jobId: string, root: string): Promise<WorkflowState> {
  if (!root.includes('"$part"')) return JSON.parse(root) as WorkflowState
  const parts = new Map((await ctx.db.query('job_workflow_state_parts').withIndex('by_job_and_path', q => q.eq('job_id', jobId)).collect()).map(part => [part.path, part.body]))
  return joinWorkflowState(root, path => parts.get(path))
}

/**
 * The job as the server's BackgroundJob record (JSON fields parsed); `withText: false` leaves its
 * text out (empty), `withLargeValues: false` its request and checkpoint.
 */
export async function assembleJob(ctx: QueryCtx, job: Doc<'background_jobs'>, options: { withToolCalls?: boolean, withText?: boolean, withLargeValues?: boolean } = {}) {
  const rows = options.withToolCalls === false ? [] : await toolCallRows(ctx, job.job_id)
  const rounds = new Map<number, Array<{ sequence: number, call: Infer<typeof toolExecution> }>>()
  for (const row of rows) {
    if (!row.executed) continue
    const call: Infer<typeof toolExecution> = { id: row.call_id, name: row.name, arguments: row.arguments, result: row.executed.result, executionTimeMs: row.executed.execution_time_ms }
    if (row.executed.error !== undefined) call.error = row.executed.error
    rounds.set(row.round, [...(rounds.get(row.round) ?? []), { sequence: row.executed.sequence, call }])
  }
  const checkpoint = options.withLargeValues === false ? undefined : await readJobBlob(ctx, job, 'checkpoint')
  const request = options.withLargeValues === false ? undefined : await readJobBlob(ctx, job, 'request')
  return {
    id: job.job_id,
    userId: job.user_id,
    threadId: job.thread_id,
    messageId: job.message_id,
    type: job.type,
    model: job.model,
    status: job.status,
    content: options.withText === false ? '' : await readJobText(ctx, job, 'content'),
    reasoning: options.withText === false ? '' : await readJobText(ctx, job, 'reasoning'),
    chunksReceived: job.chunks_received,
    activeToolCalls: rows.filter(row => row.active).sort((a, b) => a.position - b.position).map(toActiveToolCall),
    toolRounds: [...rounds.entries()].sort(([a], [b]) => a - b).map(([round, calls]) => ({ round, toolCalls: calls.sort((a, b) => a.sequence - b.sequence).map(item => item.call) })),
    workflowState: job.workflow_state ? await readWorkflowState(ctx, job.job_id, job.workflow_state) : undefined,
    usage: job.usage,
    steers: job.steers ? JSON.parse(job.steers) : undefined,
    error: job.error,
    finishReason: job.finish_reason,
    startedAt: job.started_at,
    updatedAt: job.updated_at,
    completedAt: job.completed_at,
    resumeCount: job.resume_count,
    eventSeq: job.event_seq || undefined,
    request: request ? JSON.parse(request) : undefined,
    checkpoint: checkpoint ? JSON.parse(checkpoint) : undefined,
    apiKeyCiphertext: job.api_key_ciphertext,
    leaseOwner: job.lease_owner,
    leaseExpiresAt: job.lease_expires_at,
    abortRequested: job.abort_requested_at !== undefined,
  }
}
