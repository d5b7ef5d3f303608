import { convexTest } from 'convex-test'
import { describe, expect, it } from 'vitest'
import { useConvexStoreClock } from '../tests/support/convex-store-clock'
import { api } from './_generated/api'
import schema from './schema'

const modules = import.meta.glob('./**/*.ts')
// Leases run on the store's clock (Date.now() inside the functions), set here.
const { secret, at } = useConvexStoreClock(1_000)

async function withJob(options: { owner?: string, leaseMs?: number } = {}) {
  const t = convexTest({ schema, modules, transactionLimits: true })
  await t.mutation(api.jobs.create, { secret, jobId: 'j1', userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x', now: 1_000, ...options })
  return t
}

describe('leases', () => {
  it('lets only the holder renew; another instance claims the job once the lease has expired', async () => {
    const t = await withJob({ owner: 'a', leaseMs: 1_000 })
    at(1_500)
    expect(await t.mutation(api.leases.renew, { secret, jobId: 'j1', owner: 'a', leaseMs: 1_000 })).toEqual({ owned: true, abortRequested: false })
    at(2_000)
    expect(await t.mutation(api.leases.claim, { secret, jobId: 'j1', owner: 'b', leaseMs: 1_000 })).toBe(false)
    expect(await t.query(api.leases.listOrphaned, { secret })).toEqual([])

    at(2_600)
    const orphaned = await t.query(api.leases.listOrphaned, { secret })
    expect(orphaned.map(job => job.id)).toEqual(['j1'])
    expect(await t.mutation(api.leases.claim, { secret, jobId: 'j1', owner: 'b', leaseMs: 1_000 })).toBe(true)
    at(2_700)
    expect(await t.mutation(api.leases.renew, { secret, jobId: 'j1', owner: 'a', leaseMs: 1_000 })).toEqual({ owned: false, abortRequested: false })
    expect(await t.query(api.jobs.get, { secret, jobId: 'j1' })).toMatchObject({ leaseOwner: 'b', leaseExpiresAt: 3_600 })
  })

  it('refuses writes from an instance that lost the lease, and accepts the holder\'s', async () => {
    const t = await withJob({ owner: 'a', leaseMs: 1_000 })
    at(5_000)
    await t.mutation(api.leases.claim, { secret, jobId: 'j1', owner: 'b', leaseMs: 1_000 })
    expect(await t.mutation(api.jobs.appendProgress, { secret, jobId: 'j1', contentChunk: 'late', now: 5_001, owner: 'a' })).toBe(false)
    expect(await t.mutation(api.jobs.updateRunState, { secret, jobId: 'j1', toolExecution: { round: 1, execution: { id: 'c', name: 'n', arguments: '{}', result: 'r', executionTimeMs: 1 } }, now: 5_001, owner: 'a' })).toBe(false)
    expect(await t.mutation(api.jobs.finish, { secret, jobId: 'j1', status: 'complete', now: 5_001, owner: 'a' })).toBe(false)
    expect(await t.mutation(api.jobs.appendProgress, { secret, jobId: 'j1', contentChunk: 'mine', now: 5_002, owner: 'b' })).toBe(true)
    expect(await t.query(api.jobs.get, { secret, jobId: 'j1' })).toMatchObject({ status: 'streaming', content: 'mine' })
  })

  it('reads time from the store, never from an instance: a fast clock on one instance takes nothing over', async () => {
    const t = await withJob({ owner: 'a', leaseMs: 1_000 })
    // An instance whose clock runs a minute ahead (an older version sent its time) takes nothing over.
    at(1_900)
    expect(await t.mutation(api.leases.claim, { secret, jobId: 'j1', owner: 'b', leaseMs: 1_000, now: 61_900 })).toBe(false)
    expect(await t.query(api.leases.listOrphaned, { secret, now: 61_900 })).toEqual([])
  })

  it('passes an abort request to the holder through its next renewal', async () => {
    const t = await withJob({ owner: 'a', leaseMs: 1_000 })
    at(1_100)
    expect(await t.mutation(api.leases.requestAbort, { secret, jobId: 'j1' })).toBe(true)
    at(1_200)
    expect(await t.mutation(api.leases.renew, { secret, jobId: 'j1', owner: 'a', leaseMs: 1_000 })).toEqual({ owned: true, abortRequested: true })
    await t.mutation(api.jobs.finish, { secret, jobId: 'j1', status: 'aborted', now: 1_300, owner: 'a' })
    at(1_400)
    expect(await t.mutation(api.leases.requestAbort, { secret, jobId: 'j1' })).toBe(false)
    const job = await t.query(api.jobs.get, { secret, jobId: 'j1' })
    expect(job).toMatchObject({ status: 'aborted' })
    expect(job).not.toHaveProperty('leaseOwner')
  })

  it('releases a lease at once on graceful shutdown, only for its holder', async () => {
    const t = await withJob({ owner: 'a', leaseMs: 60_000 })
    expect(await t.mutation(api.leases.release, { secret, jobId: 'j1', owner: 'b' })).toBe(false)
    expect(await t.mutation(api.leases.release, { secret, jobId: 'j1', owner: 'a' })).toBe(true)
    at(1_001)
    expect((await t.query(api.leases.listOrphaned, { secret })).map(job => job.id)).toEqual(['j1'])
  })
})

describe('watch and schema', () => {
  it('serves viewers the job without its request, checkpoint or key', async () => {
    const t = convexTest({ schema, modules, transactionLimits: true })
    await t.mutation(api.jobs.create, { secret, jobId: 'j1', userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x', now: 1, request: '{"model":"x"}', apiKeyCiphertext: 'v1.sealed' })
    await t.mutation(api.jobs.updateRunState, { secret, jobId: 'j1', checkpoint: '{"rounds":1}', now: 2 })
    await t.mutation(api.jobs.appendProgress, { secret, jobId: 'j1', contentChunk: 'hi', activeToolCalls: [{ id: 'c', name: 'calculate', arguments: '{}', round: 1, status: 'running' }], now: 3 })
    const watched = await t.query(api.jobs.watch, { secret, jobId: 'j1' })
    expect(watched).toMatchObject({ content: 'hi', job: { id: 'j1', activeToolCalls: [{ id: 'c', status: 'running' }] } })
    const view = watched!.job
    expect(view).not.toHaveProperty('request')
    expect(view).not.toHaveProperty('checkpoint')
    expect(view).not.toHaveProperty('apiKeyCiphertext')
    expect(await t.query(api.jobs.watch, { secret, jobId: 'nope' })).toBeNull()
  })

  it('validates arguments against the schema', async () => {
    const t = convexTest({ schema, modules, transactionLimits: true })
    await expect(t.mutation(api.jobs.create, { secret, jobId: 'j1', userId: 'u', threadId: 't', messageId: 'm', type: 'poem' as 'chat', model: 'x', now: 1 })).rejects.toThrow(/Validator|validator|type/)
    await expect(t.mutation(api.jobs.finish, { secret, jobId: 'j1', status: 'done' as 'complete', now: 1 })).rejects.toThrow()
    await expect(t.mutation(api.notifications.add, { secret, userId: 'u', jobId: 'j', threadId: 't', kind: 'job-exploded' as 'job-complete', title: 'x', body: 'y', now: 1 })).rejects.toThrow()
  })

  it('deletes expired jobs in batches, with their tool calls, checkpoint and notifications', async () => {
    const t = convexTest({ schema, modules, transactionLimits: true })
    for (let index = 0; index < 5; index++) {
      const jobId = `j${index}`
      await t.mutation(api.jobs.create, { secret, jobId, userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x', now: 1 })
      await t.mutation(api.jobs.updateRunState, { secret, jobId, toolExecution: { round: 1, execution: { id: 'c', name: 'n', arguments: '{}', result: 'r', executionTimeMs: 1 } }, now: 2 })
      await t.mutation(api.notifications.add, { secret, userId: 'u', jobId, threadId: 't', kind: 'job-complete', title: 'Done', body: 'b', now: 3 })
      await t.mutation(api.jobs.finish, { secret, jobId, status: 'complete', now: 10 })
    }
    expect(await t.mutation(api.jobs.cleanupExpired, { secret, finishedBefore: 100, batch: 3 })).toEqual({ deleted: 3, hasMore: true })
    expect(await t.mutation(api.jobs.cleanupExpired, { secret, finishedBefore: 100, batch: 3 })).toEqual({ deleted: 2, hasMore: false })
    await t.run(async (ctx) => {
      expect(await ctx.db.query('job_tool_calls').collect()).toEqual([])
      expect(await ctx.db.query('job_notifications').collect()).toEqual([])
      expect(await ctx.db.query('background_jobs').collect()).toEqual([])
    })
  })
})
