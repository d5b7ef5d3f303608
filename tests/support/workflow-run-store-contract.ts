/** The behaviour every workflow run store must have (memory, sqlite, Convex). */
import { describe, expect, it } from 'vitest'
import { useTestFixture } from './file-fixture'
import type { WorkflowRunStore } from '../../server/lib/stores/workflows/run-store'
import type { JobStatus } from '../../shared/types/job'
import type { WorkflowRun } from '../../shared/types/workflow-run'

/** A kept run with the fields a list needs; `job` stands for the run as its viewers saw it. */
export function keptRun(jobId: string, fields: Partial<WorkflowRun> & { startedAt: number }): WorkflowRun {
  const status: JobStatus = fields.status ?? 'complete'
  const finishedAt = status === 'streaming' ? undefined : fields.finishedAt ?? fields.startedAt + 10
  return {
    jobId,
    workflowId: 'w1',
    workflowName: 'Triage',
    version: 1,
    userId: 'a',
    startedVia: 'form',
    stepsDone: 2,
    stepCount: 3,
    ...fields,
    status,
    ...(finishedAt !== undefined ? { finishedAt } : {}),
    job: fields.job ?? { id: jobId, userId: fields.userId ?? 'a', threadId: 'workflow:w1', messageId: 'm', type: 'workflow', model: 'workflow', status, content: `Answer of ${jobId}`, reasoning: '', chunksReceived: 0, activeToolCalls: [], toolRounds: [], startedAt: fields.startedAt, updatedAt: fields.startedAt, resumeCount: 0 },
  }
}

