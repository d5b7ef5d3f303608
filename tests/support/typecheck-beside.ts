/**
 * Vitest global setup of the unit project, under `npm test` only: type-checks the whole project
 * (the app, the server, `server/lib`, `convex/` and the tests: vue-tsc over the project
 * references of tsconfig.json, which is what `npm run typecheck` runs once it has written Nuxt's
 * types; `npm ci` writes them with `nuxt prepare`) in a child process at the lowest CPU priority,
 * so it takes what the suite leaves idle (browser files wait on pages more than they compute)
 * rather than running before the suite or slowing the app's build. The run fails at its end, with
 * vue-tsc's report, when the types do not check.
 */
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { setPriority } from 'node:os'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))
const vueTsc = createRequire(import.meta.url).resolve('vue-tsc/bin/vue-tsc.js')
const LOWEST_PRIORITY = 19
const REPORT_CHARS = 20_000

export default function typecheckBesideTheSuite(): (() => Promise<void>) | undefined {
  // `vitest run some.test.ts` while working on one file does not wait for a type check.
  if (process.env.npm_lifecycle_event !== 'test') return undefined
  const checker = spawn(process.execPath, [vueTsc, '-b', '--noEmit'], { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
  try {
    if (checker.pid !== undefined) setPriority(checker.pid, LOWEST_PRIORITY)
  } catch {
    // A system that refuses it runs the check at normal priority.
  }
  let report = ''
  const keep = (chunk: Buffer) => {
    if (report.length < REPORT_CHARS) report += chunk.toString('utf8')
  }
  checker.stdout.on('data', keep)
  checker.stderr.on('data', keep)
  const exit = new Promise<number>((resolve) => {
    checker.on('error', (error) => {
      report += String(error)
      resolve(1)
    })
    checker.on('close', code => resolve(code ?? 1))
  })
  return async () => {
    const code = await exit
    if (code === 0) return
    // Vitest reports an error thrown here but keeps its exit code: the run fails by this one.
    process.exitCode = 1
    throw new Error(`The type check failed (vue-tsc -b --noEmit, exit ${code}):\n${report.slice(0, REPORT_CHARS)}`)
  }
}
