import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { createSqliteJobStore } from '../../../../server/lib/stores/jobs/sqlite'
import { SQLITE_MIGRATIONS } from '../../../../server/lib/stores/sqlite/migrations'
import { describeJobStoreContract } from '../../../support/job-store-contract'

const directory = mkdtempSync(join(tmpdir(), 'or3-sqlite-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

let fileNumber = 0
describeJobStoreContract('sqlite', () => createSqliteJobStore({ path: join(directory, `contract-${++fileNumber}.sqlite`) }))

describe('sqlite job store', () => {
  it('creates its directory and file on first use and keeps jobs across a reopen', async () => {
    const path = join(directory, 'nested', 'deeper', 'jobs.sqlite')
    const first = createSqliteJobStore({ path })
    const job = await first.createJob({ userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x' })
    await first.updateJob(job.id, { contentChunk: 'kept' })
    await first.close()

    const second = createSqliteJobStore({ path })
    expect(await second.getJob(job.id)).toMatchObject({ status: 'streaming', content: 'kept' })
    expect((await second.listJobs({ streaming: true })).map(item => item.id)).toEqual([job.id])
    await second.close()
  })

  it('records the schema version and refuses a database from a newer server', async () => {
    const path = join(directory, 'versions.sqlite')
    await createSqliteJobStore({ path }).close()
    const db = new Database(path)
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length)
    db.pragma(`user_version = ${SQLITE_MIGRATIONS.length + 1}`)
    db.close()
    expect(() => createSqliteJobStore({ path })).toThrow(/newer than this server knows/)
  })

  it('keeps every job when an older file is upgraded to the schema that knows "rejected"', async () => {
    const path = join(directory, 'upgrade.sqlite')
    const old = new Database(path)
    const before = SQLITE_MIGRATIONS.findIndex(sql => sql.includes('background_jobs_next'))
    for (const sql of SQLITE_MIGRATIONS.slice(0, before)) old.exec(sql)
    old.pragma(`user_version = ${before}`)
    old.prepare(`INSERT INTO background_jobs (id, user_id, thread_id, message_id, type, model, status, content, started_at, updated_at, checkpoint)
      VALUES ('old-job', 'u', 't', 'm', 'workflow', 'x', 'streaming', 'kept text', 1, 2, '{"rounds":1}')`).run()
    old.close()

    const store = createSqliteJobStore({ path })
    expect(await store.getJob('old-job')).toMatchObject({ status: 'streaming', content: 'kept text', startedAt: 1 })
    expect(await store.endJob('old-job', { status: 'rejected', error: { kind: 'rejected', message: 'no' } })).toBe(true)
    expect(await store.getJob('old-job')).toMatchObject({ status: 'rejected', error: { message: 'no' }, finishReason: 'rejected' })
    await store.close()
  })
})
