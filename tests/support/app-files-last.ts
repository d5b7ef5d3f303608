/**
 * Test order: the files that mostly wait (the MCP conformance scenarios) first, then the other
 * files that do not need the built app (they run while it builds, see
 * app-build-first.ts), then those that do, longest first across both of their projects so the
 * workers finish together. Longest: the last run's duration in this checkout; on a fresh
 * clone (CI has no results cache), the times of a full run on the 2-core machine kept in
 * app-file-times.json (`node scripts/app-file-times.mjs` writes them); for a file not there yet,
 * an estimate from its size at what a byte of such a file took (a browser file about 7 ms a
 * byte, from 4 to 13; an e2e file about 1.2, from 0.5 to 7). By size alone a short file of long
 * tests (the languages file: 100 lines, 96 s) started last, and the run ended on it alone.
 */
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'
import keptTimes from './app-file-times.json'

/** A full run's seconds by `project:file` (scripts/app-file-times.mjs). */
const KEPT_SECONDS: Readonly<Record<string, number | undefined>> = keptTimes

/** Projects whose files mostly wait on processes of their own, started before any other. */
const WAITING_PROJECTS: ReadonlySet<string> = new Set(['conformance'])

/** Projects whose files run the built app. */
export const APP_PROJECTS: ReadonlySet<string> = new Set(['e2e', 'browser'])

/** What a byte of a test file of each app project took, in ms (see above). */
const MS_PER_BYTE: Readonly<Record<string, number>> = { browser: 7, e2e: 1.2 }

export default class AppFilesLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const needsApp = (spec: TestSpecification) => APP_PROJECTS.has(spec.project.name)
    const weight = (spec: TestSpecification) => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`
      const measured = this.ctx.cache.getFileTestResults(key)?.duration
      if (measured !== undefined) return measured
      const kept = KEPT_SECONDS[key]
      if (kept !== undefined) return kept * 1000
      return (this.ctx.cache.getFileStats(key)?.size ?? 0) * (MS_PER_BYTE[spec.project.name] ?? 1)
    }
    const appFiles = sorted.filter(needsApp).sort((a, b) => weight(b) - weight(a))
    const waits = (spec: TestSpecification) => WAITING_PROJECTS.has(spec.project.name)
    return [...sorted.filter(waits), ...sorted.filter(spec => !needsApp(spec) && !waits(spec)), ...appFiles]
  }
}
