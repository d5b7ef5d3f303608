/**
 * A Vitest reporter that ends every run with its ten slowest test files and their times (import
 * and tests together), so growth shows in every stop's CI log. It prints, it asserts nothing.
 */
import type { Reporter, TestModule } from 'vitest/node'

const SHOWN = 10

export default class SlowestFiles implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const timed = modules.map((module) => {
      const diagnostic = module.diagnostic()
      return { file: `${module.project.name}: ${module.relativeModuleId}`, ms: diagnostic.duration + diagnostic.collectDuration + diagnostic.setupDuration }
    }).sort((a, b) => b.ms - a.ms).slice(0, SHOWN)
    if (timed.length === 0) return
    const lines = timed.map(item => `  ${(item.ms / 1000).toFixed(1).padStart(7)} s  ${item.file}`)
    process.stdout.write(`\nThe ${timed.length} slowest test files:\n${lines.join('\n')}\n`)
  }
}
