import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gunzipSync } from 'node:zlib'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { SQLITE_MIGRATIONS } from '../../../server/lib/stores/sqlite/migrations'
import { createSqliteThreadStore } from '../../../server/lib/stores/threads/sqlite'
import { createSqliteJobStore } from '../../../server/lib/stores/jobs/sqlite'
import { createSqliteWorkflowStore } from '../../../server/lib/stores/workflows/sqlite'
import { createSqliteWorkflowRunStore } from '../../../server/lib/stores/workflows/runs-sqlite'
import { createSqliteAccountBackend } from '../../../server/lib/stores/accounts/sqlite'

// A database as each schema version left it (tests/fixtures/sqlite/, made by
// scripts/make-schema-fixtures.mjs and never rewritten), upgraded to the latest schema at start-up
// and read back through the stores: every version's data is there and usable.

const FIXTURES = new URL('../../fixtures/sqlite/', import.meta.url)
const made: string[] = []
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

/** A data directory holding the fixture of `version`; the tables it had. */
function dataDirAt(version: number): { dataDir: string, path: string, tables: Set<string> } {
  const dataDir = mkdtempSync(join(tmpdir(), `or3-upgrade-v${version}-`))
  made.push(dataDir)
  const path = join(dataDir, 'or3.sqlite')
  writeFileSync(path, gunzipSync(readFileSync(new URL(`schema-v${version}.sqlite.gz`, FIXTURES))))
  const db = new BetterSqlite3(path, { readonly: true })
  expect(db.pragma('user_version', { simple: true })).toBe(version)
  const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{ name: string }>).map(row => row.name))
  db.close()
  return { dataDir, path, tables }
}

const versions = Array.from({ length: SQLITE_MIGRATIONS.length }, (_, index) => index + 1)

describe('upgrading a database made by every earlier version', () => {
  it('has a fixture for every schema version (run scripts/make-schema-fixtures.mjs after adding a migration)', () => {
    expect(readdirSync(FIXTURES).filter(name => name.endsWith('.sqlite.gz')).sort()).toEqual(versions.map(version => `schema-v${version}.sqlite.gz`).sort())
  })

  it.each(versions)('from schema version %i: upgraded, consistent, and everything it held is read back', async (version) => {
    const { dataDir, path, tables } = dataDirAt(version)
    const jobs = createSqliteJobStore({ path })
    const threads = createSqliteThreadStore({ path })
    const workflows = createSqliteWorkflowStore({ path })
    const accounts = createSqliteAccountBackend({ path })
    const runs = createSqliteWorkflowRunStore({ path })
    try {
      const db = new BetterSqlite3(path, { readonly: true })
      expect(db.pragma('user_version', { simple: true })).toBe(SQLITE_MIGRATIONS.length)
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
      expect(db.pragma('foreign_key_check')).toEqual([])
      db.close()
      // The database as it was is kept beside it before an upgrade.
      if (version < SQLITE_MIGRATIONS.length) expect(readdirSync(join(dataDir, 'backups'))).toEqual([expect.stringMatching(new RegExp(`^or3-schema-v${version}-.*\\.sqlite$`))])

      const job = await jobs.getJob('job-1')
      expect(job).toMatchObject({ status: 'complete', content: 'Paris.', threadId: 'thread-1', messageId: 'message-2', request: { model: 'openai/gpt-4o-mini' } })
      if (tables.has('threads')) {
        expect(await threads.getThread('thread-1')).toMatchObject({ userId: 'user-1', title: 'Capitals' })
        const messages = await threads.listMessages('thread-1')
        expect(messages.map(message => [message.role, message.content])).toEqual([['user', 'What is the capital of France?'], ['assistant', 'Paris.']])
        // From schema 19 an answer keeps its usage; before, it has none (the job had it, and goes with the retention).
        expect(messages[1]!.usage).toEqual(version >= 19 ? { promptTokens: 12, completionTokens: 6, totalTokens: 18, cachedTokens: 0, reasoningTokens: 0, cost: 0.0001 } : undefined)
        expect((await threads.searchThreads('user-1', 'Paris')).map(hit => hit.thread.id)).toEqual(['thread-1'])
        expect((await threads.listThreads('user-1')).map(thread => thread.id)).toEqual(['thread-1'])
      }
      if (tables.has('thread_attachments')) {
        const file = await threads.readAttachment('file-1')
        expect(Buffer.from(file!.bytes).toString()).toBe('hello world')
      }
      if (tables.has('workflows')) {
        expect(await workflows.getWorkflow('workflow-1')).toMatchObject({ name: 'Triage', version: 1 })
        expect((await workflows.listWorkflowVersions('workflow-1')).map(item => item.version)).toEqual([1])
      }
      if (tables.has('workflow_runs')) {
        // A run kept before sizes is counted by what it holds.
        expect(await runs.getRun('run-1')).toMatchObject({ workflowName: 'Triage', job: { status: 'complete' } })
        expect(await runs.bytesOf({ userId: 'user-1' })).toBeGreaterThan(20)
        expect(await runs.bytesOf({ workflowId: 'workflow-1' })).toBe(await runs.bytesOf({ userId: 'user-1' }))
      }
      if (tables.has('accounts')) {
        expect(await accounts.findAccountByName('Root')).toMatchObject({ id: 'user-1', role: 'admin' })
        expect((await accounts.listApiTokens('user-1')).map(token => token.id)).toEqual(['token-1'])
      }
      // And it takes new writes.
      const fresh = await threads.createThread({ userId: 'user-1', title: 'After the upgrade' })
      await threads.appendMessage({ threadId: fresh.id, role: 'user', content: 'Still here?' })
      expect((await threads.searchThreads('user-1', 'Still')).map(hit => hit.thread.id)).toEqual([fresh.id])
    } finally {
      await Promise.all([jobs.close(), threads.close(), workflows.close(), accounts.close(), runs.close()])
    }
  })
})
