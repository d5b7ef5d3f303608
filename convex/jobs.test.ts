import { convexTest } from 'convex-test'
import { describe, expect, it } from 'vitest'
import { useConvexStoreClock } from '../tests/support/convex-store-clock'
import { api } from './_generated/api'
import schema from './schema'

const modules = import.meta.glob('./**/*.ts')
const { secret, at } = useConvexStoreClock(1_000)

function backend() {
  return convexTest({ schema, modules, transactionLimits: true })
}

const newJob = (jobId: string, overrides: Record<string, unknown> = {}) => ({
  secret, jobId, userId: 'user-a', threadId: 'thread-1', messageId: 'message-1', type: 'chat' as const, model: 'test/model', now: 1_000, ...overrides,
})

describe('server secret guard', () => {
  it('refuses every public function without the right secret', async () => {
    const t = backend()
    await expect(t.mutation(api.jobs.create, { ...newJob('j1'), secret: 'wrong-secret-wrong-secret-wrong-secret!' })).rejects.toThrow(/Unauthorized/)
    await expect(t.query(api.jobs.get, { secret: '', jobId: 'j1' })).rejects.toThrow(/Unauthorized/)
    await expect(t.query(api.notifications.list, { secret: 'x', userId: 'user-a', limit: 10 })).rejects.toThrow(/Unauthorized/)
    await expect(t.mutation(api.leases.requestAbort, { secret: 'y', jobId: 'j1' })).rejects.toThrow(/Unauthorized/)
    await expect(t.mutation(api.jobs.pulse, { secret: 'z', owner: 'a', leaseMs: 1_000, progress: [], held: [], viewers: [] })).rejects.toThrow(/Unauthorized/)
  })

  it('refuses everything, with what to set, while the deployment has no secret', async () => {
    delete process.env.OR3_SERVER_SECRET
    const t = backend()
    await expect(t.query(api.jobs.get, { secret, jobId: 'j1' })).rejects.toThrow(/OR3_SERVER_SECRET is not set/)
  })
})

describe('jobs', () => {
  it('creates, reads and appends to a job', async () => {
    const t = backend()
    await t.mutation(api.jobs.create, newJob('j1', { request: JSON.stringify({ model: 'm' }) }))
    await expect(t.mutation(api.jobs.create, newJob('j1'))).rejects.toThrow(/already exists/)
    expect(await t.mutation(api.jobs.appendProgress, { secret, jobId: 'j1', contentChunk: 'Hel', chunksReceived: 1, now: 2_000 })).toBe(true)
    at(3_000)
    expect(await t.mutation(api.jobs.appendProgress, { secret, jobId: 'j1', contentChunk: 'lo', reasoningChunk: 'r', chunksReceived: 2, now: 99 })).toBe(true)
    const job = await t.query(api.jobs.get, { secret, jobId: 'j1' })
    // Progress is stamped by the store's clock, not the instance's.
    expect(job).toMatchObject({ id: 'j1', status: 'streaming', content: 'Hello', reasoning: 'r', chunksReceived: 2, updatedAt: 3_000, request: { model: 'm' } })
    expect(await t.query(api.jobs.get, { secret, jobId: 'missing' })).toBeNull()
  })

  it('pages through a user\'s jobs, newest first', async () => {
    const t = backend()
    for (let index = 0; index < 7; index++) await t.mutation(api.jobs.create, newJob(`j${index}`, { now: index }))
    await t.mutation(api.jobs.create, newJob('other', { userId: 'user-b', now: 100 }))
    const first = await t.query(api.jobs.listPage, { secret, userId: 'user-a', paginationOpts: { numItems: 3, cursor: null } })
    expect(first.page.map(job => job.id)).toEqual(['j6', 'j5', 'j4'])
    expect(first.isDone).toBe(false)
    const second = await t.query(api.jobs.listPage, { secret, userId: 'user-a', paginationOpts: { numItems: 3, cursor: first.continueCursor } })
    expect(second.page.map(job => job.id)).toEqual(['j3', 'j2', 'j1'])
    const third = await t.query(api.jobs.listPage, { secret, userId: 'user-a', paginationOpts: { numItems: 3, cursor: second.continueCursor } })
    expect(third.page.map(job => job.id)).toEqual(['j0'])
    expect(third.isDone).toBe(true)
  })
})
