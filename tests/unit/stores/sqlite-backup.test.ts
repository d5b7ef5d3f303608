import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { backupDataDir, BackupError, DataBackups, restoreBackup } from '../../../server/lib/stores/sqlite/backup'
import { migrateSqliteSchema, openSqliteDatabase } from '../../../server/lib/stores/sqlite/database'
import { SQLITE_MIGRATIONS } from '../../../server/lib/stores/sqlite/migrations'
import { createSqliteThreadStore } from '../../../server/lib/stores/threads/sqlite'

const made: string[] = []
const directory = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})
const app = { name: 'or3-chat', version: '0.1.0' }

/** A data directory with a database holding one conversation, and a generated secret. */
async function dataDirWithThread(title = 'Kept safe') {
  const dataDir = directory('or3-backup-data-')
  const threads = createSqliteThreadStore({ path: join(dataDir, 'or3.sqlite') })
  const thread = await threads.createThread({ userId: 'u1', title })
  await threads.appendMessage({ threadId: thread.id, role: 'user', content: 'Remember this.' })
  writeFileSync(join(dataDir, 'session-secret'), 'a-generated-secret-of-enough-length-1234\n', { mode: 0o600 })
  return { dataDir, threads, thread }
}

describe('backups of the data directory', () => {
  it('copies the database while it is written to, with the secret and a manifest, and restores it whole', async () => {
    const { dataDir, threads, thread } = await dataDirWithThread()
    // Writes go on while the backup is made (a long transaction would make it start over, not tear).
    let writing = true
    const writer = (async () => {
      for (let index = 0; writing && index < 200; index++) await threads.appendMessage({ threadId: thread.id, role: 'user', content: `line ${index} ${'x'.repeat(2_000)}` })
    })()
    const { dir, manifest } = await backupDataDir({ dataDir, outDir: directory('or3-backups-'), app })
    writing = false
    await writer
    await threads.close()
    expect(manifest).toMatchObject({ format: 1, app, schemaVersion: SQLITE_MIGRATIONS.length, includesSecret: true })
    expect(manifest.files.map(file => file.name)).toEqual(['or3.sqlite', 'session-secret'])
    expect(readdirSync(dir).sort()).toEqual(['manifest.json', 'or3.sqlite', 'session-secret'])

    const restored = directory('or3-restored-')
    await restoreBackup({ backupDir: dir, dataDir: restored })
    const db = new BetterSqlite3(join(restored, 'or3.sqlite'), { readonly: true })
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok')
    db.close()
    const reopened = createSqliteThreadStore({ path: join(restored, 'or3.sqlite') })
    expect((await reopened.getThread(thread.id))?.title).toBe('Kept safe')
    expect((await reopened.listMessages(thread.id))[0]?.content).toBe('Remember this.')
    await reopened.close()
    expect(readFileSync(join(restored, 'session-secret'), 'utf8')).toBe(readFileSync(join(dataDir, 'session-secret'), 'utf8'))
  })

  it('encrypts every file with a passphrase, and restores only with it', async () => {
    const { dataDir, threads } = await dataDirWithThread()
    await threads.close()
    const { dir, manifest } = await backupDataDir({ dataDir, outDir: directory('or3-backups-'), app, passphrase: 'correct horse battery staple' })
    expect(manifest.encryption).toMatchObject({ cipher: 'aes-256-gcm', kdf: 'scrypt' })
    expect(readdirSync(dir).sort()).toEqual(['manifest.json', 'or3.sqlite.enc', 'session-secret.enc'])
    expect(readFileSync(join(dir, 'or3.sqlite.enc')).includes(Buffer.from('SQLite format 3'))).toBe(false)
    expect(readFileSync(join(dir, 'session-secret.enc')).includes(Buffer.from('a-generated-secret'))).toBe(false)

    await expect(restoreBackup({ backupDir: dir, dataDir: directory('or3-restored-') })).rejects.toThrow(/encrypted: give its passphrase/)
    const wrong = directory('or3-restored-')
    await expect(restoreBackup({ backupDir: dir, dataDir: wrong, passphrase: 'wrong' })).rejects.toThrow(/could not be decrypted/)
    expect(readdirSync(wrong)).toEqual([])
    const restored = directory('or3-restored-')
    await restoreBackup({ backupDir: dir, dataDir: restored, passphrase: 'correct horse battery staple' })
    expect(readFileSync(join(restored, 'session-secret'), 'utf8')).toContain('a-generated-secret')
  })

  it('refuses a damaged backup, one from a newer schema, and a directory that is not empty, leaving nothing behind', async () => {
    const { dataDir, threads } = await dataDirWithThread()
    await threads.close()
    const { dir } = await backupDataDir({ dataDir, outDir: directory('or3-backups-'), app })

    const busy = directory('or3-restored-')
    writeFileSync(join(busy, 'or3.sqlite'), 'someone else\'s data')
    await expect(restoreBackup({ backupDir: dir, dataDir: busy })).rejects.toThrow(/is not empty \(or3\.sqlite\): restore into an empty directory/)
    expect(readFileSync(join(busy, 'or3.sqlite'), 'utf8')).toBe('someone else\'s data')

    const damaged = readFileSync(join(dir, 'or3.sqlite'))
    damaged.writeUInt8(damaged.readUInt8(damaged.length - 10) ^ 0xff, damaged.length - 10)
    writeFileSync(join(dir, 'or3.sqlite'), damaged)
    const target = directory('or3-restored-')
    await expect(restoreBackup({ backupDir: dir, dataDir: target })).rejects.toThrow(/or3\.sqlite does not match its checksum/)
    expect(readdirSync(target)).toEqual([])

    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'))
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ ...manifest, schemaVersion: SQLITE_MIGRATIONS.length + 1, app: { name: 'or3-chat', version: '9.0.0' } }))
    await expect(restoreBackup({ backupDir: dir, dataDir: target })).rejects.toThrow(new BackupError(`This backup is of schema version ${SQLITE_MIGRATIONS.length + 1} (app 9.0.0), newer than this server knows (${SQLITE_MIGRATIONS.length}). Restore it with that version of the app or a later one.`))
    await expect(backupDataDir({ dataDir: directory('or3-empty-'), outDir: directory('or3-backups-'), app })).rejects.toThrow(/no database to back up/)
  })
})

