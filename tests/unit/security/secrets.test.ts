import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { resolveSessionSecret } from '../../../server/lib/security/session-secret'

const directory = mkdtempSync(join(tmpdir(), 'or3-secrets-'))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

describe('createSecretBox', () => {
  const key = 'sk-or-v1-0123456789abcdef0123456789abcdef'

  it('seals a key so the stored text does not contain it, and opens it again', () => {
    const box = createSecretBox('a server secret that is long enough!!')
    const sealed = box.seal(key)
    expect(sealed).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/)
    expect(sealed).not.toContain(key)
    expect(sealed).not.toContain(Buffer.from(key).toString('base64url'))
    expect(box.seal(key)).not.toBe(sealed)
    expect(box.open(sealed)).toBe(key)
  })

  it('cannot open text sealed under another secret, altered text, or garbage', () => {
    const box = createSecretBox('a server secret that is long enough!!')
    const sealed = box.seal(key)
    expect(createSecretBox('another server secret, also long enough').open(sealed)).toBeUndefined()
    const parts = sealed.split('.')
    parts[3] = `${parts[3]!.slice(0, -2)}AA`
    expect(box.open(parts.join('.'))).toBeUndefined()
    expect(box.open('not sealed')).toBeUndefined()
    expect(box.open('v2.a.b.c')).toBeUndefined()
  })
})

describe('resolveSessionSecret', () => {
  it('uses the configured password when there is one', () => {
    expect(resolveSessionSecret('x'.repeat(40), join(directory, 'unused'))).toEqual({ secret: 'x'.repeat(40), source: 'config' })
  })

  it('generates a secret on first start, keeps it private on disk, and reuses it', () => {
    const dataDir = join(directory, 'fresh', '.data')
    const first = resolveSessionSecret('', dataDir)
    expect(first.source).toBe('generated')
    expect(first.secret.length).toBeGreaterThanOrEqual(32)
    const path = join(dataDir, 'session-secret')
    expect(statSync(path).mode & 0o777).toBe(0o600)
    expect(readFileSync(path, 'utf8').trim()).toBe(first.secret)
    expect(resolveSessionSecret('', dataDir)).toEqual({ secret: first.secret, source: 'file' })
  })

  it('replaces a stored secret that is too short to be safe', () => {
    const dataDir = join(directory, 'short')
    resolveSessionSecret('', dataDir)
    writeFileSync(join(dataDir, 'session-secret'), 'short\n')
    const replaced = resolveSessionSecret('', dataDir)
    expect(replaced.source).toBe('generated')
    expect(readFileSync(join(dataDir, 'session-secret'), 'utf8').trim()).toBe(replaced.secret)
  })
})
