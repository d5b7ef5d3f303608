import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { freePort } from '../support/free-port'
import { withBuildLock } from './helpers/built-app'

const projectRoot = resolve(import.meta.dirname, '../..')

describe('npm run dev (the README\'s first command)', () => {
  it('serves the app and its API on a fresh data directory, with no keys', async () => {
    await withBuildLock(projectRoot, async () => {
      const port = await freePort()
      const dataDir = mkdtempSync(join(tmpdir(), 'or3-dev-'))
      const env: NodeJS.ProcessEnv = { ...process.env, NUXT_DATA_DIR: dataDir, NUXT_TELEMETRY_DISABLED: '1' }
      for (const key of Object.keys(env)) if (key === 'TEST' || key.startsWith('VITEST')) delete env[key]
      let output = ''
      const child = spawn(process.execPath, [join(projectRoot, 'node_modules/nuxt/bin/nuxt.mjs'), 'dev', '--port', String(port), '--host', '127.0.0.1'], { cwd: projectRoot, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
      child.stdout!.on('data', (chunk) => { output += String(chunk) })
      child.stderr!.on('data', (chunk) => { output += String(chunk) })
      try {
        const url = `http://127.0.0.1:${port}`
        let tools: Response | undefined
        for (let attempt = 0; attempt < 180 && !tools?.ok && !/\bERROR\b/.test(output); attempt++) {
          tools = await fetch(`${url}/api/tools`).catch(() => undefined)
          if (!tools?.ok) await new Promise(done => setTimeout(done, 500))
        }
        expect(tools?.ok, output).toBe(true)
        const page = await fetch(`${url}/`)
        expect(page.status, output).toBe(200)
        expect(await page.text()).toContain('id="__nuxt"')
        const thread = await fetch(`${url}/api/threads`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
        expect(thread.status).toBe(201)
        expect(output).not.toMatch(/\bERROR\b/)
      } finally {
        process.kill(-child.pid!, 'SIGTERM')
        await new Promise(done => child.once('exit', done))
        rmSync(dataDir, { recursive: true, force: true })
      }
    })
  })
})
