import { convexTest } from 'convex-test'
import { describe, expect, it } from 'vitest'
import { useConvexStoreClock } from '../tests/support/convex-store-clock'
import { api } from './_generated/api'
import { CHUNK_CHARS } from './lib/jobText'
import schema from './schema'

// An instance's heartbeat (jobs:pulse), text kept in chunks and read from a cursor, and viewers
// counted across instances, with Convex's per-transaction limits enforced as a deployment does.

const modules = import.meta.glob('./**/*.ts')
const { secret, at } = useConvexStoreClock(1_000)

async function backend(jobIds: string[] = ['j1'], owner = 'a') {
  const t = convexTest({ schema, modules, transactionLimits: true })
  for (const jobId of jobIds) await t.mutation(api.jobs.create, { secret, jobId, userId: 'u', threadId: 't', messageId: jobId, type: 'chat', model: 'x', now: 1_000, owner, leaseMs: 3_000 })
  return t
}

const pulse = (t: Awaited<ReturnType<typeof backend>>, fields: Partial<{ owner: string, progress: Array<{ jobId: string, contentChunk?: string, reasoningChunk?: string, chunksReceived?: number }>, held: string[], viewers: Array<{ jobId: string, count: number }>, waiting: Array<{ jobId: string, requestId: string }> }>) =>
  t.mutation(api.jobs.pulse, { secret, owner: 'a', leaseMs: 3_000, progress: [], held: [], viewers: [], ...fields })

