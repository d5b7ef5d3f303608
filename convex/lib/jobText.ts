/**
 * A job's streamed text (its answer and its reasoning) kept in chunk documents beside the job,
 * never on the job document: an answer may reach 1,000,000 characters, and a Convex document
 * holds 1 MiB. Each kind is a list of chunks ordered by the character offset they start at; text
 * is appended to the last chunk until it holds CHUNK_CHARS, then a new chunk starts. A viewer on
 * another instance reads from its offset on (`textSince`), so watching costs what is new, not the
 * whole text. A rewrite that is not an append (a resumed job rewinding its text) bumps the job's
 * `text_generation`, which tells a viewer to start over.
 */
import type { Doc } from '../_generated/dataModel'
import type { MutationCtx, QueryCtx } from '../_generated/server'

/** Characters per chunk: at most 4 bytes each in UTF-8, so a chunk stays far under 1 MiB. */
export const CHUNK_CHARS = 32_000

export type TextKind = 'content' | 'reasoning'

/** The job document's fields about its text (legacy jobs kept it whole in `content` / `reasoning`). */
export type JobTextState = Partial<Pick<Doc<'background_jobs'>, 'content' | 'reasoning' | 'content_length' | 'reasoning_length' | 'text_generation'>>

async function lastChunk(ctx: QueryCtx, jobId: string, kind: TextKind) {
  return ctx.db.query('job_text').withIndex('by_job_kind_start', q => q.eq('job_id', jobId).eq('kind', kind)).order('desc').first()
}

/** Appends `text` to the job's `kind` text, which is `length` characters long now. */
export async function appendJobText(ctx: MutationCtx, jobId: string, kind: TextKind, text: string, length: number): Promise<void> {
  if (!text) return
  let rest = text
  let start = length
  const last = await lastChunk(ctx, jobId, kind)
  if (last && last.text.length < CHUNK_CHARS) {
    const room = CHUNK_CHARS - last.text.length
    await ctx.db.patch(last._id, { text: last.text + rest.slice(0, room) })
    start += Math.min(room, rest.length)
    rest = rest.slice(room)
  }
  for (let offset = 0; offset < rest.length; offset += CHUNK_CHARS) {
    await ctx.db.insert('job_text', { job_id: jobId, kind, start: start + offset, text: rest.slice(offset, offset + CHUNK_CHARS) })
  }
}

/** The job's `kind` text from character `from` on (all of it from 0). */
export async function readJobText(ctx: QueryCtx, job: Doc<'background_jobs'>, kind: TextKind, from = 0): Promise<string> {
  const legacy = kind === 'content' ? job.content : job.reasoning
  // Chunk offsets count from the end of the text a job stored before chunks (legacy, usually empty).
  const offset = Math.max(0, from - legacy.length)
  const range = (q: any) => q.eq('job_id', job.job_id).eq('kind', kind)
  const first = await ctx.db.query('job_text').withIndex('by_job_kind_start', q => range(q).lte('start', offset)).order('desc').first()
  const later = await ctx.db.query('job_text').withIndex('by_job_kind_start', q => range(q).gt('start', offset)).collect()
  const chunks = first ? [first, ...later] : later
  const base = chunks[0]?.start ?? offset
  return legacy.slice(Math.min(from, legacy.length)) + chunks.map(chunk => chunk.text).join('').slice(offset - base)
}

/** How long the chunked part of the job's `kind` text is (the offset the next chunk starts at). */
export function chunkedLength(job: Doc<'background_jobs'>, kind: TextKind): number {
  return (kind === 'content' ? job.content_length : job.reasoning_length) ?? 0
}

/** Deletes the job's text chunks (of `kinds`, both by default). */
export async function deleteJobText(ctx: MutationCtx, jobId: string, kinds: readonly TextKind[] = ['content', 'reasoning']): Promise<void> {
  for (const kind of kinds) {
    for (const chunk of await ctx.db.query('job_text').withIndex('by_job_kind_start', q => q.eq('job_id', jobId).eq('kind', kind)).collect()) await ctx.db.delete(chunk._id)
  }
}

/**
 * Makes the job's `kind` text equal `text`: an append when it continues what is stored, otherwise
 * a rewrite (which bumps the generation). Returns the fields to patch on the job document.
 */
export async function replaceJobText(ctx: MutationCtx, job: Doc<'background_jobs'>, kind: TextKind, text: string, pending: JobTextState): Promise<JobTextState> {
  const lengthField = kind === 'content' ? 'content_length' : 'reasoning_length'
  const legacy = kind === 'content' ? job.content : job.reasoning
  const stored = await readJobText(ctx, job, kind)
  if (stored === text) return {}
  if (text.startsWith(stored) && legacy === '') {
    await appendJobText(ctx, job.job_id, kind, text.slice(stored.length), stored.length)
    return { [lengthField]: text.length }
  }
  await deleteJobText(ctx, job.job_id, [kind])
  await appendJobText(ctx, job.job_id, kind, text, 0)
  return { [kind]: '', [lengthField]: text.length, text_generation: (pending.text_generation ?? job.text_generation ?? 0) + 1 }
}
