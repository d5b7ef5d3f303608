/**
 * Test order: files that do not need the built app first (they run while it builds, see
 * app-build-first.ts), then those that do, longest first across both of their projects so the
 * two workers finish together. Longest: the last run's duration, else the larger file.
 */
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/** Projects whose files run the built app. */
export const APP_PROJECTS: ReadonlySet<string> = new Set(['e2e', 'browser'])

export default class AppFilesLast extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const needsApp = (spec: TestSpecification) => APP_PROJECTS.has(spec.project.name)
    const weight = (spec: TestSpecification) => {
      const key = `${spec.project.name}:${relative(this.ctx.config.root, spec.moduleId)}`
      return this.ctx.cache.getFileTestResults(key)?.duration ?? this.ctx.cache.getFileStats(key)?.size ?? 0
    }
    const appFiles = sorted.filter(needsApp).sort((a, b) => weight(b) - weight(a))
    return [...sorted.filter(spec => !needsApp(spec)), ...appFiles]
  }
}
