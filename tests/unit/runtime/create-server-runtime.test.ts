/**
 * The runtime built in plain TypeScript, with the memory stores: what the Nitro plugin starts is
 * what this builds, so the wiring between services (a finished job written into its thread and
 * titled, an account's deletion reaching every store, the caps) is tested without a server.
 */
import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createServerRuntime, type StartableServerRuntime } from '../../../server/lib/runtime/create-server-runtime'
import { sendThreadMessage } from '../../../server/lib/threads/send-message'
import { builtinServerTools } from '../../../server/lib/tools/builtin'
import { registerServerTool } from '../../../server/lib/tools/registry'
import type { BackgroundJob } from '../../../shared/types/job'
import { testServerConfig } from '../../support/server-config'

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, length: number) => Promise<Buffer>
/** A real (scrypt) hasher, as nuxt-auth-utils' is in the app. */
const passwords = {
  async hash(password: string) {
    const salt = randomBytes(16)
    return `${salt.toString('hex')}:${(await scryptAsync(password, salt, 32)).toString('hex')}`
  },
  async verify(hash: string, password: string) {
    const [salt, key] = hash.split(':') as [string, string]
    return timingSafeEqual(Buffer.from(key, 'hex'), await scryptAsync(password, Buffer.from(salt, 'hex'), 32))
  },
}

let dataDir: string
let runtime: StartableServerRuntime

beforeAll(() => {
  // The built-in tools, as server/plugins/10.tools.ts registers them (the registry is per process).
  for (const tool of builtinServerTools) registerServerTool(tool.definition, tool.handler, { ...tool.options, override: true, source: { kind: 'builtin' } })
})

beforeEach(() => {
  dataDir = mkdtempSync(join(tmpdir(), 'or3-runtime-'))
  runtime = createServerRuntime(testServerConfig({
    dataDir,
    backgroundJobs: { storageProvider: 'memory' },
    demoModel: { tokenDelayMs: 0 },
    tools: { dynamic: { enabled: false } },
  }), { passwords })
  runtime.start()
})

afterEach(async () => {
  await runtime.close()
  rmSync(dataDir, { recursive: true, force: true })
})

/** Resolves with the job once its follow-up (the thread's answer) has run. */
function finished(jobId: string): Promise<BackgroundJob> {
  return new Promise((resolve) => {
    const stop = runtime.jobs.runs.onJobFinished((job) => {
      if (job.id !== jobId) return
      stop()
      resolve(job)
    })
  })
}

describe('createServerRuntime', () => {
  it('builds every service over the memory stores, and a sent message is answered into its thread', async () => {
    const admin = await runtime.accounts.signUp('Ada', 'a-long-password-1', undefined)
    expect(admin.role).toBe('admin')
    const thread = await runtime.threads.createThread({ userId: admin.id })
    const config = testServerConfig({ backgroundJobs: { storageProvider: 'memory' } })
    const sent = await sendThreadMessage({ jobs: runtime.jobs, threads: runtime.threads, config }, thread, { content: 'What is 15% of 240?', model: 'or3/offline-demo', principal: { userId: admin.id, role: 'admin' } })
    const job = await finished(sent.jobId)
    expect(job.status).toBe('complete')
    const messages = await runtime.threads.listMessages(thread.id)
    const answer = messages.find(message => message.id === sent.assistantMessage.id)
    expect(answer?.content).toContain('36')
    expect(answer?.status).toBe('complete')
  })

  it('deletes an account\'s threads and workflows with it', async () => {
    await runtime.accounts.signUp('Ada', 'a-long-password-1', undefined)
    const bob = await runtime.accounts.createAccount('Bob', 'a-long-password-2', 'user')
    const thread = await runtime.threads.createThread({ userId: bob.id })
    expect(await runtime.accounts.deleteAccount(bob.id)).toBe(true)
    expect(await runtime.threads.getThread(thread.id)).toBeNull()
    expect(await runtime.accounts.getAccount(bob.id)).toBeNull()
  })

  it('counts a job\'s live streams against the configured cap (25 viewers of one job)', () => {
    const releases = Array.from({ length: 25 }, (_, index) => runtime.streams.acquire(`user-${index}`, 'job-1', `203.0.113.${index}`))
    expect(() => runtime.streams.acquire('user-26', 'job-1', '203.0.113.26')).toThrow(/viewers|streams/i)
    releases[0]!()
    expect(() => runtime.streams.acquire('user-26', 'job-1', '203.0.113.26')).not.toThrow()
  })
})
