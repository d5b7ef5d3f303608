import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { freePort } from '../support/free-port'

const projectRoot = resolve(import.meta.dirname, '../..')

describe('npm run dev (the README\'s first command)', () => {
  it('serves the app and its API on a fresh data directory, with no keys', async () => {
    const port = await freePort()
    const dataDir = mkdtempSync(join(tmpdir(), 'or3-dev-'))
    // A session password of its own: without one, nuxt-auth-utils' dev mode writes one into the
    // project's .env. A build directory of its own (nuxt.config.ts): the project's .nuxt/ is
    // what `nuxt typecheck` and the architecture test read, and another test may be reading it.
    const env: NodeJS.ProcessEnv = { ...process.env, NUXT_DATA_DIR: dataDir, OR3_TEST_BUILD_DIR: dataDir, NUXT_TELEMETRY_DISABLED: '1', NUXT_SESSION_PASSWORD: 'a-dev-server-test-session-password-long-enough' }
    for (const key of Object.keys(env)) if (key === 'TEST' || key.startsWith('VITEST')) delete env[key]
    let output = ''
    const child = spawn(process.execPath, [join(projectRoot, 'node_modules/nuxt/bin/nuxt.mjs'), 'dev', '--port', String(port), '--host', '127.0.0.1'], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    child.stdout!.on('data', (chunk) => { output += String(chunk) })
    child.stderr!.on('data', (chunk) => { output += String(chunk) })
    try {
      const url = `http://127.0.0.1:${port}`
      let health: Response | undefined
      for (let attempt = 0; attempt < 180 && !health?.ok && !/\bERROR\b/.test(output); attempt++) {
        health = await fetch(`${url}/api/health`).catch(() => undefined)
        if (!health?.ok) await new Promise(done => setTimeout(done, 500))
      }
      expect(health?.ok, output).toBe(true)
      const page = await fetch(`${url}/`)
      expect(page.status, output).toBe(200)
      expect(await page.text()).toContain('id="__nuxt"')
      // First run, as the README says: no account yet, so the first visitor creates the admin.
      expect(await (await fetch(`${url}/api/auth/me`)).json()).toMatchObject({ user: null, needsSetup: true })
      expect((await fetch(`${url}/api/threads`)).status).toBe(401)
      const admin = await fetch(`${url}/api/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Admin', password: 'a long enough password' }) })
      expect(admin.status).toBe(201)
      const cookie = admin.headers.getSetCookie().find(value => value.startsWith('or3-session='))!.split(';')[0]!
      const thread = await fetch(`${url}/api/threads`, { method: 'POST', headers: { 'content-type': 'application/json', cookie }, body: '{}' })
      expect(thread.status).toBe(201)
      expect(output).not.toMatch(/\bERROR\b/)
    } finally {
      process.kill(-child.pid!, 'SIGTERM')
      await new Promise(done => child.once('exit', done))
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})
