import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { afterEach, describe, expect, it } from 'vitest'
import { openSqliteDatabase } from '../../../server/lib/stores/sqlite/database'
import { SqliteSpace } from '../../../server/lib/stores/sqlite/space'
import { createSqliteWorkflowRunStore } from '../../../server/lib/stores/workflows/runs-sqlite'
import { keptRun } from '../../support/workflow-run-store-contract'

const dirs: string[] = []
const fresh = () => {
  const dir = mkdtempSync(join(tmpdir(), 'or3-space-'))
  dirs.push(dir)
  return join(dir, 'or3.sqlite')
}
afterEach(() => dirs.splice(0).forEach(dir => rmSync(dir, { recursive: true, force: true })))

describe('the sqlite file\'s free space', () => {
  it('is given back after deletes: a new file uses incremental auto-vacuum, and the file shrinks at the checkpoint after the steps', async () => {
    const path = fresh()
    const runs = createSqliteWorkflowRunStore({ path })
    const db = openSqliteDatabase(path)
    const space = new SqliteSpace(db, 64)
    try {
      expect(db.pragma('auto_vacuum', { simple: true })).toBe(2)
      const content = 'output '.repeat(3_000)
      for (let index = 0; index < 300; index++) {
        const run = keptRun(`run-${index}`, { startedAt: index, finishedAt: index + 1 })
        await runs.saveRun({ ...run, job: { ...run.job, content } })
      }
      db.pragma('wal_checkpoint(TRUNCATE)')
      const full = statSync(path).size
      while ((await runs.cleanupExpired(1_000)).length > 0);
      expect(space.stats().freePages).toBeGreaterThan(500)
      // Many small steps in one pass (64 pages each), then the file is cut.
      const { freedPages, steps } = await space.reclaim()
      expect(steps).toBeGreaterThan(5)
      expect(freedPages).toBeGreaterThan(500)
      expect(space.stats().freePages).toBe(0)
      expect(statSync(path).size).toBeLessThan(full / 5)
      // Nothing to give back: no step.
      expect(await space.reclaim()).toEqual({ freedPages: 0, steps: 0 })
    } finally {
      space.close()
      await runs.close()
    }
  })

  it('switches a file made before incremental auto-vacuum over once, when the server opens it, keeping what it holds', () => {
    const path = fresh()
    const old = new BetterSqlite3(path)
    old.pragma('journal_mode = WAL')
    old.exec('CREATE TABLE kept (id INTEGER PRIMARY KEY, body TEXT)')
    old.prepare('INSERT INTO kept (body) VALUES (?)').run('still here')
    expect(old.pragma('auto_vacuum', { simple: true })).toBe(0)
    old.close()
    const db = openSqliteDatabase(path)
    try {
      expect(db.pragma('auto_vacuum', { simple: true })).toBe(2)
      expect(db.prepare('SELECT body FROM kept').get()).toEqual({ body: 'still here' })
    } finally {
      db.close()
    }
  })
})
