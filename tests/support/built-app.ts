/**
 * The fixtures that run the built app (app-build.ts) for a test file: `useBuiltApp` (one server
 * for the file's tests), `useAppServers` (servers its tests start and restart), `useDataDirs`;
 * and `startApp`, which starts a server of a build on a free port with its own data directory.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { get as httpsGet } from 'node:https'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest'
import { buildApp, productionEnv } from './app-build'
import { useFileFixture } from './file-fixture'
import { freePort } from './free-port'

/** How much of a server's output a failed test prints. */
const FAILED_TEST_LOG_CHARS = 6_000

/** Long enough for a build on a loaded two-core machine, then starting the server. */
const BUILD_AND_START_TIMEOUT_MS = 300_000

export interface RunningApp {
  url: string
  process: ChildProcess
  /** Everything the server printed so far, stdout and stderr interleaved. */
  logs: () => string
  /** Resolves with the exit code once the process has ended. */
  exited: Promise<number | null>
  stop: (signal?: NodeJS.Signals) => Promise<void>
}

interface SpawnedServer {
  url: string
  child: ChildProcess
  output: () => string
  exited: Promise<number | null>
  /** The data directory made for this server (none when the test passed NUXT_DATA_DIR). */
  ownDataDir?: string
}

async function spawnServer(entry: string, env: Record<string, string>): Promise<SpawnedServer> {
  // A test that restarts a server where its browser's pages point gives the same `PORT` again.
  const port = env.PORT ? Number(env.PORT) : await freePort()
  // Each server gets its own data directory (database, session secret) unless the test shares one.
  const ownDataDir = env.NUXT_DATA_DIR ? undefined : mkdtempSync(join(tmpdir(), 'or3-app-data-'))
  // Every test client is 127.0.0.1: start rates are off unless a test sets them (start-limits.test.ts).
  env = {
    ...(ownDataDir ? { NUXT_DATA_DIR: ownDataDir } : {}),
    NUXT_LIMITS_JOB_STARTS_PER_IP_PER_MINUTE: '1000000',
    NUXT_LIMITS_ROLES_ADMIN_JOB_STARTS_PER_MINUTE: '1000000',
    NUXT_LIMITS_ROLES_USER_JOB_STARTS_PER_MINUTE: '1000000',
    // Every client is one address, so no fair share by address or for guests as a group.
    NUXT_LIMITS_FAIR_SHARE: '1',
    // Most tests act as guests (a fresh cookie-less client per session, all from 127.0.0.1), with
    // a user's limits and any model; the accounts and limits tests set their own.
    NUXT_AUTH_GUESTS: 'true',
    NUXT_LIMITS_ROLES_GUEST_MODELS: '*',
    NUXT_LIMITS_ROLES_GUEST_JOBS_AT_ONCE: '5',
    NUXT_LIMITS_ROLES_GUEST_JOB_STARTS_PER_MINUTE: '1000000',
    NUXT_LIMITS_ROLES_GUEST_DAILY_TOKENS: '0',
    NUXT_LIMITS_ROLES_GUEST_MAX_OUTPUT_TOKENS: '0',
    NUXT_LIMITS_ROLES_GUEST_WORKFLOW_MODEL_CALLS: '100000',
    NUXT_AUTH_SESSIONS_PER_IP_PER_MINUTE: '1000000',
    NUXT_AUTH_SIGNUPS_PER_IP_PER_HOUR: '1000000',
    NUXT_AUTH_SIGN_IN_ATTEMPTS_PER_IP_PER_MINUTE: '1000000',
    ...env,
  }
  let output = ''
  const child = spawn(process.execPath, [entry], {
    env: productionEnv({ HOST: '127.0.0.1', PORT: String(port), ...env }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout!.on('data', (chunk) => { output += String(chunk) })
  child.stderr!.on('data', (chunk) => { output += String(chunk) })
  const exited = new Promise<number | null>(done => child.on('exit', code => done(code)))
  // A server given a certificate speaks HTTPS (with HTTP/2).
  const scheme = env.NUXT_TLS_CERT_FILE ? 'https' : 'http'
  return { url: `${scheme}://127.0.0.1:${port}`, child, output: () => output, exited, ownDataDir }
}

/** Resolves once the server at `url` answers `/api/health` (any status); over HTTPS, whatever its certificate. */
async function answersHealth(url: string): Promise<void> {
  if (url.startsWith('http:')) {
    await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(5_000) })
    return
  }
  await new Promise<void>((resolve, reject) => {
    const request = httpsGet(`${url}/api/health`, { rejectUnauthorized: false, timeout: 5_000 }, (response) => {
      response.resume()
      resolve()
    })
    request.on('timeout', () => request.destroy(new Error('no answer within 5 s')))
    request.on('error', reject)
  })
}

/**
 * Starts a built server on a free port and waits until it answers HTTP. Rejects with the server's
 * output if the process exits first.
 */
export async function startApp(entry: string, env: Record<string, string> = {}): Promise<RunningApp> {
  const { url, child, output, exited, ownDataDir } = await spawnServer(entry, env)
  const app: RunningApp = {
    url,
    process: child,
    logs: output,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      await exited
      // A directory the test did not choose is this server's alone: gone with it.
      if (ownDataDir) rmSync(ownDataDir, { recursive: true, force: true })
    },
  }

  let processEnded = false
  void exited.then(() => { processEnded = true })
  for (let attempt = 0; attempt < 300; attempt++) {
    if (processEnded) throw new Error(`server exited before listening:\n${output()}`)
    try {
      // A server that takes the connection and never answers is tried again (and, in the end, reported), not waited on forever.
      await answersHealth(url)
      return app
    } catch {
      await new Promise(done => setTimeout(done, 100))
    }
  }
  await app.stop('SIGKILL')
  throw new Error(`server did not answer within 30 s:\n${output()}`)
}

