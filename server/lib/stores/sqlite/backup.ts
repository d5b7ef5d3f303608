/**
 * Backups of a data directory while the server runs, and restoring one into an empty directory.
 *
 * A backup is a directory: the database copied with SQLite's online backup API (better-sqlite3's
 * `backup()` in a worker thread, a consistent copy taken a few hundred pages at a time while the
 * server goes on answering; never a torn copy of the file and its WAL), the generated server secret when there
 * is one (without it stored credentials and users' keys cannot be decrypted), and `manifest.json`:
 * the format, the app's version, the schema version, the time, and each file's size and SHA-256.
 * With a passphrase every file is encrypted (AES-256-GCM, key from scrypt), the manifest says how,
 * and its checksums are of the plain files, checked after decryption.
 *
 * Restoring refuses a directory that holds anything, a backup from a newer schema than this
 * server knows, and any file whose checksum differs; files are written under temporary names and
 * renamed once all are checked, so a failed restore leaves the directory empty.
 */
import { createHash, createCipheriv, createDecipheriv, randomBytes, scrypt as scryptCallback, type ScryptOptions } from 'node:crypto'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { basename, join } from 'node:path'
import { Transform } from 'node:stream'
import { Worker } from 'node:worker_threads'
import { pipeline } from 'node:stream/promises'
import BetterSqlite3 from 'better-sqlite3'
import { SQLITE_MIGRATIONS } from './migrations'
import { DATABASE_FILE } from './database'
import { SESSION_SECRET_FILE } from '../../security/session-secret'
import { DomainError, type HttpAnswer } from '../../domain-error'
import type { BackupSummary } from '../../../../shared/types/backup'

const MANIFEST_FILE = 'manifest.json'
const BACKUP_FORMAT = 1
/** Pages copied per step of the online backup (4 KiB each): about 1 MiB, then the server's writes may go in. */
const PAGES_PER_STEP = 256
const SCRYPT = { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 } satisfies ScryptOptions

export interface BackupFile {
  name: string
  bytes: number
  sha256: string
}

export interface BackupManifest {
  format: number
  app: { name: string, version: string }
  schemaVersion: number
  createdAt: string
  files: BackupFile[]
  /** How the files are encrypted (absent: plain). */
  encryption?: { cipher: 'aes-256-gcm', kdf: 'scrypt', salt: string, N: number, r: number, p: number }
  /** Whether the server secret is in the backup (false: it was configured, NUXT_SESSION_PASSWORD, and must go with the backup by hand). */
  includesSecret: boolean
}

/** A refused backup or restore, with what to do about it (409 over HTTP). */
export class BackupError extends DomainError {
  override name = 'BackupError'

  httpAnswer(): HttpAnswer {
    return { statusCode: 409, statusMessage: 'Backup refused', message: this.message }
  }
}

function deriveKey(passphrase: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => scryptCallback(passphrase, salt, 32, SCRYPT, (error, key) => error ? reject(error) : resolve(key)))
}

/** A pass-through that counts and hashes what goes by (files are streamed, never held whole). */
function digester() {
  const hash = createHash('sha256')
  let bytes = 0
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      hash.update(chunk)
      bytes += chunk.byteLength
      done(null, chunk)
    },
  })
  return { stream, result: () => ({ bytes, sha256: hash.digest('hex') }) }
}

/**
 * Copies `from` to `to`, encrypted when `key` is given (iv (12) ‖ ciphertext ‖ tag (16)); returns
 * the plain file's size and SHA-256.
 */
async function sealFile(from: string, to: string, key: Buffer | undefined): Promise<{ bytes: number, sha256: string }> {
  const digest = digester()
  const output = createWriteStream(to, { mode: 0o600 })
  if (!key) {
    await pipeline(createReadStream(from), digest.stream, output)
    return digest.result()
  }
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  output.write(iv)
  await pipeline(createReadStream(from), digest.stream, cipher, output, { end: false })
  await new Promise<void>((resolve, reject) => {
    output.once('error', reject)
    output.end(cipher.getAuthTag(), () => resolve())
  })
  return digest.result()
}

/** Writes `from` (as `sealFile` made it) decrypted to `to`; returns the plain file's size and SHA-256. */
async function unsealFile(from: string, to: string, key: Buffer | undefined, name: string): Promise<{ bytes: number, sha256: string }> {
  const digest = digester()
  if (!key) {
    await pipeline(createReadStream(from), digest.stream, createWriteStream(to, { mode: 0o600 }))
    return digest.result()
  }
  const { size } = await stat(from)
  if (size < 28) throw new BackupError(`${name} is too short to be an encrypted file of a backup.`)
  const handle = await open(from, 'r')
  const iv = Buffer.alloc(12)
  const tag = Buffer.alloc(16)
  try {
    await handle.read(iv, 0, 12, 0)
    await handle.read(tag, 0, 16, size - 16)
  } finally {
    await handle.close()
  }
  const decipher = createDecipheriv('aes-256-gcm', key, iv)
  decipher.setAuthTag(tag)
  try {
    await pipeline(size > 28 ? createReadStream(from, { start: 12, end: size - 17 }) : [Buffer.alloc(0)], decipher, digest.stream, createWriteStream(to, { mode: 0o600 }))
  } catch {
    throw new BackupError(`${name} could not be decrypted: the passphrase is wrong, or the file was changed.`)
  }
  return digest.result()
}

