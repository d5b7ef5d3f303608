/**
 * Backing up while the server runs (`npm run bench`): a 200 MB database copied by
 * `backupDataDir` (SQLite's online backup in steps) and by `npm run backup`'s encryption, with the
 * event loop's longest stall measured meanwhile (a stall is a moment no request is answered).
 * Numbers, not assertions.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import BetterSqlite3 from 'better-sqlite3'
import { bench, describe } from 'vitest'
import { backupDataDir } from '../../server/lib/stores/sqlite/backup'
import { openSqliteDatabase } from '../../server/lib/stores/sqlite/database'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const MEGABYTES = 200

describe('backups', () => {
  bench(`a ${MEGABYTES} MB database backed up while the event loop is watched, plain and encrypted`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'or3-backup-bench-'))
    const rows: Array<{ measure: string, value: string, target: string }> = []
    try {
      const dataDir = join(dir, 'data')
      openSqliteDatabase(join(dataDir, 'or3.sqlite')).close()
      const db = new BetterSqlite3(join(dataDir, 'or3.sqlite'))
      db.exec('CREATE TABLE filler (id INTEGER PRIMARY KEY, body BLOB NOT NULL)')
      const insert = db.prepare('INSERT INTO filler (body) VALUES (?)')
      const body = Buffer.alloc(64 * 1024, 7)
      db.transaction(() => {
        for (let index = 0; index < (MEGABYTES * 1024) / 64; index++) insert.run(body)
      })()
      db.close()
      for (const passphrase of [undefined, 'a passphrase for the benchmark']) {
        const delay = monitorEventLoopDelay({ resolution: 10 })
        delay.enable()
        const started = performance.now()
        await backupDataDir({ dataDir, outDir: join(dir, passphrase ? 'encrypted' : 'plain'), app: { name: 'or3-chat', version: 'bench' }, passphrase })
        const took = performance.now() - started
        delay.disable()
        rows.push(
          { measure: `backup of ${MEGABYTES} MB${passphrase ? ', encrypted' : ''}`, value: `${(took / 1000).toFixed(2)} s (${(MEGABYTES / (took / 1000)).toFixed(0)} MB/s)`, target: '' },
          { measure: `  longest event-loop stall meanwhile${passphrase ? ', encrypted' : ''}`, value: `${(delay.max / 1e6).toFixed(0)} ms (p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms)`, target: '≤ 100 ms' },
        )
      }
    } finally {
      rmSync(dir, { recursive: true, force: true })
      console.log('\nBackups')
      console.table(rows)
    }
  }, once)
})
