import { describe, expect, it } from 'vitest'
import { WorkflowRunHistory } from '../../../server/lib/jobs/workflow-runs'
import { newWorkflowJob } from '../../../server/lib/jobs/new-job'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { createMemoryJobStore } from '../../../server/lib/stores/jobs/memory'
import { createMemoryWorkflowRunStore } from '../../../server/lib/stores/workflows/runs-memory'
import { WORKFLOW_EXAMPLES } from '../../../server/lib/workflows/examples'

const DAY = 86_400_000
const secretBox = createSecretBox('a test secret that is long enough to use')
const definition = WORKFLOW_EXAMPLES['triage-router']!

function setUp() {
  const jobs = createMemoryJobStore()
  const runs = createMemoryWorkflowRunStore()
  const history = new WorkflowRunHistory({ jobs, runs, retentionDays: 30 })
  const start = (prompt = 'Where is my parcel?') => jobs.createJob(newWorkflowJob({ principal: { userId: 'a', role: 'user' }, workflowId: 'w1', version: 3, definition, prompt }, secretBox))
  return { jobs, runs, history, start }
}

describe('workflow run history', () => {
  it('keeps a run from its start to its end: its version, how it started, its prompt, steps, usage and the run as viewers saw it', async () => {
    const { jobs, history, start } = setUp()
    const job = await start()
    await history.record(job)
    expect((await history.list({ userId: 'a', limit: 10 })).runs).toEqual([expect.objectContaining({ jobId: job.id, workflowId: 'w1', workflowName: definition.name, version: 3, startedVia: 'form', status: 'streaming', prompt: 'Where is my parcel?', stepsDone: 0, stepCount: definition.nodes.length })])
    await jobs.endJob(job.id, { status: 'complete', final: { content: 'Shipping answer', reasoning: '', chunksReceived: 1, finishReason: 'stop', usage: { promptTokens: 12, completionTokens: 8, totalTokens: 20, cachedTokens: 0, reasoningTokens: 0, cost: 0.001 }, now: job.startedAt + 500 } })
    await history.record((await jobs.getJob(job.id))!)
    const kept = await history.get(job.id)
    expect(kept).toMatchObject({ status: 'complete', finishedAt: job.startedAt + 500, usage: { totalTokens: 20, cost: 0.001 }, job: { content: 'Shipping answer', workflow: { version: 3, prompt: 'Where is my parcel?' } } })
    // What the history keeps has no secrets or server-side state.
    expect(kept!.job).not.toHaveProperty('request')
    expect(kept!.job).not.toHaveProperty('checkpoint')
  })

  it('still has the run after its job\'s live state is gone', async () => {
    const { jobs, history, start } = setUp()
    const job = await start()
    await jobs.endJob(job.id, { status: 'complete', final: { content: 'Done', reasoning: '', chunksReceived: 1, finishReason: 'stop', now: 1_000 } })
    await history.record((await jobs.getJob(job.id))!)
    expect(await jobs.cleanupExpired(Date.now())).toBe(1)
    expect(await jobs.getJob(job.id)).toBeNull()
    expect(await history.get(job.id)).toMatchObject({ jobId: job.id, status: 'complete', job: { content: 'Done' } })
  })

  it('after a crash, the sweep records the end of a run from its job, and marks a run whose job is gone as lost', async () => {
    const { jobs, runs, history, start } = setUp()
    // The process died after the job ended, before its end was kept.
    // One whose job was deleted before anyone kept its end.
    const lost = await start('second')
    await history.record(lost)
    await jobs.endJob(lost.id, { status: 'aborted' })
    await jobs.cleanupExpired(Date.now() + 1)
    const ended = await start('first')
    await history.record(ended)
    await jobs.endJob(ended.id, { status: 'error', error: { message: 'Step failed', kind: 'upstream' }, final: { content: '', reasoning: '', chunksReceived: 0 } })
    // One still running on (another) instance: left alone.
    const running = await start('third')
    await history.record(running)
    const now = Date.now()
    await history.sweep(now)
    expect(await runs.listUnfinishedRuns(10)).toEqual([expect.objectContaining({ jobId: running.id })])
    expect(await history.get(ended.id)).toMatchObject({ status: 'error', error: { message: 'Step failed', kind: 'upstream' } })
    expect(await history.get(lost.id)).toMatchObject({ status: 'error', finishedAt: now, error: { kind: 'interrupted' }, job: { status: 'error' } })
  })

  it('deletes runs past the retention in days, and a workflow\'s or an account\'s runs', async () => {
    const { jobs, history, start, runs } = setUp()
    const job = await start()
    await jobs.endJob(job.id, { status: 'complete', final: { content: 'Done', reasoning: '', chunksReceived: 1, finishReason: 'stop', now: 1_000 } })
    await history.record((await jobs.getJob(job.id))!)
    await jobs.cleanupExpired(Date.now())
    await history.sweep(1_000 + 29 * DAY)
    expect(await history.get(job.id)).not.toBeNull()
    await history.sweep(1_000 + 30 * DAY + 1)
    expect(await history.get(job.id)).toBeNull()
    const other = await start()
    await history.record(other)
    await history.deleteOfWorkflow('w1')
    expect(await runs.getRun(other.id)).toBeNull()
    await history.record(other)
    await history.deleteOfUser('a')
    expect(await runs.getRun(other.id)).toBeNull()
  })

  it('holds each workflow\'s and each account\'s kept runs to their size caps, the oldest ended going first', async () => {
    const jobs = createMemoryJobStore()
    const runs = createMemoryWorkflowRunStore()
    const history = new WorkflowRunHistory({ jobs, runs, retentionDays: 30, maxBytes: { perUser: 100_000, perWorkflow: 50_000 } })
    const finish = async (workflowId: string, at: number) => {
      const job = await jobs.createJob(newWorkflowJob({ principal: { userId: 'a', role: 'user' }, workflowId, definition, prompt: 'p' }, secretBox))
      await jobs.endJob(job.id, { status: 'complete', final: { content: 'x'.repeat(20_000), reasoning: '', chunksReceived: 1, finishReason: 'stop', now: at } })
      await history.record((await jobs.getJob(job.id))!)
      return job.id
    }
    const w1 = [await finish('w1', 1), await finish('w1', 2), await finish('w1', 3)]
    // Three runs of about 20 kB pass w1's 50 kB: its oldest went.
    expect(await runs.getRun(w1[0]!)).toBeNull()
    expect(await runs.bytesOf({ workflowId: 'w1' })).toBeLessThanOrEqual(50_000)
    const w2 = [await finish('w2', 4), await finish('w2', 5), await finish('w3', 6), await finish('w3', 7)]
    // Six runs of about 20 kB pass the account's 100 kB: its oldest (w1's) went, whichever workflow it was.
    expect(await runs.bytesOf({ userId: 'a' })).toBeLessThanOrEqual(100_000)
    expect(await runs.getRun(w1[1]!)).toBeNull()
    expect(await runs.getRun(w2.at(-1)!)).not.toBeNull()
  })
})
