/**
 * A job's large JSON values (the request it was started with, the checkpoint it resumes from) kept
 * in parts of BLOB_PART_CHARS, so a long conversation or many tool results never make one document
 * pass Convex's 1 MiB. Jobs stored before parts kept the request on the job document and the
 * checkpoint whole in `job_checkpoints`; both are still read, and replaced on the next write.
 */
import type { Doc } from '../_generated/dataModel'
import type { MutationCtx, QueryCtx } from '../_generated/server'

/** Characters per part: at most 3 bytes each in UTF-8 for these JSON texts (≤ 600 KB a part). */
export const BLOB_PART_CHARS = 200_000

export type BlobKind = 'request' | 'checkpoint'

function partsOf(ctx: QueryCtx, jobId: string, kind: BlobKind) {
  return ctx.db.query('job_blobs').withIndex('by_job_kind_index', q => q.eq('job_id', jobId).eq('kind', kind))
}

/** The value of `kind`, or undefined when the job has none. */
export async function readJobBlob(ctx: QueryCtx, job: Doc<'background_jobs'>, kind: BlobKind): Promise<string | undefined> {
  const parts = await partsOf(ctx, job.job_id, kind).collect()
  if (parts.length > 0) return parts.map(part => part.text).join('')
  if (kind === 'request') return job.request
  const legacy = await ctx.db.query('job_checkpoints').withIndex('by_job_id', q => q.eq('job_id', job.job_id)).unique()
  return legacy?.checkpoint
}

/** The value of `kind` when it fits in one part (a list reads requests this way, within its read budget), else undefined. */
export async function readSmallJobBlob(ctx: QueryCtx, job: Doc<'background_jobs'>, kind: BlobKind): Promise<string | undefined> {
  const parts = await partsOf(ctx, job.job_id, kind).take(2)
  if (parts.length === 1) return parts[0]!.text
  if (parts.length === 0 && kind === 'request' && job.request !== undefined && job.request.length <= BLOB_PART_CHARS) return job.request
  return undefined
}

/** Replaces (or with null removes) the value of `kind`. */
export async function writeJobBlob(ctx: MutationCtx, jobId: string, kind: BlobKind, text: string | null): Promise<void> {
  for (const part of await partsOf(ctx, jobId, kind).collect()) await ctx.db.delete(part._id)
  if (kind === 'checkpoint') {
    const legacy = await ctx.db.query('job_checkpoints').withIndex('by_job_id', q => q.eq('job_id', jobId)).unique()
    if (legacy) await ctx.db.delete(legacy._id)
  }
  if (text === null) return
  for (let index = 0; index * BLOB_PART_CHARS < text.length; index++) {
    await ctx.db.insert('job_blobs', { job_id: jobId, kind, index, text: text.slice(index * BLOB_PART_CHARS, (index + 1) * BLOB_PART_CHARS) })
  }
}

/** Removes every value of the job. */
export async function deleteJobBlobs(ctx: MutationCtx, jobId: string): Promise<void> {
  for (const kind of ['request', 'checkpoint'] as const) await writeJobBlob(ctx, jobId, kind, null)
}
