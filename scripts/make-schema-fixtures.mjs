// Writes tests/fixtures/sqlite/schema-v<N>.sqlite.gz: the database as the app at schema version N
// left it (the migrations up to N, then a person's data as that version stored it: an account, a
// token, a conversation with a question, an answer and a file, its job and notification, a saved
// workflow and its run, a setting, a day's usage). tests/unit/stores/sqlite-upgrades.test.ts
// upgrades each to the latest schema and reads it back. A fixture, once written, is never
// rewritten (it stands for what that version made): after adding a migration, run
// `node scripts/make-schema-fixtures.mjs` to add the new version's.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import BetterSqlite3 from 'better-sqlite3'
import { createJiti } from 'jiti'

const jiti = createJiti(import.meta.url)
const { SQLITE_MIGRATIONS } = await jiti.import('../server/lib/stores/sqlite/migrations.ts')
const { WORKFLOW_EXAMPLES } = await jiti.import('../server/lib/workflows/examples.ts')

const T = Date.UTC(2026, 0, 15, 12)
const definition = JSON.stringify(WORKFLOW_EXAMPLES['triage-router'])
const request = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'What is the capital of France?' }], fields: {} })
const usage = JSON.stringify({ promptTokens: 12, completionTokens: 6, totalTokens: 18, cachedTokens: 0, reasoningTokens: 0, cost: 0.0001 })
const attachment = { id: 'file-1', name: 'notes.txt', mediaType: 'text/plain', kind: 'text', size: 11 }

/** Rows by table, in the order they are inserted; a column the version's table lacks is left out. */
const SEED = {
  accounts: [{ id: 'user-1', name: 'Root', name_key: 'root', password_hash: 'scrypt$16384$8$1$c2FsdA$aGFzaA', role: 'admin', disabled: 0, session_version: 1, created_at: T }],
  api_tokens: [{ id: 'token-1', user_id: 'user-1', name: 'CI', prefix: 'or3_fixture', token_hash: 'fixture-token-hash', created_at: T, last_used_at: null }],
  invites: [{ code_hash: 'fixture-invite-hash', created_by: 'user-1', created_at: T, expires_at: T + 86_400_000, used_at: null }],
  settings: [{ key: 'instance:signup', value: 'invite' }],
  usage_daily: [{ user_id: 'user-1', day: '2026-01-15', tokens: 18, cost: 0.0001, jobs: 1 }],
  threads: [{ id: 'thread-1', user_id: 'user-1', title: 'Capitals', created_at: T, updated_at: T + 2_000, active_message_id: 'message-2', pinned: 1, folder_id: null, settings: null }],
  thread_messages: [
    { id: 'message-1', thread_id: 'thread-1', sequence: 1, role: 'user', content: 'What is the capital of France?', created_at: T + 1_000, parent_id: null, attachments: JSON.stringify([attachment]) },
    { id: 'message-2', thread_id: 'thread-1', sequence: 2, role: 'assistant', content: 'Paris.', created_at: T + 2_000, parent_id: 'message-1', model: 'openai/gpt-4o-mini', job_id: 'job-1', status: 'complete', finish_reason: 'stop', tool_calls: null, usage },
  ],
  thread_attachments: [{ id: 'file-1', thread_id: 'thread-1', user_id: 'user-1', name: attachment.name, media_type: attachment.mediaType, kind: 'text', size: 11, created_at: T + 1_000, bytes: Buffer.from('hello world') }],
  background_jobs: [
    { id: 'job-1', user_id: 'user-1', thread_id: 'thread-1', message_id: 'message-2', type: 'chat', model: 'openai/gpt-4o-mini', status: 'complete', content: 'Paris.', reasoning: '', chunks_received: 3, active_tool_calls: '[]', tool_rounds: '[]', usage, finish_reason: 'stop', started_at: T + 1_000, updated_at: T + 2_000, completed_at: T + 2_000, resume_count: 0, request },
    { id: 'run-1', user_id: 'user-1', thread_id: 'workflow-workflow-1', message_id: 'run-1', type: 'workflow', model: 'openai/gpt-4o-mini', status: 'complete', content: 'Routed.', reasoning: '', chunks_received: 1, active_tool_calls: '[]', tool_rounds: '[]', finish_reason: 'stop', started_at: T + 3_000, updated_at: T + 4_000, completed_at: T + 4_000, resume_count: 0 },
  ],
  job_notifications: [{ id: 'note-1', user_id: 'user-1', job_id: 'job-1', thread_id: 'thread-1', kind: 'job-complete', title: 'Your answer is ready', body: 'Paris.', created_at: T + 2_000, read_at: null }],
  workflows: [{ id: 'workflow-1', user_id: 'user-1', name: 'Triage', definition, created_at: T, updated_at: T, version: 1 }],
  workflow_versions: [{ workflow_id: 'workflow-1', version: 1, name: 'Triage', definition, created_at: T, created_by: 'user-1', note: null }],
  workflow_runs: [{ job_id: 'run-1', user_id: 'user-1', workflow_id: 'workflow-1', status: 'complete', started_at: T + 3_000, finished_at: T + 4_000, summary: JSON.stringify({ workflowName: 'Triage' }), job: JSON.stringify({ id: 'run-1', status: 'complete' }), size: 120 }],
}

function seed(db) {
  for (const [table, rows] of Object.entries(SEED)) {
    const columns = new Set(db.pragma(`table_info(${table})`).map(column => column.name))
    if (columns.size === 0) continue
    for (const row of rows) {
      const present = Object.keys(row).filter(column => columns.has(column))
      db.prepare(`INSERT INTO ${table} (${present.join(', ')}) VALUES (${present.map(() => '?').join(', ')})`).run(...present.map(column => row[column]))
    }
  }
}

const out = new URL('../tests/fixtures/sqlite/', import.meta.url)
mkdirSync(out, { recursive: true })
const work = mkdtempSync(join(tmpdir(), 'or3-schema-fixture-'))
try {
  for (let version = 1; version <= SQLITE_MIGRATIONS.length; version++) {
    const target = new URL(`schema-v${version}.sqlite.gz`, out)
    if (existsSync(target) && !process.argv.includes('--force')) continue
    const path = join(work, `v${version}.sqlite`)
    const db = new BetterSqlite3(path)
    for (let applied = 1; applied <= version; applied++) {
      db.exec(SQLITE_MIGRATIONS[applied - 1])
      db.pragma(`user_version = ${applied}`)
    }
    seed(db)
    db.close()
    const compact = join(work, `v${version}-compact.sqlite`)
    const source = new BetterSqlite3(path)
    source.prepare('VACUUM INTO ?').run(compact)
    source.close()
    writeFileSync(target, gzipSync(readFileSync(compact), { level: 9 }))
    console.log(`tests/fixtures/sqlite/schema-v${version}.sqlite.gz written`)
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
