/**
 * The secret that seals session cookies and encrypts stored API keys. `NUXT_SESSION_PASSWORD`
 * wins; without it one is generated on first start and kept in `<dataDir>/session-secret`
 * (mode 600), so sessions survive restarts on a fresh machine with no setup.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { randomBytes } from 'node:crypto'

/** The file under the data directory that keeps a generated secret. */
export const SESSION_SECRET_FILE = 'session-secret'

/** Shortest secret accepted (what iron-style sealing needs). */
export const MIN_SESSION_SECRET_LENGTH = 32

/** The configured secret, or the one persisted under `dataDir` (created if missing). */
export function resolveSessionSecret(configured: string, dataDir: string): { secret: string, source: 'config' | 'file' | 'generated' } {
  if (configured) return { secret: configured, source: 'config' }
  const path = join(dataDir, SESSION_SECRET_FILE)
  let exists = false
  try {
    const stored = readFileSync(path, 'utf8').trim()
    if (stored.length >= MIN_SESSION_SECRET_LENGTH) return { secret: stored, source: 'file' }
    exists = true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const secret = randomBytes(36).toString('base64url')
  mkdirSync(dataDir, { recursive: true })
  // `wx` fails if another process created it first; then read theirs. A too-short one is replaced.
  try {
    writeFileSync(path, `${secret}\n`, { mode: 0o600, flag: exists ? 'w' : 'wx' })
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return { secret: readFileSync(path, 'utf8').trim(), source: 'file' }
    throw error
  }
  return { secret, source: 'generated' }
}

let resolved: string | undefined

/**
 * The server secret of this process, resolved once (and announced when it was generated).
 * Seals session cookies and, through derived keys, encrypts secrets at rest.
 */
export function serverSecret(config: { session: { password: string }, dataDir: string }): string {
  if (!resolved) {
    const result = resolveSessionSecret(config.session.password, config.dataDir)
    if (result.source === 'generated') console.info(`[or3] Generated a session secret in ${config.dataDir}/session-secret; set NUXT_SESSION_PASSWORD to choose your own.`)
    resolved = result.secret
  }
  return resolved
}
