/**
 * The whole project type-checks: the app, the server, `server/lib`, `convex/` and the tests, with
 * vue-tsc over the project references of tsconfig.json (what `npm run typecheck`, `nuxt
 * typecheck`, runs once it has written Nuxt's types; `npm ci` writes them with `nuxt prepare`).
 * It runs inside the suite, beside the app's build and the other unit files, rather than before
 * the suite on a machine that is otherwise half idle.
 */
import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const root = fileURLToPath(new URL('../../', import.meta.url))
const vueTsc = createRequire(import.meta.url).resolve('vue-tsc/bin/vue-tsc.js')

describe('types', () => {
  it('check across the project (vue-tsc -b)', async () => {
    const { code, output } = await new Promise<{ code: number, output: string }>((resolve) => {
      execFile(process.execPath, [vueTsc, '-b', '--noEmit'], { cwd: root, maxBuffer: 16 * 1024 * 1024 }, (error, stdout, stderr) => {
        resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, output: `${stdout}${stderr}` })
      })
    })
    expect(code, output.slice(0, 20_000)).toBe(0)
  }, 600_000)
})