/** Registers the run store contract tests for one store. */
export function describeWorkflowRunStoreContract(name: string, createStore: () => WorkflowRunStore | Promise<WorkflowRunStore>): void {
  describe(`workflow run store contract: ${name}`, () => {
    const store = useTestFixture('The store', createStore, store => store.close())

    it('keeps a run by job id, and a later write of it replaces the earlier (its start, then its end)', async () => {
      await store.saveRun(keptRun('r1', { startedAt: 100, status: 'streaming', stepsDone: 0 }))
      expect(await store.getRun('r1')).toMatchObject({ jobId: 'r1', status: 'streaming', stepsDone: 0, job: { status: 'streaming' } })
      expect((await store.getRun('r1'))!.finishedAt).toBeUndefined()
      const ended = keptRun('r1', { startedAt: 100, status: 'error', finishedAt: 150, error: { message: 'Step 2 failed', kind: 'upstream' }, usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15, cachedTokens: 0, reasoningTokens: 0, cost: 0.002 } })
      await store.saveRun(ended)
      expect(await store.getRun('r1')).toEqual({ ...ended, sizeBytes: expect.any(Number) })
      expect(await store.getRun('missing')).toBeNull()
      expect((await store.listRuns({ userId: 'a', limit: 10 })).runs).toHaveLength(1)
    })

    it("lists one account's runs newest first, by workflow, status and start time", async () => {
      await store.saveRun(keptRun('a-old', { startedAt: 10, status: 'complete' }))
      await store.saveRun(keptRun('a-mid', { startedAt: 20, status: 'error', workflowId: 'w2' }))
      await store.saveRun(keptRun('a-new', { startedAt: 30, status: 'streaming' }))
      await store.saveRun(keptRun('b-run', { startedAt: 25, userId: 'b' }))
      const ids = async (query: Partial<Parameters<WorkflowRunStore['listRuns']>[0]>) => (await store.listRuns({ userId: 'a', limit: 10, ...query })).runs.map(run => run.jobId)
      expect(await ids({})).toEqual(['a-new', 'a-mid', 'a-old'])
      expect(await ids({ userId: 'b' })).toEqual(['b-run'])
      expect(await ids({ workflowId: 'w1' })).toEqual(['a-new', 'a-old'])
      expect(await ids({ statuses: ['error', 'complete'] })).toEqual(['a-mid', 'a-old'])
      expect(await ids({ startedFrom: 20 })).toEqual(['a-new', 'a-mid'])
      expect(await ids({ startedBefore: 20 })).toEqual(['a-old'])
      expect(await ids({ startedFrom: 15, startedBefore: 30, statuses: ['error'] })).toEqual(['a-mid'])
      const [summary] = (await store.listRuns({ userId: 'a', limit: 1 })).runs
      expect(summary).not.toHaveProperty('job')
      expect(summary).toMatchObject({ jobId: 'a-new', workflowName: 'Triage', stepsDone: 2, stepCount: 3, startedVia: 'form' })
    })

    it('pages through every run exactly once, runs started in the same millisecond included', async () => {
      const expected: string[] = []
      for (let index = 0; index < 7; index++) {
        // Three runs share each start time: the order within one is the job id's (descending).
        const startedAt = 1_000 - Math.floor(index / 3)
        await store.saveRun(keptRun(`run-${index}`, { startedAt, status: index % 2 === 0 ? 'complete' : 'error' }))
      }
      expected.push('run-2', 'run-1', 'run-0', 'run-5', 'run-4', 'run-3', 'run-6')
      const seen: string[] = []
      let after
      for (let page = 0; page < 10; page++) {
        const result = await store.listRuns({ userId: 'a', limit: 2, after })
        seen.push(...result.runs.map(run => run.jobId))
        if (!result.next) break
        after = result.next
      }
      expect(seen).toEqual(expected)
      // A filter pages too.
      const errors = await store.listRuns({ userId: 'a', limit: 2, statuses: ['error'] })
      const rest = await store.listRuns({ userId: 'a', limit: 2, statuses: ['error'], after: errors.next })
      expect([...errors.runs, ...rest.runs].map(run => run.jobId)).toEqual(['run-1', 'run-5', 'run-3'])
      expect(rest.next).toBeUndefined()
    })

    it('lists runs whose end was not recorded, oldest first', async () => {
      await store.saveRun(keptRun('done', { startedAt: 1 }))
      await store.saveRun(keptRun('late', { startedAt: 30, status: 'streaming' }))
      await store.saveRun(keptRun('early', { startedAt: 20, status: 'streaming', userId: 'b' }))
      expect((await store.listUnfinishedRuns(10)).map(run => run.jobId)).toEqual(['early', 'late'])
      expect((await store.listUnfinishedRuns(1)).map(run => run.jobId)).toEqual(['early'])
    })

    it('deletes a run, a workflow\'s runs, an account\'s runs, and runs that ended before the retention (never one still running)', async () => {
      await store.saveRun(keptRun('old', { startedAt: 1, finishedAt: 5 }))
      await store.saveRun(keptRun('running', { startedAt: 2, status: 'streaming' }))
      await store.saveRun(keptRun('recent', { startedAt: 50, finishedAt: 60 }))
      await store.saveRun(keptRun('other-workflow', { startedAt: 3, finishedAt: 4, workflowId: 'w2' }))
      await store.saveRun(keptRun('other-user', { startedAt: 3, finishedAt: 4, userId: 'b', workflowId: 'w9' }))
      expect((await store.cleanupExpired(10)).sort()).toEqual(['old', 'other-user', 'other-workflow'])
      expect((await store.listRuns({ userId: 'a', limit: 10 })).runs.map(run => run.jobId)).toEqual(['recent', 'running'])
      await store.saveRun(keptRun('w2-run', { startedAt: 70, workflowId: 'w2' }))
      expect(await store.deleteRunsOfWorkflow('w2')).toEqual(['w2-run'])
      expect(await store.deleteRun('recent')).toBe(true)
      expect(await store.deleteRun('recent')).toBe(false)
      await store.saveRun(keptRun('b-run', { startedAt: 80, userId: 'b' }))
      expect(await store.deleteRunsOfUser('a')).toEqual(['running'])
      expect((await store.listRuns({ userId: 'a', limit: 10 })).runs).toEqual([])
      expect((await store.listRuns({ userId: 'b', limit: 10 })).runs.map(run => run.jobId)).toEqual(['b-run'])
    })

    it('knows what an account\'s and a workflow\'s runs take, and trims the oldest ended ones to a size (never one still running)', async () => {
      const big = (jobId: string, fields: Partial<WorkflowRun> & { startedAt: number }) => {
        const run = keptRun(jobId, fields)
        return { ...run, job: { ...run.job, content: 'x'.repeat(10_000) } }
      }
      await store.saveRun(big('oldest', { startedAt: 1, finishedAt: 2 }))
      await store.saveRun(big('running', { startedAt: 3, status: 'streaming' }))
      await store.saveRun(big('middle', { startedAt: 4, finishedAt: 5, workflowId: 'w2' }))
      await store.saveRun(big('newest', { startedAt: 6, finishedAt: 7 }))
      await store.saveRun(big('other-user', { startedAt: 1, finishedAt: 2, userId: 'b', workflowId: 'w9' }))
      const size = (await store.getRun('oldest'))!.sizeBytes!
      expect(size).toBeGreaterThan(10_000)
      expect((await store.listRuns({ userId: 'a', limit: 10 })).runs.every(run => run.sizeBytes !== undefined && run.sizeBytes > 10_000)).toBe(true)
      const userBytes = await store.bytesOf({ userId: 'a' })
      expect(userBytes).toBeGreaterThanOrEqual(4 * 10_000)
      expect(await store.bytesOf({ workflowId: 'w2' })).toBe((await store.getRun('middle'))!.sizeBytes)
      // A rewrite of a run (its end after its start) counts once.
      await store.saveRun(big('newest', { startedAt: 6, finishedAt: 8 }))
      expect(await store.bytesOf({ userId: 'a' })).toBe(userBytes - size + (await store.getRun('newest'))!.sizeBytes!)

      // Under its cap: nothing goes. Over: the oldest ended runs, until it fits.
      expect(await store.trimToBytes({ userId: 'a' }, 10_000_000)).toEqual([])
      expect(await store.trimToBytes({ userId: 'a' }, (await store.bytesOf({ userId: 'a' })) - 1)).toEqual(['oldest'])
      expect(await store.getRun('oldest')).toBeNull()
      expect((await store.trimToBytes({ userId: 'a' }, 0)).sort()).toEqual(['middle', 'newest'])
      expect((await store.listRuns({ userId: 'a', limit: 10 })).runs.map(run => run.jobId)).toEqual(['running'])
      expect(await store.bytesOf({ workflowId: 'w2' })).toBe(0)
      expect(await store.bytesOf({ userId: 'b' })).toBeGreaterThan(10_000)
      expect(await store.trimToBytes({ workflowId: 'w9' }, 0)).toEqual(['other-user'])
      expect(await store.bytesOf({ userId: 'b' })).toBe(0)
      // Deleting the rest leaves no total behind.
      expect(await store.deleteRunsOfUser('a')).toEqual(['running'])
      expect(await store.bytesOf({ userId: 'a' })).toBe(0)
    })
  })
}
