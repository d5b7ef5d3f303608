/**
 * What jobs wait on their users for. Each change reads and writes one request inside a mutation
 * (a transaction), so the first claim or answer wins on any number of instances; the rules are the
 * server's (server/lib/stores/jobs/input-request-store.ts). Server secret required.
 */
import { v } from 'convex/values'
import type { MutationCtx } from './_generated/server'
import { serverMutation, serverQuery } from './lib/serverGuard'
import { findRequest } from './lib/jobRecords'
import { inputRequestRules, INPUT_REQUEST_LIST_LIMIT, type InputRequestChange } from '../shared/input-request-rules'
import type { InputAnswer, JobInputRequest } from '../shared/types/input-request'

/** Applies `apply` to the stored request; returns the outcome with the request as JSON. */
async function change(ctx: MutationCtx, jobId: string, requestId: string, apply: (request: JobInputRequest) => InputRequestChange) {
  const row = await findRequest(ctx, jobId, requestId)
  if (!row) return { ok: false, reason: 'missing' as const }
  const result = apply(JSON.parse(row.body) as JobInputRequest)
  if (result.ok) await ctx.db.patch(row._id, { status: result.request.status, body: JSON.stringify(result.request) })
  return result.ok ? { ok: true, body: JSON.stringify(result.request) } : { ok: false, reason: result.reason, body: 'request' in result ? JSON.stringify(result.request) : undefined }
}

/** Opens the request, or returns the one stored under the same job and key. */
export const open = serverMutation({
  args: { body: v.string() },
  handler: async (ctx, { body }) => {
    const request = JSON.parse(body) as JobInputRequest
    const existing = await ctx.db.query('job_input_requests').withIndex('by_job_and_key', q => q.eq('job_id', request.jobId).eq('key', request.key)).unique()
    if (existing) return existing.body
    await ctx.db.insert('job_input_requests', { request_id: request.id, job_id: request.jobId, user_id: request.userId, key: request.key, status: request.status, created_at: request.createdAt, body })
    return body
  },
})

export const get = serverQuery({
  args: { jobId: v.string(), requestId: v.string() },
  handler: async (ctx, { jobId, requestId }) => (await findRequest(ctx, jobId, requestId))?.body ?? null,
})

/** A job's requests (oldest first), or a user's open ones (newest first). */
export const list = serverQuery({
  args: { jobId: v.optional(v.string()), userId: v.optional(v.string()) },
  handler: async (ctx, { jobId, userId }) => {
    const rows = jobId !== undefined
      ? await ctx.db.query('job_input_requests').withIndex('by_job_and_created', q => q.eq('job_id', jobId)).take(INPUT_REQUEST_LIST_LIMIT)
      : await ctx.db.query('job_input_requests').withIndex('by_user_status_created', q => q.eq('user_id', userId ?? '').eq('status', 'open')).order('desc').take(INPUT_REQUEST_LIST_LIMIT)
    return rows.map(row => row.body)
  },
})

export const claim = serverMutation({
  args: { jobId: v.string(), requestId: v.string(), claimant: v.string(), claimMs: v.number(), now: v.number() },
  handler: (ctx, { jobId, requestId, claimant, claimMs, now }) => change(ctx, jobId, requestId, request => inputRequestRules.claim(request, claimant, claimMs, now)),
})

export const answer = serverMutation({
  args: { jobId: v.string(), requestId: v.string(), answer: v.string(), now: v.number(), claimant: v.optional(v.string()), claimMs: v.optional(v.number()) },
  handler: (ctx, { jobId, requestId, answer, ...options }) => change(ctx, jobId, requestId, request => inputRequestRules.answer(request, JSON.parse(answer) as InputAnswer, options)),
})

export const close = serverMutation({
  args: { jobId: v.string(), requestId: v.string(), status: v.union(v.literal('expired'), v.literal('cancelled')), now: v.number() },
  handler: (ctx, { jobId, requestId, status, now }) => change(ctx, jobId, requestId, request => inputRequestRules.close(request, status, now)),
})

/** Marks an answered request acted on; false when it already was. */
export const consume = serverMutation({
  args: { jobId: v.string(), requestId: v.string(), now: v.number() },
  handler: async (ctx, { jobId, requestId, now }) => {
    const row = await findRequest(ctx, jobId, requestId)
    const consumed = row ? inputRequestRules.consume(JSON.parse(row.body) as JobInputRequest, now) : undefined
    if (!row || !consumed) return false
    await ctx.db.patch(row._id, { body: JSON.stringify(consumed) })
    return true
  },
})
