import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { freePort } from '../../support/free-port'

const projectRoot = resolve(import.meta.dirname, '../../..')
const nuxtBin = join(projectRoot, 'node_modules/nuxt/bin/nuxt.mjs')

/**
 * Builds an app once per test run and returns its server entry. Test files of different projects
 * (e2e, browser) run at the same time and would otherwise write the same `.output/` at once: a
 * lock directory serialises them, and a marker with this run's id lets later files reuse the build.
 */
export async function buildApp(rootDir: string = projectRoot): Promise<string> {
  const runId = process.env.OR3_TEST_RUN_ID
  const marker = join(rootDir, '.output/.test-run-id')
  const entry = join(rootDir, '.output/server/index.mjs')
  return withBuildLock(rootDir, async () => {
    if (runId && existsSync(entry) && existsSync(marker) && readFileSync(marker, 'utf8') === runId) return entry
    await runNuxtBuild(rootDir)
    if (runId) writeFileSync(marker, runId)
    return entry
  })
}

/**
 * Runs `work` while no other test file builds (or runs the dev server of) the same app: they
 * share `.nuxt/` and `.output/`.
 */
export async function withBuildLock<T>(rootDir: string, work: () => Promise<T>): Promise<T> {
  const lock = join(rootDir, '.output-build.lock')
  for (let attempt = 0; ; attempt++) {
    try {
      mkdirSync(lock)
      writeFileSync(join(lock, 'pid'), String(process.pid))
      break
    } catch {
      // Another test process holds it. A lock whose process is gone was left by a killed run.
      if (!lockHolderAlive(lock) || attempt > 6000) rmSync(lock, { recursive: true, force: true })
      await new Promise(resolve => setTimeout(resolve, 100))
    }
  }
  try {
    return await work()
  } finally {
    rmSync(lock, { recursive: true, force: true })
  }
}

function lockHolderAlive(lock: string): boolean {
  let pid: number
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'))
  } catch {
    pid = 0
  }
  // No pid (yet): the holder has just created the lock, unless it is older than a few seconds.
  if (!pid) {
    try {
      return Date.now() - statSync(lock).mtimeMs < 5_000
    } catch {
      return false
    }
  }
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
}

async function runNuxtBuild(rootDir: string): Promise<string> {
  const output: string[] = []
  const child = spawn(process.execPath, [nuxtBin, 'build', rootDir], {
    cwd: rootDir,
    env: productionEnv({}),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout.on('data', chunk => output.push(String(chunk)))
  child.stderr.on('data', chunk => output.push(String(chunk)))
  const code = await new Promise<number | null>(done => child.on('close', done))
  const entry = join(rootDir, '.output/server/index.mjs')
  if (code !== 0 || !existsSync(entry)) {
    throw new Error(`nuxt build of ${rootDir} failed (exit ${code}):\n${output.join('').slice(-4000)}`)
  }
  return entry
}

/** The test runner's environment minus what makes libraries behave as under test (e.g. consola's quiet level). */
function productionEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(env)) {
    if (key === 'TEST' || key.startsWith('VITEST')) delete env[key]
  }
  return { ...env, NODE_ENV: 'production', NUXT_TELEMETRY_DISABLED: '1', ...extra }
}

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
  const port = await freePort()
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
  return { url: `http://127.0.0.1:${port}`, child, output: () => output, exited, ownDataDir }
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
      await fetch(`${url}/api/health`)
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
