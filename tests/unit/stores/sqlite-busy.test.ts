import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3, { type Database } from 'better-sqlite3'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createSqliteJobStore } from '../../../server/lib/stores/jobs/sqlite'
import { StoreBusyError, withBusyRetry } from '../../../server/lib/stores/sqlite/busy'
import { createSqliteThreadStore } from '../../../server/lib/stores/threads/sqlite'

let directory: string
let path: string
let locker: Database

beforeEach(() => {
  directory = mkdtempSync(join(tmpdir(), 'or3-busy-'))
  path = join(directory, 'or3.sqlite')
  createSqliteThreadStore({ path }).close()
  // Another connection (as another process would) holds the write lock.
  locker = new BetterSqlite3(path)
})

afterEach(() => {
  if (locker.inTransaction) locker.exec('ROLLBACK')
  locker.close()
  rmSync(directory, { recursive: true, force: true })
})

describe('a database another connection holds locked', () => {
  it('fails a write with StoreBusyError after the deadline, while reads and timers go on meanwhile', async () => {
    const threads = withBusyRetry(createSqliteThreadStore({ path }), { deadlineMs: 300, firstDelayMs: 5 })
    const existing = await threads.createThread({ userId: 'u', title: 'before' })
    locker.exec('BEGIN IMMEDIATE')
    let ticks = 0
    const ticker = setInterval(() => ticks++, 5)
    const write = threads.createThread({ userId: 'u', title: 'during' })
    // The event loop is free while the write waits: a read is answered and timers fire.
    expect(await threads.getThread(existing.id)).toMatchObject({ title: 'before' })
    const error = await write.catch(caught => caught)
    clearInterval(ticker)
    expect(StoreBusyError.isInstance(error)).toBe(true)
    expect((error as StoreBusyError).message).toMatch(/database is busy.*try again/)
    expect(ticks).toBeGreaterThan(5)
    expect(await threads.listThreads('u')).toHaveLength(1)
    await threads.close()
  })

  it('lands the write once the lock is released within the deadline', async () => {
    const threads = withBusyRetry(createSqliteThreadStore({ path }), { deadlineMs: 2_000, firstDelayMs: 5 })
    locker.exec('BEGIN IMMEDIATE')
    setTimeout(() => locker.exec('COMMIT'), 60)
    expect(await threads.createThread({ userId: 'u', title: 'later' })).toMatchObject({ title: 'later' })
    await threads.close()
  })

  it('retries the job store\'s own ports too (notifications, input requests) while locked', async () => {
    const jobs = withBusyRetry(createSqliteJobStore({ path }), { deadlineMs: 5_000, firstDelayMs: 5 })
    const job = await jobs.createJob({ userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'demo' })
    locker.exec('BEGIN IMMEDIATE')
    // Both first tries meet the lock as they are called; released now, their retries land.
    const note = jobs.notifications.add({ userId: 'u', jobId: job.id, threadId: 't', kind: 'job-complete', title: 'Done', body: 'x' })
    const request = jobs.inputRequests.open({ jobId: job.id, userId: 'u', key: 'k', kind: 'question', title: 'Go on?', expiresAt: Date.now() + 60_000 })
    locker.exec('COMMIT')
    expect(await note).toMatchObject({ title: 'Done' })
    expect(await request).toMatchObject({ status: 'open', key: 'k' })
    expect(await jobs.notifications.list('u')).toHaveLength(1)
    await jobs.close()
  })

  it('makes the job store ping fail while locked (GET /api/health reports it) and pass after', async () => {
    const jobs = withBusyRetry(createSqliteJobStore({ path }), { deadlineMs: 100, firstDelayMs: 5 })
    await expect(jobs.ping()).resolves.toBeUndefined()
    locker.exec('BEGIN IMMEDIATE')
    await expect(jobs.ping()).rejects.toThrow(StoreBusyError)
    locker.exec('COMMIT')
    await expect(jobs.ping()).resolves.toBeUndefined()
    await jobs.close()
  })
})
