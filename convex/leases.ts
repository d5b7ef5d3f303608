/**
 * Which instance runs a job. An instance holds a lease while it runs a job and renews it (in its
 * heartbeat, jobs:pulse); when an instance dies its leases expire and another instance claims and
 * resumes those jobs. Abort requests from any instance reach the runner through its heartbeat.
 * Time is the store's own (`Date.now()` inside the function), never an instance's clock: one
 * instance whose clock runs fast must not take over the others' running jobs.
 */
import { v } from 'convex/values'
import { serverMutation, serverQuery } from './lib/serverGuard'
import { assembleJob, extendLease, findJob } from './lib/jobRecords'

/** Ignored: instances of the previous version send their own time; kept so they work on through a rolling upgrade. */
const ignoredNow = { now: v.optional(v.number()) }

/** Takes the lease of a streaming job that is free, expired, or already ours. */
export const claim = serverMutation({
  args: { jobId: v.string(), owner: v.string(), leaseMs: v.number(), ...ignoredNow },
  handler: async (ctx, { jobId, owner, leaseMs }) => {
    const now = Date.now()
    const job = await findJob(ctx, jobId)
    if (!job || job.status !== 'streaming') return false
    const free = job.lease_owner === undefined || job.lease_owner === owner || (job.lease_expires_at ?? 0) <= now
    if (!free) return false
    await extendLease(ctx, job, now + leaseMs, owner)
    return true
  },
})

/** Extends our lease; tells the runner whether it still owns the job and whether to stop. */
export const renew = serverMutation({
  args: { jobId: v.string(), owner: v.string(), leaseMs: v.number(), ...ignoredNow },
  handler: async (ctx, { jobId, owner, leaseMs }) => {
    const now = Date.now()
    const job = await findJob(ctx, jobId)
    if (!job || job.status !== 'streaming' || job.lease_owner !== owner) return { owned: false, abortRequested: false }
    await extendLease(ctx, job, now + leaseMs)
    return { owned: true, abortRequested: job.abort_requested_at !== undefined }
  },
})

/** Gives a lease up at once (graceful shutdown), so another instance can resume without waiting. */
export const release = serverMutation({
  args: { jobId: v.string(), owner: v.string() },
  handler: async (ctx, { jobId, owner }) => {
    const job = await findJob(ctx, jobId)
    if (!job || job.lease_owner !== owner) return false
    await ctx.db.patch(job._id, { lease_owner: undefined, lease_expires_at: undefined })
    return true
  },
})

/** Asks whichever instance runs the job to stop it. False if the job is not running. */
export const requestAbort = serverMutation({
  args: { jobId: v.string(), ...ignoredNow },
  handler: async (ctx, { jobId }) => {
    const job = await findJob(ctx, jobId)
    if (!job || job.status !== 'streaming') return false
    if (job.abort_requested_at === undefined) await ctx.db.patch(job._id, { abort_requested_at: Date.now() })
    return true
  },
})

/** Streaming jobs nobody holds a live lease on: free for another instance to resume. */
export const listOrphaned = serverQuery({
  args: { limit: v.optional(v.number()), ...ignoredNow },
  handler: async (ctx, { limit = 50 }) => {
    const unleased = await ctx.db.query('background_jobs')
      .withIndex('by_status_and_lease', q => q.eq('status', 'streaming').lt('lease_expires_at', Date.now()))
      .take(limit)
    return Promise.all(unleased.map(job => assembleJob(ctx, job)))
  },
})