/** What the worker of `copyDatabaseOnline` runs (CommonJS, given the driver's path). */
const COPY_WORKER = `
const { parentPort, workerData } = require('node:worker_threads')
const Database = require(workerData.driver)
const source = new Database(workerData.from, { readonly: true, fileMustExist: true })
source.backup(workerData.to, { progress: () => workerData.pagesPerStep }).then(
  () => { source.close(); parentPort.postMessage({ ok: true }) },
  (error) => { source.close(); parentPort.postMessage({ ok: false, message: String(error && error.message || error) }) },
)
`

/**
 * Copies the database at `from` to `to` with SQLite's online backup API, in a worker thread: the
 * copy is of one moment (a write by the server between two steps restarts only what it changed),
 * and neither its steps nor its final flush to disk (the longest part, a second or more for a few
 * GB) ever hold up the server's event loop.
 */
async function copyDatabaseOnline(from: string, to: string): Promise<void> {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3')
  const worker = new Worker(COPY_WORKER, { eval: true, workerData: { driver, from, to, pagesPerStep: PAGES_PER_STEP } })
  try {
    const outcome = await new Promise<{ ok: boolean, message?: string }>((resolve, reject) => {
      worker.once('message', resolve)
      worker.once('error', reject)
      worker.once('exit', code => reject(new Error(`The backup worker stopped (exit code ${code}) before the copy was made.`)))
    })
    if (!outcome.ok) throw new BackupError(`The database could not be copied: ${outcome.message}`)
  } finally {
    await worker.terminate()
  }
}

/** The schema version of the database at `path`. */
export function schemaVersionOf(path: string): number {
  const db = new BetterSqlite3(path, { readonly: true, fileMustExist: true })
  try {
    return db.pragma('user_version', { simple: true }) as number
  } finally {
    db.close()
  }
}

export interface BackupOptions {
  /** The data directory backed up (its database must exist). */
  dataDir: string
  /** Where the backup directory is made (`or3-backup-<time>` inside it). */
  outDir: string
  /** Encrypts every file with a key derived from it. */
  passphrase?: string
  app: { name: string, version: string }
  /** Time of the backup (tests). */
  now?: Date
}

/** Makes a backup of `dataDir` while its server may be running; resolves with where it is and its manifest. */
export async function backupDataDir(options: BackupOptions): Promise<{ dir: string, manifest: BackupManifest }> {
  const database = join(options.dataDir, DATABASE_FILE)
  if (!(await stat(database).catch(() => null))?.isFile()) throw new BackupError(`There is no database to back up at ${database}: check NUXT_DATA_DIR.`)
  const createdAt = (options.now ?? new Date()).toISOString()
  const dir = join(options.outDir, `or3-backup-${createdAt.replace(/[:.]/g, '-')}`)
  await mkdir(dir, { recursive: true })
  // The copy is made beside the backup, then sealed into it (SQLite may add its own files to a copy in progress).
  const work = join(dir, '.copy')
  await mkdir(work)
  const copy = join(work, DATABASE_FILE)
  await copyDatabaseOnline(database, copy)
  const schemaVersion = schemaVersionOf(copy)
  const sources = [{ name: DATABASE_FILE, path: copy }]
  const secretPath = join(options.dataDir, SESSION_SECRET_FILE)
  const hasSecret = Boolean((await stat(secretPath).catch(() => null))?.isFile())
  if (hasSecret) sources.push({ name: SESSION_SECRET_FILE, path: secretPath })

  let key: Buffer | undefined
  let encryption: BackupManifest['encryption']
  if (options.passphrase) {
    const salt = randomBytes(16)
    key = await deriveKey(options.passphrase, salt)
    encryption = { cipher: 'aes-256-gcm', kdf: 'scrypt', salt: salt.toString('base64'), N: SCRYPT.N, r: SCRYPT.r, p: SCRYPT.p }
  }
  const files: BackupFile[] = []
  for (const source of sources) {
    files.push({ name: source.name, ...await sealFile(source.path, join(dir, key ? `${source.name}.enc` : source.name), key) })
  }
  await rm(work, { recursive: true, force: true })
  const manifest: BackupManifest = { format: BACKUP_FORMAT, app: options.app, schemaVersion, createdAt, files, includesSecret: hasSecret, ...(encryption ? { encryption } : {}) }
  await writeFile(join(dir, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 })
  return { dir, manifest }
}

