// Writes tests/support/app-file-times.json: how long each e2e and browser file took in the last
// full `npm test` of this checkout (Vitest's results cache), rounded to the second. The test
// sequencer (tests/support/app-files-last.ts) starts the longest first from these figures on a
// fresh clone, which has no results cache of its own. Run it after a full run on the 2-core
// machine when files were added or grew: `node scripts/app-file-times.mjs`. Files the cache does
// not know (a run of a few files only) keep the times already written.
import { readdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const cacheDir = join(root, 'node_modules/.vite/vitest')
const results = existsSync(cacheDir) ? readdirSync(cacheDir).map(dir => join(cacheDir, dir, 'results.json')).filter(existsSync) : []
if (results.length === 0) {
  console.error('No Vitest results cache: run `npm test` first.')
  process.exit(1)
}
const written = join(root, 'tests/support/app-file-times.json')
const times = existsSync(written) ? JSON.parse(readFileSync(written, 'utf8')) : {}
for (const file of results) {
  for (const [key, { duration }] of JSON.parse(readFileSync(file, 'utf8')).results) {
    if (/^(?:e2e|browser):/.test(key) && duration > 0) times[key] = Math.round(duration / 1000)
  }
}
const sorted = Object.fromEntries(Object.entries(times).sort(([, a], [, b]) => b - a))
writeFileSync(written, `${JSON.stringify(sorted, null, 2)}\n`)
console.log(`${Object.keys(sorted).length} files written to tests/support/app-file-times.json`)
