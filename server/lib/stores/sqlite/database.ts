/**
 * The sqlite job store's schema as numbered migrations. `PRAGMA user_version` records the last one
 * applied; a start-up applies the missing ones in one transaction. Never edit a shipped migration:
 * add the next one.
 */
import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import BetterSqlite3, { type Database } from 'better-sqlite3'

/** Ordered migrations; index + 1 is the version. */
export const SQLITE_MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE background_jobs (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('chat', 'workflow')),
    model TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('streaming', 'complete', 'error', 'aborted')),
    content TEXT NOT NULL DEFAULT '',
    reasoning TEXT NOT NULL DEFAULT '',
    chunks_received INTEGER NOT NULL DEFAULT 0,
    active_tool_calls TEXT NOT NULL DEFAULT '[]',
    tool_rounds TEXT NOT NULL DEFAULT '[]',
    workflow_state TEXT,
    usage TEXT,
    error TEXT,
    finish_reason TEXT,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    completed_at INTEGER,
    resume_count INTEGER NOT NULL DEFAULT 0,
    request TEXT,
    checkpoint TEXT,
    api_key_ciphertext TEXT
  );
  CREATE INDEX background_jobs_by_user_status ON background_jobs (user_id, status, started_at);
  CREATE INDEX background_jobs_by_thread_message ON background_jobs (thread_id, message_id);
  CREATE INDEX background_jobs_by_status_completed ON background_jobs (status, completed_at);
  CREATE TABLE job_notifications (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    job_id TEXT NOT NULL,
    thread_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    read_at INTEGER
  );
  CREATE INDEX job_notifications_by_user_created ON job_notifications (user_id, created_at);
  CREATE INDEX job_notifications_by_job ON job_notifications (job_id);
  `,
  `
  CREATE TABLE threads (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    title TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX threads_by_user_updated ON threads (user_id, updated_at);
  CREATE TABLE thread_messages (
    id TEXT PRIMARY KEY,
    thread_id TEXT NOT NULL REFERENCES threads (id) ON DELETE CASCADE,
    sequence INTEGER NOT NULL,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
    content TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    model TEXT,
    job_id TEXT,
    status TEXT,
    reasoning TEXT,
    tool_calls TEXT,
    error TEXT,
    finish_reason TEXT
  );
  CREATE INDEX thread_messages_by_thread ON thread_messages (thread_id, created_at, sequence);
  `,
  `
  CREATE TABLE workflows (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    definition TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
  );
  CREATE INDEX workflows_by_user_updated ON workflows (user_id, updated_at);
  `,
]

/** Brings `db` up to the latest schema version; returns the version it ends at. */
export function migrateSqliteSchema(db: Database): number {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current > SQLITE_MIGRATIONS.length) {
    throw new Error(`The job database is at schema version ${current}, newer than this server knows (${SQLITE_MIGRATIONS.length}). Upgrade the server or point NUXT_DATA_DIR elsewhere.`)
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
 * Opens the app's sqlite file (creating its directory), in WAL mode with a busy timeout and
 * foreign keys on, migrated to the latest schema. Each store opens its own connection to it.
 */
export function openSqliteDatabase(path: string): Database {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true })
  const db = new BetterSqlite3(path)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.pragma('busy_timeout = 5000')
  db.pragma('foreign_keys = ON')
  migrateSqliteSchema(db)
  return db
}
