/**
 * A year of workflow runs expiring (`npm run bench`): 10,000 kept runs of about 20 KB deleted by
 * the run history's sweep (batches of 500), then their disk space given back by incremental
 * vacuum steps, with the event loop's longest stall measured for each (a stall is a moment no
 * request is answered) and the file's size before and after. Numbers, not assertions.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { bench, describe } from 'vitest'
import { WorkflowRunHistory } from '../../server/lib/jobs/workflow-runs'
import { openSqliteDatabase } from '../../server/lib/stores/sqlite/database'
import { SqliteSpace } from '../../server/lib/stores/sqlite/space'
import { createSqliteJobStore } from '../../server/lib/stores/jobs/sqlite'
import { createSqliteWorkflowRunStore } from '../../server/lib/stores/workflows/runs-sqlite'
import { keptRun } from '../support/workflow-run-store-contract'

const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const RUNS = 10_000
const DAY = 86_400_000

/** Runs `work` with the event loop watched; its time and the longest stall meanwhile. */
async function watched(work: () => Promise<unknown>): Promise<{ ms: number, stallMs: number, p99Ms: number }> {
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const started = performance.now()
  await work()
  const ms = performance.now() - started
  delay.disable()
  return { ms, stallMs: delay.max / 1e6, p99Ms: delay.percentile(99) / 1e6 }
}

describe('run history space', () => {
  bench(`${RUNS.toLocaleString('en')} expired runs deleted and their space given back while the event loop is watched`, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'or3-space-bench-'))
    const rows: Array<{ measure: string, value: string, target: string }> = []
    const path = join(dir, 'or3.sqlite')
    const runs = createSqliteWorkflowRunStore({ path })
    const jobs = createSqliteJobStore({ path })
    const space = new SqliteSpace(openSqliteDatabase(path))
    try {
      const content = 'step output '.repeat(1_700)
      for (let index = 0; index < RUNS; index++) {
        const run = keptRun(`run-${index}`, { startedAt: index, finishedAt: index + 1 })
        await runs.saveRun({ ...run, job: { ...run.job, content } })
      }
      space.reclaim()
      const before = statSync(path).size
      const history = new WorkflowRunHistory({ runs, jobs, retentionDays: 30 })
      // One sweep deletes up to 20 batches of 500: every run here is past the retention.
      const sweeps = await watched(async () => {
        for (let pass = 0; pass < RUNS / 10_000; pass++) await history.sweep(30 * DAY + RUNS + 10)
      })
      const freePages = space.stats().freePages
      const reclaim = await watched(async () => {
        while (space.stats().freePages > 0) await space.reclaim()
      })
      const after = statSync(path).size
      rows.push(
        { measure: `file with ${RUNS.toLocaleString('en')} runs`, value: `${(before / 1e6).toFixed(1)} MB`, target: '' },
        { measure: 'their expiry (sweeps)', value: `${sweeps.ms.toFixed(0)} ms`, target: '' },
        { measure: '  longest event-loop stall meanwhile', value: `${sweeps.stallMs.toFixed(0)} ms (p99 ${sweeps.p99Ms.toFixed(0)} ms)`, target: '≤ 100 ms' },
        { measure: 'free pages given back', value: `${freePages.toLocaleString('en')} (${(freePages * space.stats().pageSize / 1e6).toFixed(1)} MB)`, target: '' },
        { measure: '  in', value: `${reclaim.ms.toFixed(0)} ms`, target: '' },
        { measure: '  longest event-loop stall meanwhile', value: `${reclaim.stallMs.toFixed(0)} ms (p99 ${reclaim.p99Ms.toFixed(0)} ms)`, target: '≤ 100 ms' },
        { measure: 'file after', value: `${(after / 1e6).toFixed(1)} MB`, target: 'what is left' },
      )
    } finally {
      space.close()
      await runs.close()
      await jobs.close()
      rmSync(dir, { recursive: true, force: true })
      console.log('\nRun history space')
      console.table(rows)
    }
  }, once)
})
