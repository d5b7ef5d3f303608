/**
 * A job's run log in Convex (server/lib/jobs/run-log.ts): the events its viewers got, one row each,
 * numbered per job with the run that wrote it. Appended with the progress write that carries them,
 * the oldest dropped past `MAX_KEPT_JOB_EVENTS`, all of them when the job ends.
 */
import { v, type Infer } from 'convex/values'
import type { Doc } from '../_generated/dataModel'
import type { MutationCtx, QueryCtx } from '../_generated/server'

/** Events of a running job's log kept at most (server/lib/stores/jobs/job-store.ts says the same). */
const MAX_KEPT_JOB_EVENTS = 5_000

/** Characters of event bodies one read returns at most (a query reads 8 MiB at most). */
const MAX_READ_CHARS = 4_000_000

/** One event as a progress write carries it: its JSON as `body`, absent when it is not kept. */
export const storedEvent = v.object({
  seq: v.number(),
  attempt: v.number(),
  type: v.string(),
  body: v.optional(v.string()),
  superseded: v.optional(v.boolean()),
})

export type StoredEventArg = Infer<typeof storedEvent>

/** Appends `events` (numbered on from the job's `event_seq`); returns the job's new `event_seq`. */
export async function appendJobEvents(ctx: MutationCtx, job: Doc<'background_jobs'>, events: StoredEventArg[]): Promise<number> {
  const first = events[0]
  const last = events.at(-1)
  if (!first || !last) return job.event_seq ?? 0
  // A run numbering on from an event the store lost replaces what it numbered the same.
  for (const row of await ctx.db.query('job_events').withIndex('by_job_and_seq', q => q.eq('job_id', job.job_id).gte('seq', first.seq)).collect()) await ctx.db.delete(row._id)
  for (const event of events) await ctx.db.insert('job_events', { job_id: job.job_id, ...event })
  const dropped = await ctx.db.query('job_events').withIndex('by_job_and_seq', q => q.eq('job_id', job.job_id).lte('seq', last.seq - MAX_KEPT_JOB_EVENTS)).take(events.length + 100)
  for (const row of dropped) await ctx.db.delete(row._id)
  return last.seq
}

/** Drops the job's log, at most `limit` events of it (all without); says whether any are left. */
export async function deleteJobEvents(ctx: MutationCtx, jobId: string, limit = Number.POSITIVE_INFINITY): Promise<{ deleted: number, hasMore: boolean }> {
  const query = ctx.db.query('job_events').withIndex('by_job_and_seq', q => q.eq('job_id', jobId))
  const rows = Number.isFinite(limit) ? await query.take(Math.max(0, limit) + 1) : await query.collect()
  const doomed = Number.isFinite(limit) ? rows.slice(0, Math.max(0, limit)) : rows
  for (const row of doomed) await ctx.db.delete(row._id)
  return { deleted: doomed.length, hasMore: rows.length > doomed.length }
}

/** The events numbered `fromSeq` and after, at most `limit` (and `MAX_READ_CHARS` of bodies). */
export async function readJobEvents(ctx: QueryCtx, jobId: string, fromSeq: number, limit: number): Promise<StoredEventArg[]> {
  const rows = await ctx.db.query('job_events').withIndex('by_job_and_seq', q => q.eq('job_id', jobId).gte('seq', fromSeq)).take(Math.max(0, Math.min(limit, 5_000)))
  const events: StoredEventArg[] = []
  let chars = 0
  for (const { seq, attempt, type, body, superseded } of rows) {
    chars += body?.length ?? 0
    if (chars > MAX_READ_CHARS && events.length > 0) break
    events.push({ seq, attempt, type, ...(body === undefined ? {} : { body }), ...(superseded ? { superseded } : {}) })
  }
  return events
}
