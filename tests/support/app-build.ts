/**
 * The built app that e2e and browser tests run. A build goes into a directory of its own, named by
 * a hash of everything it is built from (the app's sources, its config and lockfile, and for a
 * fixture app its own files), under node_modules/.cache/or3-test-builds/: never the project's
 * .nuxt/ and .output/, which `npm run dev` and `nuxt typecheck` use, and never twice for the same
 * sources. A test run builds at most once per app (test files of both projects wait on one lock
 * per build); the next run, with nothing changed, builds nothing. Plain Node (no Vitest), for the
 * global setup that starts the build (app-build-first.ts).
 */
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { basename, join, relative, resolve } from 'node:path'

const projectRoot = resolve(import.meta.dirname, '../..')
const nuxtBin = join(projectRoot, 'node_modules/nuxt/bin/nuxt.mjs')
const buildsDir = join(projectRoot, 'node_modules/.cache/or3-test-builds')
/** What a build of the project is made from (a fixture app adds its own folder). */
const BUILD_INPUTS = ['app', 'server', 'shared', 'modules', 'public', 'nuxt.config.ts', 'config.or3.ts', 'app.config.ts', 'package-lock.json', 'tsconfig.json']

/** Every file under `path` (a file or a folder), skipping what builds and installs leave behind. */
function inputFiles(path: string): string[] {
  if (!existsSync(path)) return []
  if (statSync(path).isFile()) return [path]
  return readdirSync(path, { withFileTypes: true })
    // tsbuildinfo: the type check run beside the suite writes server/lib/tsconfig.tsbuildinfo when
    // it ends, which made every file after it wait for a second build of the same sources.
    .filter(entry => !['node_modules', '.nuxt', '.output', '.data'].includes(entry.name) && !entry.name.endsWith('.tsbuildinfo'))
    .flatMap(entry => inputFiles(join(path, entry.name)))
}

/** `app` for the project, a fixture app's folder name otherwise. */
function appName(rootDir: string): string {
  return rootDir === projectRoot ? 'app' : basename(rootDir)
}

/** The directory a build of `rootDir` goes into: named by the hash of its inputs' paths and contents. */
function appBuildDir(rootDir: string = projectRoot): string {
  const inputs = [...BUILD_INPUTS.map(input => join(projectRoot, input)), ...(rootDir === projectRoot ? [] : [rootDir])]
  const hash = createHash('sha256')
  for (const file of inputs.flatMap(inputFiles).sort()) {
    hash.update(relative(projectRoot, file)).update('\0').update(readFileSync(file)).update('\0')
  }
  return join(buildsDir, `${appName(rootDir)}-${hash.digest('hex').slice(0, 16)}`)
}

/**
 * Builds `rootDir` (the project, or a fixture app that extends it) unless a build of the same
 * sources exists, and returns its server entry. Other builds of the same app are removed.
 */
export async function buildApp(rootDir: string = projectRoot): Promise<string> {
  const dir = appBuildDir(rootDir)
  const entry = join(dir, '.output/server/index.mjs')
  const complete = join(dir, 'complete')
  return withBuildLock(dir, async () => {
    if (existsSync(complete) && existsSync(entry)) return entry
    rmSync(join(dir, '.nuxt'), { recursive: true, force: true })
    rmSync(join(dir, '.output'), { recursive: true, force: true })
    await runNuxtBuild(rootDir, dir)
    writeFileSync(complete, new Date().toISOString())
    for (const other of readdirSync(buildsDir)) {
      if (other.startsWith(`${appName(rootDir)}-`) && join(buildsDir, other) !== dir && !other.endsWith('.lock')) rmSync(join(buildsDir, other), { recursive: true, force: true })
    }
    return entry
  })
}

/** Runs `work` while no other test process builds into `dir`. A lock left by a killed run is taken over. */
async function withBuildLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  mkdirSync(dir, { recursive: true })
  const lock = `${dir}.lock`
  for (;;) {
    try {
      mkdirSync(lock)
      writeFileSync(join(lock, 'pid'), String(process.pid))
      break
    } catch {
      if (!lockHolderAlive(lock)) rmSync(lock, { recursive: true, force: true })
      await new Promise(done => setTimeout(done, 200))
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

async function runNuxtBuild(rootDir: string, dir: string): Promise<void> {
  const output: string[] = []
  const child = spawn(process.execPath, [nuxtBin, 'build', rootDir], {
    cwd: rootDir,
    // nuxt.config.ts puts .nuxt/ and .output/ under OR3_TEST_BUILD_DIR.
    env: productionEnv({ OR3_TEST_BUILD_DIR: dir }),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child.stdout.on('data', chunk => output.push(String(chunk)))
  child.stderr.on('data', chunk => output.push(String(chunk)))
  const code = await new Promise<number | null>(done => child.on('close', done))
  if (code !== 0 || !existsSync(join(dir, '.output/server/index.mjs'))) {
    throw new Error(`nuxt build of ${rootDir} failed (exit ${code}):\n${output.join('').slice(-4000)}`)
  }
}

/** The test runner's environment minus what makes libraries behave as under test (e.g. consola's quiet level). */
export function productionEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env }
  for (const key of Object.keys(env)) {
    if (key === 'TEST' || key.startsWith('VITEST')) delete env[key]
  }
  return { ...env, NODE_ENV: 'production', NUXT_TELEMETRY_DISABLED: '1', ...extra }
}