describe('the heartbeat', () => {
  it('writes the progress of several jobs in one mutation, refusing a job another instance owns', async () => {
    const t = await backend(['j1', 'j2'])
    await t.mutation(api.jobs.create, { secret, jobId: 'theirs', userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x', now: 1_000, owner: 'b', leaseMs: 3_000 })
    const reply = await pulse(t, { progress: [{ jobId: 'j1', contentChunk: 'one', chunksReceived: 1 }, { jobId: 'theirs', contentChunk: 'no' }, { jobId: 'j2', contentChunk: 'two', reasoningChunk: 'why' }] })
    expect(reply.written).toEqual([true, false, true])
    expect(await t.query(api.jobs.get, { secret, jobId: 'j1' })).toMatchObject({ content: 'one', chunksReceived: 1 })
    expect(await t.query(api.jobs.get, { secret, jobId: 'j2' })).toMatchObject({ content: 'two', reasoning: 'why' })
    expect(await t.query(api.jobs.get, { secret, jobId: 'theirs' })).toMatchObject({ content: '' })
  })

  it('renews held leases by the store\'s clock once a third has passed, and says which to stop', async () => {
    const t = await backend(['j1', 'j2'])
    at(1_500)
    expect((await pulse(t, { held: ['j1', 'j2'] })).leases).toEqual([{ jobId: 'j1', owned: true, abortRequested: false }, { jobId: 'j2', owned: true, abortRequested: false }])
    expect(await t.query(api.jobs.get, { secret, jobId: 'j1' })).toMatchObject({ leaseExpiresAt: 4_000 })
    at(2_100)
    await t.mutation(api.leases.requestAbort, { secret, jobId: 'j2' })
    expect((await pulse(t, { held: ['j1', 'j2'] })).leases).toEqual([{ jobId: 'j1', owned: true, abortRequested: false }, { jobId: 'j2', owned: true, abortRequested: true }])
    expect(await t.query(api.jobs.get, { secret, jobId: 'j1' })).toMatchObject({ leaseExpiresAt: 5_100 })
    at(9_000)
    await t.mutation(api.leases.claim, { secret, jobId: 'j1', owner: 'b', leaseMs: 3_000 })
    expect((await pulse(t, { held: ['j1'] })).leases).toEqual([{ jobId: 'j1', owned: false, abortRequested: false }])
  })

  it('names the requests its jobs wait on that were answered meanwhile', async () => {
    const t = await backend()
    const request = { id: 'r1', jobId: 'j1', userId: 'u', kind: 'approval', key: 'round-1:call-1', title: 'Run send_email?', status: 'open', createdAt: 1_000, expiresAt: 60_000 }
    await t.mutation(api.inputRequests.open, { secret, body: JSON.stringify(request) })
    const waiting = [{ jobId: 'j1', requestId: 'r1' }, { jobId: 'j1', requestId: 'gone' }]
    expect((await pulse(t, { held: ['j1'], waiting })).settled).toEqual(['gone'])
    await t.mutation(api.inputRequests.answer, { secret, jobId: 'j1', requestId: 'r1', answer: JSON.stringify({ action: 'accept' }), now: 1_100 })
    expect((await pulse(t, { held: ['j1'], waiting })).settled).toEqual(['r1', 'gone'])
  })

  it('counts viewers reported by other instances until they withdraw or stop reporting', async () => {
    const t = await backend()
    await pulse(t, { owner: 'b', viewers: [{ jobId: 'j1', count: 2 }] })
    await pulse(t, { owner: 'c', viewers: [{ jobId: 'j1', count: 1 }] })
    expect(await t.query(api.jobs.remoteViewers, { secret, jobId: 'j1', owner: 'a' })).toBe(3)
    expect(await t.query(api.jobs.remoteViewers, { secret, jobId: 'j1', owner: 'b' })).toBe(1)
    await pulse(t, { owner: 'c', viewers: [{ jobId: 'j1', count: 0 }] })
    expect(await t.query(api.jobs.remoteViewers, { secret, jobId: 'j1', owner: 'a' })).toBe(2)
    at(10_000)
    expect(await t.query(api.jobs.remoteViewers, { secret, jobId: 'j1', owner: 'a' })).toBe(0)
  })
})

describe('text in chunks, read from a cursor', () => {
  it('gives a viewer only what is new after its cursor, and all of it again after a rewrite', async () => {
    const t = await backend()
    await pulse(t, { progress: [{ jobId: 'j1', contentChunk: 'Hello', reasoningChunk: 'hm' }] })
    const first = (await t.query(api.jobs.watch, { secret, jobId: 'j1' }))!
    expect(first).toMatchObject({ restarted: true, content: 'Hello', reasoning: 'hm', cursor: { generation: 0, content: 5, reasoning: 2 } })
    expect(first.job).toMatchObject({ id: 'j1', content: '', status: 'streaming' })
    expect(first.job).not.toHaveProperty('request')
    await pulse(t, { progress: [{ jobId: 'j1', contentChunk: ', world' }] })
    const second = (await t.query(api.jobs.watch, { secret, jobId: 'j1', since: first.cursor }))!
    expect(second).toMatchObject({ restarted: false, content: ', world', reasoning: '', cursor: { generation: 0, content: 12, reasoning: 2 } })
    // A resumed job rewinds its text: the viewer is told to start over.
    await t.mutation(api.jobs.updateRunState, { secret, jobId: 'j1', content: 'Hel', now: 1, owner: 'a' })
    const third = (await t.query(api.jobs.watch, { secret, jobId: 'j1', since: second.cursor }))!
    expect(third).toMatchObject({ restarted: true, content: 'Hel', reasoning: 'hm', cursor: { generation: 1, content: 3 } })
    // Finishing with the text already stored writes nothing more.
    await t.mutation(api.jobs.finish, { secret, jobId: 'j1', status: 'complete', content: 'Hello again', now: 1, owner: 'a' })
    const fourth = (await t.query(api.jobs.watch, { secret, jobId: 'j1', since: third.cursor }))!
    expect(fourth).toMatchObject({ restarted: false, content: 'lo again', job: { status: 'complete' } })
  })

  it('keeps a million-character non-ASCII answer under every Convex limit, streamed, finished, listed and deleted', async () => {
    const t = await backend()
    const piece = 'é漢🙂'.repeat(2_000) // 8,000 UTF-16 units, about 18 KB in UTF-8
    let expected = ''
    for (let index = 0; index < 125; index++) {
      await pulse(t, { progress: [{ jobId: 'j1', contentChunk: piece }] })
      expected += piece
    }
    expect(expected.length).toBe(1_000_000)
    const job = (await t.query(api.jobs.get, { secret, jobId: 'j1' }))!
    expect(job.content).toBe(expected)
    await t.mutation(api.jobs.finish, { secret, jobId: 'j1', status: 'complete', content: expected, now: 1, owner: 'a' })
    await t.run(async (ctx) => {
      const chunks = await ctx.db.query('job_text').collect()
      expect(chunks.length).toBe(Math.ceil(1_000_000 / CHUNK_CHARS))
      expect(Math.max(...chunks.map(chunk => chunk.text.length))).toBe(CHUNK_CHARS)
    })
    const [listed] = await t.query(api.jobs.listByUser, { secret, userId: 'u', limit: 200 })
    expect(listed).toMatchObject({ id: 'j1', content: '', listedContentLength: 1_000_000 })
    at(100_000)
    expect(await t.mutation(api.jobs.cleanupExpired, { secret, finishedBefore: 50_000 })).toEqual({ deleted: 1, hasMore: false })
    await t.run(async (ctx) => {
      expect(await ctx.db.query('job_text').collect()).toEqual([])
    })
  })

  it('deletes finished jobs in passes a transaction can hold', async () => {
    const t = await backend(['j1', 'j2', 'j3'])
    const text = 'x'.repeat(900_000)
    for (const jobId of ['j1', 'j2', 'j3']) await t.mutation(api.jobs.finish, { secret, jobId, status: 'complete', content: text, now: 1, owner: 'a' })
    at(100_000)
    expect(await t.mutation(api.jobs.cleanupExpired, { secret, finishedBefore: 50_000 })).toEqual({ deleted: 2, hasMore: true })
    expect(await t.mutation(api.jobs.cleanupExpired, { secret, finishedBefore: 50_000 })).toEqual({ deleted: 1, hasMore: false })
  })
})

describe('running slots counted across instances', () => {
  const create = (t: Awaited<ReturnType<typeof backend>>, jobId: string, userId: string, owner: string, caps = { user: 2, total: 3 }) =>
    t.mutation(api.jobs.create, { secret, jobId, userId, threadId: 't', messageId: jobId, type: 'chat', model: 'x', now: 1, owner, leaseMs: 3_000, caps })

  it('refuses a user\'s job past their cap whichever instance starts it, and the deployment\'s past its own', async () => {
    const t = await backend([])
    expect(await create(t, 'a1', 'ann', 'instance-a')).toBe('a1')
    expect(await create(t, 'a2', 'ann', 'instance-b')).toBe('a2')
    expect(await create(t, 'a3', 'ann', 'instance-a')).toEqual({ refused: 'user', limit: 2 })
    expect(await create(t, 'b1', 'bob', 'instance-b')).toBe('b1')
    expect(await create(t, 'c1', 'cat', 'instance-a')).toEqual({ refused: 'server', limit: 3 })
    // A refused start leaves nothing behind; an ended job frees its slot.
    expect(await t.query(api.jobs.get, { secret, jobId: 'a3' })).toBeNull()
    await t.mutation(api.jobs.finish, { secret, jobId: 'a1', status: 'complete', now: 1, owner: 'instance-a' })
    expect(await create(t, 'a3', 'ann', 'instance-a')).toBe('a3')
  })

  it('does not count a job waiting for a person, and frees the slots of a dead instance once they expire', async () => {
    const t = await backend([])
    await create(t, 'a1', 'ann', 'instance-a')
    await create(t, 'a2', 'ann', 'instance-a')
    expect(await t.mutation(api.jobs.setParked, { secret, jobId: 'a1', parked: true })).toBe(true)
    expect(await create(t, 'a3', 'ann', 'instance-b')).toBe('a3')
    expect(await t.mutation(api.jobs.setParked, { secret, jobId: 'a1', parked: false })).toBe(true)
    expect(await create(t, 'a4', 'ann', 'instance-b')).toEqual({ refused: 'user', limit: 2 })
    // instance-a dies: its leases and slots lapse; instance-b's are renewed by its heartbeat.
    at(3_500)
    await pulse(t, { owner: 'instance-b', held: ['a3'] })
    at(6_200)
    expect(await create(t, 'a4', 'ann', 'instance-b')).toBe('a4')
    expect(await create(t, 'a5', 'ann', 'instance-b')).toEqual({ refused: 'user', limit: 2 })
  })
})
