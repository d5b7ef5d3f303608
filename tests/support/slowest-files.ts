/**
 * A Vitest reporter that ends every run with its ten slowest test files: how long each ran (import
 * and tests) and when it started and ended, in seconds from the run's start (a file that waited for
 * the app's build shows it as a late end), so growth and a long critical path show in every stop's
 * CI log. It prints, it asserts nothing.
 */
import type { Reporter, TestModule } from 'vitest/node'

const SHOWN = 10

export default class SlowestFiles implements Reporter {
  private runStartedAt = performance.now()
  private readonly started = new Map<string, number>()
  private readonly ended = new Map<string, number>()

  onTestRunStart(): void {
    this.runStartedAt = performance.now()
  }

  onTestModuleStart(module: TestModule): void {
    this.started.set(module.moduleId + module.project.name, performance.now())
  }

  onTestModuleEnd(module: TestModule): void {
    this.ended.set(module.moduleId + module.project.name, performance.now())
  }

  onTestRunEnd(modules: ReadonlyArray<TestModule>): void {
    const seconds = (at: number | undefined) => (at === undefined ? '    ?' : ((at - this.runStartedAt) / 1000).toFixed(0).padStart(5))
    const timed = modules.map((module) => {
      const diagnostic = module.diagnostic()
      const key = module.moduleId + module.project.name
      return { file: `${module.project.name}: ${module.relativeModuleId}`, ms: diagnostic.duration + diagnostic.collectDuration + diagnostic.setupDuration, from: this.started.get(key), to: this.ended.get(key) }
    }).sort((a, b) => b.ms - a.ms).slice(0, SHOWN)
    if (timed.length === 0) return
    const lines = timed.map(item => `  ${(item.ms / 1000).toFixed(1).padStart(7)} s  (from ${seconds(item.from)} s to ${seconds(item.to)} s)  ${item.file}`)
    // Where the run's end went: the last files to end, and the end itself (after them, the type
    // check run beside the suite, when it is still going).
    const last = modules.map(module => ({ file: `${module.project.name}: ${module.relativeModuleId}`, to: this.ended.get(module.moduleId + module.project.name) ?? 0 }))
      .sort((a, b) => b.to - a.to).slice(0, 3).map(item => `${item.file} at ${seconds(item.to).trim()} s`)
    process.stdout.write(`\nThe ${timed.length} slowest test files (run time; when, from the run's start):\n${lines.join('\n')}\nThe last to end: ${last.join(', ')}; the run ended at ${seconds(performance.now()).trim()} s.\n`)
  }
}