describe('backups made from the admin page', () => {
  it('makes one at a time and lists them newest first', async () => {
    const { dataDir, threads } = await dataDirWithThread()
    await threads.close()
    const backups = new DataBackups({ dataDir, outDir: directory('or3-admin-backups-'), app })
    const first = backups.create()
    await expect(backups.create()).rejects.toThrow(/A backup is being made already/)
    const made = await first
    expect(made).toMatchObject({ schemaVersion: SQLITE_MIGRATIONS.length, appVersion: '0.1.0', encrypted: false, includesSecret: true })
    const second = await backups.create()
    expect((await backups.list()).map(backup => backup.name)).toEqual([second.name, made.name].sort().reverse())
  })
})

describe('upgrading the schema', () => {
  it('copies the database before an upgrade, keeping the newest three copies', async () => {
    const dataDir = directory('or3-upgrade-')
    const path = join(dataDir, 'or3.sqlite')
    for (let round = 0; round < 4; round++) {
      // A database left at version 1 (as the first release made it), upgraded at start-up.
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true })
      const old = new BetterSqlite3(path)
      old.exec(SQLITE_MIGRATIONS[0]!)
      old.pragma('user_version = 1')
      old.close()
      openSqliteDatabase(path).close()
    }
    const copies = readdirSync(join(dataDir, 'backups'))
    expect(copies).toHaveLength(3)
    expect(copies.every(name => /^or3-schema-v1-.*\.sqlite$/.test(name))).toBe(true)
    const copy = new BetterSqlite3(join(dataDir, 'backups', copies[0]!), { readonly: true })
    expect(copy.pragma('user_version', { simple: true })).toBe(1)
    copy.close()
  })

  it('leaves the database as it was when a migration fails, and says which and why', () => {
    const db = new BetterSqlite3(':memory:')
    db.exec(SQLITE_MIGRATIONS[0]!)
    db.pragma('user_version = 1')
    // Something the next migration will trip on: a table it is about to create.
    db.exec('CREATE TABLE threads (id TEXT PRIMARY KEY)')
    expect(() => migrateSqliteSchema(db)).toThrow(/Upgrading the database from schema version 1 to \d+ failed at migration 2: table threads already exists\. Nothing was changed/)
    expect(db.pragma('user_version', { simple: true })).toBe(1)
    expect((db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'thread_messages'").get() as { n: number }).n).toBe(0)
    db.close()
  })
})