/** Starts a built server that is expected to refuse to start; resolves with its exit code and output. */
export async function startAppExpectingFailure(entry: string, env: Record<string, string>): Promise<{ code: number | null, output: string }> {
  const { child, output, exited } = await spawnServer(entry, env)
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000)
  const code = await exited
  clearTimeout(timer)
  return { code, output: output() }
}

/**
 * The fixture of a test file that runs the built app: builds it (or waits for the run's build),
 * starts one server with `env` before the file's tests (a function: worked out then, after the
 * file's earlier `beforeAll` hooks) on its own data directory, and stops it after them. Returns
 * the server, to read once the tests run.
 */
export function useBuiltApp(env: Record<string, string> | (() => Record<string, string>) = {}, options: { rootDir?: string } = {}): RunningApp {
  return useFileFixture('The built app', async () => startApp(await buildApp(options.rootDir), typeof env === 'function' ? env() : env), app => app.stop(), BUILD_AND_START_TIMEOUT_MS)
}

/** Builds the app (or waits for the run's build) and starts a server of it with `env`; the caller stops it. */
export async function startBuiltApp(env: Record<string, string> = {}): Promise<RunningApp> {
  return startApp(await buildApp(), env)
}

/**
 * The fixture of a test file whose tests start servers of their own (a restart, a second instance
 * on the same data): `start(env)` starts one on top of `baseEnv` (a function: worked out when the
 * server starts); every server started is stopped after the file's tests, whatever happened.
 */
export function useAppServers(baseEnv: Record<string, string> | (() => Record<string, string>) = {}): { start: (env?: Record<string, string>) => Promise<RunningApp> } {
  const running: RunningApp[] = []
  let startedInTest: RunningApp[] = []
  // The build is waited for here, with a build's time, not in a test or a hook of a test's time.
  beforeAll(async () => {
    await buildApp()
  }, BUILD_AND_START_TIMEOUT_MS)
  beforeEach(() => {
    startedInTest = []
  })
  // A failed test shows what its servers printed (a flake on a loaded CI machine is read from that
  // alone), and its servers stop: one that a timed-out test left running would go on calling the
  // file's shared fake upstream during the next test.
  afterEach(async ({ task }) => {
    if (task.result?.state !== 'fail') return
    for (const [index, app] of startedInTest.entries()) console.error(`--- server ${index + 1} of "${task.name}" (${app.url}), its last output:\n${app.logs().slice(-FAILED_TEST_LOG_CHARS)}`)
    await Promise.all(startedInTest.map(app => app.stop('SIGKILL')))
  })
  afterAll(async () => {
    await Promise.all(running.map(app => app.stop()))
  })
  return {
    async start(env = {}) {
      const app = await startApp(await buildApp(), { ...(typeof baseEnv === 'function' ? baseEnv() : baseEnv), ...env })
      running.push(app)
      startedInTest.push(app)
      return app
    },
  }
}

/**
 * Data directories a test file makes (servers that share one across a restart), removed after
 * its tests. Call it before the servers' fixture: after hooks run last-registered first, so the
 * servers have stopped by then.
 */
export function useDataDirs(prefix = 'or3-e2e-'): { fresh: () => string } {
  const made: string[] = []
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true })
  })
  return {
    fresh() {
      const dir = mkdtempSync(join(tmpdir(), prefix))
      made.push(dir)
      return dir
    },
  }
}
