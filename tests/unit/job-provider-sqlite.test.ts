import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { createSqliteJobProvider } from '../../server/utils/background-jobs/providers/sqlite'
import { SQLITE_MIGRATIONS } from '../../server/lib/background-jobs/sqlite-schema'
import { describeJobProviderContract } from '../support/job-provider-contract'

const directory = mkdtempSync(join(tmpdir(), 'or3-sqlite-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

let fileNumber = 0
describeJobProviderContract('sqlite', () => createSqliteJobProvider({ path: join(directory, `contract-${++fileNumber}.sqlite`) }))

describe('sqlite job provider', () => {
  it('creates its directory and file on first use and keeps jobs across a reopen', async () => {
    const path = join(directory, 'nested', 'deeper', 'jobs.sqlite')
    const first = createSqliteJobProvider({ path })
    const job = await first.createJob({ userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'x' })
    await first.updateJob(job.id, { contentChunk: 'kept' })
    await first.close()

    const second = createSqliteJobProvider({ path })
    expect(await second.getJob(job.id)).toMatchObject({ status: 'streaming', content: 'kept' })
    expect((await second.listStreamingJobs()).map(item => item.id)).toEqual([job.id])
    await second.close()
  })

  it('records the schema version and refuses a database from a newer server', async () => {
    const path = join(directory, 'versions.sqlite')
    await createSqliteJobProvider({ path }).close()
    const db = new Database(path)
    expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length)
    db.pragma(`user_version = ${SQLITE_MIGRATIONS.length + 1}`)
    db.close()
    expect(() => createSqliteJobProvider({ path })).toThrow(/newer than this server knows/)
  })
})
