import { convexTest } from 'convex-test'
import { beforeEach, describe, expect, it } from 'vitest'
import { api } from './_generated/api'
import schema from './schema'

// Operations that grow with what a person keeps, run with Convex's per-transaction limits on
// (16 MiB read, 8,192 documents written…), as a deployment enforces them.

const modules = import.meta.glob('./**/*.ts')
const secret = 'a-convex-test-server-secret-of-enough-length'

beforeEach(() => {
  process.env.OR3_SERVER_SECRET = secret
})

describe('Convex\'s limits', () => {
  it('deletes a conversation with 20 MiB of files in passes, the conversation gone at once', async () => {
    const t = convexTest({ schema, modules, transactionLimits: true })
    await t.mutation(api.threads.create, { secret, threadId: 't1', userId: 'u', title: 'Files', now: 1 })
    const chunk = new Uint8Array(512 * 1024).fill(7).buffer
    for (let file = 0; file < 4; file++) {
      const attachmentId = `file-${file}`
      for (let index = 0; index < 10; index++) await t.mutation(api.threads.addAttachmentChunk, { secret, attachmentId, index, bytes: chunk })
      await t.mutation(api.threads.addAttachment, { secret, attachment: { id: attachmentId, name: `${file}.bin`, mediaType: 'application/octet-stream', kind: 'text', size: 10 * chunk.byteLength }, threadId: 't1', userId: 'u', now: 1, chunks: 10 })
    }
    for (let index = 0; index < 30; index++) {
      await t.mutation(api.threads.appendMessage, { secret, messageId: `m${index}`, threadId: 't1', role: 'user', content: 'x'.repeat(1_000), now: index })
    }
    expect(await t.query(api.threads.attachmentBytes, { secret, userId: 'u' })).toBe(20 * 1024 * 1024)

    expect(await t.mutation(api.threads.remove, { secret, threadId: 't1' })).toBe(true)
    expect(await t.query(api.threads.get, { secret, threadId: 't1' })).toBeNull()
    await t.finishAllScheduledFunctions(() => {})
    await t.run(async (ctx) => {
      expect(await ctx.db.query('thread_attachment_chunks').collect()).toEqual([])
      expect(await ctx.db.query('thread_attachments').collect()).toEqual([])
      expect(await ctx.db.query('thread_messages').collect()).toEqual([])
    })
  })
  it('keeps a job\'s long request and checkpoint in parts, and lists many such jobs within one query\'s read', async () => {
    const t = convexTest({ schema, modules, transactionLimits: true })
    const long = (size: number) => JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'Résumé 漢字 '.repeat(Math.ceil(size / 11)).slice(0, size) }] })
    await t.mutation(api.jobs.create, { secret, jobId: 'big', userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'm', now: 1, request: long(900_000) })
    await t.mutation(api.jobs.updateRunState, { secret, jobId: 'big', checkpoint: long(900_000), now: 2 })
    const big = (await t.query(api.jobs.get, { secret, jobId: 'big' }))!
    expect(big.request).toEqual(JSON.parse(long(900_000)))
    expect(big.checkpoint).toEqual(JSON.parse(long(900_000)))
    for (let index = 0; index < 30; index++) {
      await t.mutation(api.jobs.create, { secret, jobId: `j${index}`, userId: 'u', threadId: 't', messageId: `m${index}`, type: 'chat', model: 'm', now: 10 + index, request: long(150_000) })
    }
    const listed = await t.query(api.jobs.listByUser, { secret, userId: 'u', limit: 200 })
    expect(listed).toHaveLength(31)
    // Requests of one part are read until the list's budget is spent; a request of several parts never is.
    expect(listed.find(job => job.id === 'big')!.request).toBeUndefined()
    expect(listed.filter(job => job.request !== undefined).length).toBeGreaterThanOrEqual(19)
    await t.mutation(api.jobs.finish, { secret, jobId: 'big', status: 'complete', now: 3 })
    await t.run(async (ctx) => {
      expect((await ctx.db.query('job_blobs').withIndex('by_job_kind_index', q => q.eq('job_id', 'big').eq('kind', 'checkpoint')).collect())).toEqual([])
    })
  })
  it('stores an answer past 1 MiB in UTF-8 with its reasoning and tool calls, and deletes it', async () => {
    const t = convexTest({ schema, modules, transactionLimits: true })
    await t.mutation(api.threads.create, { secret, threadId: 't1', userId: 'u', title: 'Long', now: 1 })
    // 400,000 characters of three and four bytes each: about 1.3 MB in UTF-8.
    const answer = '漢字かな交じり文 🙂 '.repeat(40_000).slice(0, 400_000)
    const reasoning = 'Überlegung '.repeat(20_000)
    const toolCalls = JSON.stringify([{ id: 'c', name: 'n', result: 'é'.repeat(300_000) }])
    await t.mutation(api.threads.appendMessage, { secret, messageId: 'a1', threadId: 't1', role: 'assistant', content: '', now: 2 })
    await t.mutation(api.threads.updateMessage, { secret, messageId: 'a1', content: answer, reasoning, toolCalls, status: 'complete' })
    const message = (await t.query(api.threads.getMessage, { secret, messageId: 'a1' }))!
    expect(message.content).toBe(answer)
    expect(message.reasoning).toBe(reasoning)
    expect(JSON.stringify(message.toolCalls)).toBe(toolCalls)
    expect((await t.query(api.threads.listMessages, { secret, threadId: 't1' }))[0]!.content).toBe(answer)
    await t.mutation(api.threads.remove, { secret, threadId: 't1' })
    await t.finishAllScheduledFunctions(() => {})
    await t.run(async (ctx) => {
      expect(await ctx.db.query('thread_message_parts').collect()).toEqual([])
      expect(await ctx.db.query('thread_messages').collect()).toEqual([])
    })
  })
})
