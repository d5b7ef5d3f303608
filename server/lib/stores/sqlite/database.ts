/**
 * Opening the app's one sqlite file: every store (jobs, threads, workflows) opens its own
 * connection through here, and a start-up applies the missing migrations in one transaction.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3, { type Database } from 'better-sqlite3'
import { SQLITE_BUSY_TIMEOUT_MS } from './busy'
import { SQLITE_MIGRATIONS } from './migrations'

/** Brings `db` up to the latest schema version; returns the version it ends at. */
export function migrateSqliteSchema(db: Database): number {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current > SQLITE_MIGRATIONS.length) {
    throw new Error(`The database is at schema version ${current}, newer than this server knows (${SQLITE_MIGRATIONS.length}). Upgrade the server or point NUXT_DATA_DIR elsewhere.`)
  }
  db.transaction(() => {
    for (let version = current + 1; version <= SQLITE_MIGRATIONS.length; version++) {
      db.exec(SQLITE_MIGRATIONS[version - 1]!)
      db.pragma(`user_version = ${version}`)
    }
  })()
  return SQLITE_MIGRATIONS.length
}

/**
 * Opens the app's sqlite file (creating its directory), in WAL mode with foreign keys on, migrated
 * to the latest schema, with a short busy timeout (callers retry: `withBusyRetry`). Each store opens its own connection to it.
 */
export function openSqliteDatabase(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new BetterSqlite3(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  // Opening and migrating happen once, at start-up: wait for a lock as long as it takes there.
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  migrateSqliteSchema(db)
  // Serving: never block the event loop for long on another process's lock (see busy.ts).
  db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
  return db
}
