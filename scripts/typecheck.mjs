#!/usr/bin/env node
// The whole project's type check (`npm run typecheck`; `npm test` runs it beside the suite, see
// tests/support/typecheck-beside.ts). Two checkers, each on what it can read:
// - vue-tsc (TypeScript 6 with Vue's language tools) checks the app with its .vue files, and the
//   component tests that mount them (nuxt.config.ts adds tests/components to the app's project);
// - TypeScript 7 (the native compiler, the `typescript-7` devDependency) checks every plain
//   TypeScript project: the server, shared/, the Node config files, server/lib, the tests, convex/.
//   It reads the same tsconfig files as TypeScript 6 and finds the same errors, at about a fifth
//   of the CPU (95 CPU-s to 25 on the 2-core machine).
// The root tsconfig.json still references every project, so `vue-tsc -b` (and an editor) checks
// them all with TypeScript 6 alone. Exit code 0 when every project checks; otherwise each failed
// checker's report, and exit 1.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('../', import.meta.url))
const require = createRequire(import.meta.url)
const vueTsc = require.resolve('vue-tsc/bin/vue-tsc.js')
const typescript7 = join(dirname(require.resolve('typescript-7/package.json')), 'bin/tsc')

/** The projects TypeScript 7 checks, one program each (none of them imports a .vue file). */
const PLAIN_PROJECTS = [
  '.nuxt/tsconfig.server.json',
  '.nuxt/tsconfig.shared.json',
  '.nuxt/tsconfig.node.json',
  'server/lib/tsconfig.json',
  'tests/tsconfig.json',
  'convex/tsconfig.json',
]

/** Runs `args` with Node; resolves with its exit code and everything it printed. */
function run(args) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.on('data', (chunk) => { output += chunk })
    child.stderr.on('data', (chunk) => { output += chunk })
    child.on('error', error => resolve({ code: 1, output: output + String(error) }))
    child.on('close', code => resolve({ code: code ?? 1, output }))
  })
}

const checks = [
  { name: 'vue-tsc: the app and its component tests', args: [vueTsc, '-p', '.nuxt/tsconfig.app.json', '--noEmit'] },
  ...PLAIN_PROJECTS.map(project => ({ name: `TypeScript 7: ${project}`, args: [typescript7, '-p', project, '--noEmit'] })),
]
// One at a time: the suite runs beside this, and each checker uses the cores it gets.
let failed = false
for (const check of checks) {
  const { code, output } = await run(check.args)
  if (code === 0) continue
  failed = true
  process.stderr.write(`✗ ${check.name} (exit ${code})\n${output}\n`)
}
process.exit(failed ? 1 : 0)
