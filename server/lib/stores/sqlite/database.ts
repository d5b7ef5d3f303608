/**
 * Opening the app's one sqlite file: every store (jobs, threads, workflows) opens its own
 * connection through here, and a start-up applies the missing migrations in one transaction,
 * after copying the database as it was (`backups/` beside it) when there is anything to upgrade.
 */
import { randomBytes } from 'node:crypto'
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join } from 'node:path'
import BetterSqlite3, { type Database } from 'better-sqlite3'
import { SQLITE_BUSY_TIMEOUT_MS } from './busy'
import { SQLITE_MIGRATIONS } from './migrations'
import { useIncrementalVacuum } from './space'

/** The database file of a data directory. */
export const DATABASE_FILE = 'or3.sqlite'
/** Where in the data directory copies are kept: those made before an upgrade, and backups unless configured elsewhere. */
export const BACKUPS_DIR = 'backups'

/** Copies taken before an upgrade that are kept (the oldest go). */
const KEPT_UPGRADE_COPIES = 3

/**
 * Brings `db` up to the latest schema version; returns the version it ends at. All missing
 * migrations run in one transaction: one that fails leaves the database as it was, and the error
 * says which and why. With `copyBeforeUpgrade`, the database is first copied there as it is.
 */
export function migrateSqliteSchema(db: Database, options: { copyBeforeUpgrade?: string } = {}): number {
  const current = db.pragma('user_version', { simple: true }) as number
  const latest = SQLITE_MIGRATIONS.length
  if (current > latest) {
    throw new Error(`The database is at schema version ${current}, newer than this server knows (${latest}). Upgrade the server or point NUXT_DATA_DIR elsewhere.`)
  }
  if (current === latest) return latest
  if (current > 0 && options.copyBeforeUpgrade) copyBeforeUpgrade(db, options.copyBeforeUpgrade, current)
  let version = current
  try {
    db.transaction(() => {
      for (version = current + 1; version <= latest; version++) {
        db.exec(SQLITE_MIGRATIONS[version - 1]!)
        db.pragma(`user_version = ${version}`)
      }
    })()
  } catch (error) {
    throw new Error(`Upgrading the database from schema version ${current} to ${latest} failed at migration ${version}: ${error instanceof Error ? error.message : String(error)}. Nothing was changed (the upgrade runs in one transaction)${current > 0 && options.copyBeforeUpgrade ? `; a copy from before it is in ${options.copyBeforeUpgrade}` : ''}.`, { cause: error })
  }
  return latest
}

/** `VACUUM INTO` a consistent copy of the database at schema `version`, keeping the newest few. */
function copyBeforeUpgrade(db: Database, dir: string, version: number): void {
  mkdirSync(dir, { recursive: true })
  const stamp = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomBytes(3).toString('hex')}`
  const path = join(dir, `or3-schema-v${version}-${stamp}.sqlite`)
  db.prepare('VACUUM INTO ?').run(path)
  const copies = readdirSync(dir).filter(name => /^or3-schema-v\d+-.*\.sqlite$/.test(name))
    .sort((a, b) => a.replace(/^or3-schema-v\d+-/, '').localeCompare(b.replace(/^or3-schema-v\d+-/, '')))
  for (const old of copies.slice(0, Math.max(0, copies.length - KEPT_UPGRADE_COPIES))) rmSync(join(dir, old), { force: true })
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
  // Before the first table (a new file), or once by a VACUUM: deleted rows' pages can be given back (space.ts).
  if (path !== ':memory:') useIncrementalVacuum(db)
  migrateSqliteSchema(db, path === ':memory:' ? {} : { copyBeforeUpgrade: join(dirname(path), BACKUPS_DIR) })
  // Serving: never block the event loop for long on another process's lock (see busy.ts).
  db.pragma(`busy_timeout = ${SQLITE_BUSY_TIMEOUT_MS}`)
  return db
}
