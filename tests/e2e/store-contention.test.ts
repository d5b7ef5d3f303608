/**
 * Another process holding the SQLite file's write lock (a second server on the same file, a
 * backup, the sqlite3 shell), against the built server: a write waits between requests, not
 * inside them, and ends in a 503 with Retry-After; reads and other clients are answered
 * meanwhile; GET /api/health says the store is unwell, and well again once the lock is gone.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3, { type Database } from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { SessionClient } from '../support/job-stream-client'
import { useBuiltApp } from '../support/built-app'

let locker: Database | undefined
const dataDir = mkdtempSync(join(tmpdir(), 'or3-contention-'))

// After hooks run last-registered first: the lock is released, the server stops, then its data goes.
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))
const app = useBuiltApp({
  NUXT_DATA_DIR: dataDir,
  NUXT_SESSION_PASSWORD: 'a-store-contention-test-password-long-enough',
})
afterAll(() => {
  if (locker?.inTransaction) locker.exec('ROLLBACK')
  locker?.close()
})

describe('a locked SQLite file', () => {
  it('answers writes 503 with Retry-After, keeps answering reads and health, and recovers when released', async () => {
    const client = new SessionClient(app.url)
    const before = await client.post('/api/threads', { title: 'before the lock' })
    expect(before.status).toBe(201)
    const healthy = await fetch(`${app.url}/api/health`)
    expect(healthy.status).toBe(200)
    expect(await healthy.json()).toMatchObject({ status: 'ok', store: { provider: 'sqlite', ok: true }, jobs: { accepting: true }, tools: { registered: expect.any(Number) } })

    locker = new BetterSqlite3(join(dataDir, 'or3.sqlite'))
    locker.exec('BEGIN IMMEDIATE')
    const write = client.post('/api/threads', { title: 'during the lock' })
    // While the write waits: reads, other clients and the health check are answered.
    const read = await client.fetch('/api/threads')
    expect(read.status).toBe(200)
    expect((await read.json()).threads.map((thread: { title: string }) => thread.title)).toContain('before the lock')
    expect((await new SessionClient(app.url).fetch('/api/tools')).status).toBe(200)
    const unwell = await fetch(`${app.url}/api/health`)
    expect(unwell.status).toBe(503)
    expect(await unwell.json()).toMatchObject({ status: 'unavailable', store: { ok: false, error: expect.stringMatching(/busy/) } })

    const refused = await write
    expect(refused.status).toBe(503)
    expect(refused.headers.get('retry-after')).toBe('2')
    expect((await refused.json()).message).toMatch(/database is busy.*Nothing was saved; try again/)

    locker.exec('COMMIT')
    expect((await client.post('/api/threads', { title: 'after the lock' })).status).toBe(201)
    expect((await fetch(`${app.url}/api/health`)).status).toBe(200)
  })
})