export interface RestoreOptions {
  /** The backup directory (with manifest.json). */
  backupDir: string
  /** An empty (or missing) data directory. */
  dataDir: string
  passphrase?: string
}

/** Restores a backup into an empty data directory; resolves with its manifest. */
export async function restoreBackup(options: RestoreOptions): Promise<BackupManifest> {
  const manifestText = await readFile(join(options.backupDir, MANIFEST_FILE), 'utf8').catch(() => {
    throw new BackupError(`${options.backupDir} is not a backup: it has no ${MANIFEST_FILE}.`)
  })
  let manifest: BackupManifest
  try {
    manifest = JSON.parse(manifestText) as BackupManifest
  } catch {
    throw new BackupError(`${join(options.backupDir, MANIFEST_FILE)} is not valid JSON.`)
  }
  if (manifest.format !== BACKUP_FORMAT) throw new BackupError(`This backup is in format ${manifest.format}; this server reads format ${BACKUP_FORMAT}.`)
  if (manifest.schemaVersion > SQLITE_MIGRATIONS.length) {
    throw new BackupError(`This backup is of schema version ${manifest.schemaVersion} (app ${manifest.app.version}), newer than this server knows (${SQLITE_MIGRATIONS.length}). Restore it with that version of the app or a later one.`)
  }
  if (!manifest.files.some(file => file.name === DATABASE_FILE)) throw new BackupError('This backup has no database.')
  const present = await readdir(options.dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return []
    throw error
  })
  if (present.length > 0) throw new BackupError(`${options.dataDir} is not empty (${present.slice(0, 3).join(', ')}${present.length > 3 ? ', …' : ''}): restore into an empty directory, so nothing there is overwritten.`)
  if (manifest.encryption && !options.passphrase) throw new BackupError('This backup is encrypted: give its passphrase.')
  const key = manifest.encryption ? await deriveKey(options.passphrase!, Buffer.from(manifest.encryption.salt, 'base64')) : undefined
  await mkdir(options.dataDir, { recursive: true })
  const written: string[] = []
  try {
    for (const file of manifest.files) {
      if (!/^[\w.-]+$/.test(file.name)) throw new BackupError(`The manifest names a file "${file.name}" that is not a plain file name.`)
      const stored = join(options.backupDir, key ? `${file.name}.enc` : file.name)
      if (!(await stat(stored).catch(() => null))?.isFile()) throw new BackupError(`The backup is missing ${file.name}.`)
      const temporary = join(options.dataDir, `${file.name}.restoring`)
      written.push(temporary)
      const plain = await unsealFile(stored, temporary, key, file.name)
      if (plain.bytes !== file.bytes || plain.sha256 !== file.sha256) throw new BackupError(`${file.name} does not match its checksum in the manifest: the backup is damaged; use another.`)
    }
    for (const file of manifest.files) await rename(join(options.dataDir, `${file.name}.restoring`), join(options.dataDir, file.name))
  } catch (error) {
    for (const path of written) await rm(path, { force: true })
    throw error
  }
  return manifest
}

/** How a list shows the backup `name` made with `manifest`. */
function summaryOf(name: string, manifest: BackupManifest): BackupSummary {
  return { name, createdAt: manifest.createdAt, schemaVersion: manifest.schemaVersion, appVersion: manifest.app.version, bytes: manifest.files.reduce((sum, file) => sum + file.bytes, 0), encrypted: Boolean(manifest.encryption), includesSecret: manifest.includesSecret }
}

/** The backups in `outDir` (those with a readable manifest), newest first, at most `limit`. */
export async function listBackups(outDir: string, limit = 50): Promise<BackupSummary[]> {
  const names = (await readdir(outDir).catch(() => [] as string[])).filter(name => name.startsWith('or3-backup-')).sort().reverse().slice(0, limit)
  const found: BackupSummary[] = []
  for (const name of names) {
    try {
      found.push(summaryOf(name, JSON.parse(await readFile(join(outDir, name, MANIFEST_FILE), 'utf8')) as BackupManifest))
    } catch {
      // A backup being made, or not one: not listed.
    }
  }
  return found
}

/** One backup at a time, of one data directory into one place: what Admin → Backups uses. */
export class DataBackups {
  private making = false

  constructor(private readonly options: { dataDir: string, outDir: string, app: { name: string, version: string } }) {}

  /** Where backups are made. */
  get dir(): string {
    return this.options.outDir
  }

  /** Makes a backup now; refused while one is being made. */
  async create(): Promise<BackupSummary> {
    if (this.making) throw new BackupError('A backup is being made already; wait for it to end.')
    this.making = true
    try {
      const { dir, manifest } = await backupDataDir({ dataDir: this.options.dataDir, outDir: this.options.outDir, app: this.options.app })
      return summaryOf(basename(dir), manifest)
    } finally {
      this.making = false
    }
  }

  list(): Promise<BackupSummary[]> {
    return listBackups(this.options.outDir)
  }
}
