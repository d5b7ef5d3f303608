/**
 * The whole project's type check, run beside the suite under `npm test` (the app, the server,
 * `server/lib`, `convex/` and the tests: scripts/typecheck.mjs, what `npm run typecheck` runs, on
 * the types `nuxt prepare` wrote when `npm ci` ran). `app-build-first.ts` starts it with the run,
 * at the lowest CPU priority (`nice -n 19`): it then runs on what the build and the test files
 * leave idle (they wait on servers, timers and pages much of the time), instead of taking a third
 * of the machine from the first browser files as it did when it started after the build at the
 * same priority (146 s beside them). The run fails at its end, with the checkers' report, when the
 * types do not check.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../../', import.meta.url))
const REPORT_CHARS = 20_000

/** Whether this run is `npm test` (`vitest run some.test.ts` while working on one file does not wait for a type check). */
export function typecheckWanted(): boolean {
  return process.env.npm_lifecycle_event === 'test'
}

/** Starts the type check; `finished()` resolves when it passed and throws the checkers' report when it did not. */
export function startTypecheck(): { finished: () => Promise<void> } {
  const startedAt = performance.now()
  // At the lowest priority (`nice -n 19`, where the system has it): the check takes only the CPU
  // the test files leave idle (their waits on servers, timers and pages), never theirs.
  const check = [process.execPath, join(root, 'scripts/typecheck.mjs')]
  const [command, ...args] = existsSync('/usr/bin/nice') ? ['/usr/bin/nice', '-n', '19', ...check] : check
  const checker = spawn(command!, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
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
    checker.on('close', (code) => {
      // Said when it ends, so a run's log shows what the check took beside the files.
      process.stdout.write(`\n[type check] ${code === 0 ? 'passed' : 'failed'} in ${((performance.now() - startedAt) / 1000).toFixed(0)} s\n`)
      resolve(code ?? 1)
    })
  })
  return {
    async finished() {
      const code = await exit
      if (code === 0) return
      // Vitest reports an error thrown by a global setup's teardown but keeps its exit code: the run fails by this one.
      process.exitCode = 1
      throw new Error(`The type check failed (scripts/typecheck.mjs, exit ${code}):\n${report.slice(0, REPORT_CHARS)}`)
    },
  }
}
