/**
 * Running slots counted across instances: one small document per running job (its user, whether
 * it waits for a person, until when its runner vouches for it), taken in the same transaction that
 * creates the job, renewed with its lease, freed when it ends. Counting small documents keeps a cap
 * check cheap; a slot whose instance died frees itself when it expires (or is renewed by the
 * instance that resumes the job).
 */
import type { MutationCtx, QueryCtx } from '../_generated/server'

/** The caps a new job is checked against: its user's running jobs, and all the deployment's (0: none). */
export interface SlotCaps {
  user: number
  total: number
}

/** A slot holds this long past its last renewal, whatever the lease (a lease renews it). */
export const SLOT_GRACE_MS = 5_000

/** Slots this many past a cap are never read (the count stops at the cap). */
async function runningSlots(ctx: QueryCtx, userId: string | undefined, cap: number, now: number): Promise<number> {
  const query = userId === undefined
    ? ctx.db.query('job_slots').withIndex('by_expires', q => q.gt('expires_at', now))
    : ctx.db.query('job_slots').withIndex('by_user_and_expires', q => q.eq('user_id', userId).gt('expires_at', now))
  let running = 0
  for await (const slot of query) {
    if (!slot.parked) running++
    if (running >= cap) break
  }
  return running
}

/** Which cap a new job of `userId` would pass, if any. */
export async function refusedCap(ctx: QueryCtx, userId: string, caps: SlotCaps, now: number): Promise<{ scope: 'user' | 'server', limit: number } | null> {
  if (caps.user > 0 && await runningSlots(ctx, userId, caps.user, now) >= caps.user) return { scope: 'user', limit: caps.user }
  if (caps.total > 0 && await runningSlots(ctx, undefined, caps.total, now) >= caps.total) return { scope: 'server', limit: caps.total }
  return null
}

export async function takeSlot(ctx: MutationCtx, jobId: string, userId: string, expiresAt: number): Promise<void> {
  await ctx.db.insert('job_slots', { job_id: jobId, user_id: userId, parked: false, expires_at: expiresAt })
}

async function slotOf(ctx: QueryCtx, jobId: string) {
  return ctx.db.query('job_slots').withIndex('by_job_id', q => q.eq('job_id', jobId)).unique()
}

/** Extends a running job's slot (with its lease). */
export async function renewSlot(ctx: MutationCtx, jobId: string, expiresAt: number): Promise<void> {
  const slot = await slotOf(ctx, jobId)
  if (slot && slot.expires_at < expiresAt) await ctx.db.patch(slot._id, { expires_at: expiresAt })
}

/** Marks a job's slot as waiting for a person (it stops counting as running) or running again. */
export async function parkSlot(ctx: MutationCtx, jobId: string, parked: boolean): Promise<boolean> {
  const slot = await slotOf(ctx, jobId)
  if (!slot) return false
  if (slot.parked !== parked) await ctx.db.patch(slot._id, { parked })
  return true
}

export async function freeSlot(ctx: MutationCtx, jobId: string): Promise<void> {
  const slot = await slotOf(ctx, jobId)
  if (slot) await ctx.db.delete(slot._id)
}
