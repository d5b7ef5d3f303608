import { describe, expect, it } from 'vitest'
import { WorkflowRunHistory } from '../../../server/lib/jobs/workflow-runs'
import { newWorkflowJob } from '../../../server/lib/jobs/new-job'
import { createSecretBox } from '../../../server/lib/security/secret-box'
import { createMemoryJobStore } from '../../../server/lib/stores/jobs/memory'
import { createMemoryWorkflowRunStore } from '../../../server/lib/stores/workflows/runs-memory'
import { FailureHandlerRefusal, failureRunId, WorkflowFailureHandlers, type FailureHandlerOptions } from '../../../server/lib/workflows/failure-handlers'
import { validateWorkflow } from '../../../server/lib/workflows/validate'
import type { SavedWorkflow, WorkflowDefinition } from '../../../shared/types/workflow'
import type { BackgroundJob } from '../../../shared/types/job'

const secretBox = createSecretBox('a test secret that is long enough to use')

function definition(extra: Record<string, unknown> = {}): WorkflowDefinition {
  const result = validateWorkflow({ version: 1, name: 'Nightly report', nodes: [{ id: 'start', kind: 'start' }, { id: 'fetch', kind: 'agent', label: 'Fetch the numbers' }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'fetch' }, { from: 'fetch', to: 'out' }], ...extra }, () => true)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.workflow
}

const handlerWorkflow: SavedWorkflow = {
  id: 'on-call', userId: 'a', name: 'Page the on-call', version: 2, createdAt: 0, updatedAt: 0,
  definition: definition({ name: 'Page the on-call', inputs: [{ name: 'error', type: 'long-text' }, { name: 'step', type: 'text' }, { name: 'run_id', type: 'text' }, { name: 'note', type: 'text' }] }),
}

function setUp(overrides: Partial<FailureHandlerOptions> = {}) {
  const jobs = createMemoryJobStore()
  const runs = createMemoryWorkflowRunStore()
  const history = new WorkflowRunHistory({ jobs, runs, retentionDays: 30 })
  const started: Array<Parameters<FailureHandlerOptions['startRun']>[0]> = []
  const handlers = new WorkflowFailureHandlers({
    loadWorkflow: async id => id === handlerWorkflow.id ? handlerWorkflow : null,
    // Its workflows use no tool.
    tools: { get: () => undefined },
    runExists: async id => (await jobs.getJob(id)) !== null || (await runs.getRun(id)) !== null,
    startRun: async (run) => {
      started.push(run)
      await jobs.createJob(newWorkflowJob({ principal: { userId: run.userId, role: 'user' }, workflowId: run.workflow.id, definition: run.definition, prompt: run.prompt, inputs: run.inputs, startedVia: 'failure', failureOf: run.failureOf, jobId: run.jobId }, secretBox))
    },
    isPassing: error => !(error instanceof Error && error.message.startsWith('refused')),
    notifications: { list: userId => jobs.notifications.list(userId), add: note => jobs.notifications.add(note) },
    ...overrides,
  })
  history.beforeEndKept(job => handlers.afterRun(job))
  /** A run of a workflow with `onFailure` that failed at its "fetch" step. */
  const failedRun = async (onFailure: WorkflowDefinition['onFailure'], startedVia?: 'failure'): Promise<BackgroundJob> => {
    const job = await jobs.createJob(newWorkflowJob({ principal: { userId: 'a', role: 'user' }, workflowId: 'nightly', definition: definition({ onFailure }), prompt: 'Report for Tuesday', ...(startedVia ? { startedVia } : {}) }, secretBox))
    await history.record(job)
    await jobs.updateRunState(job.id, { workflowState: { workflowId: 'nightly', workflowName: 'Nightly report', nodeStates: {}, executionOrder: [], currentNodeId: null, failedNodeId: 'fetch' } })
    await jobs.endJob(job.id, { status: 'error', error: { kind: 'workflow', message: 'Step "Fetch the numbers" failed: OpenRouter: server error (503)' }, final: { content: '', reasoning: '', chunksReceived: 0 } })
    return (await jobs.getJob(job.id))!
  }
  return { jobs, runs, history, handlers, started, failedRun }
}

describe('workflow failure handlers', () => {
  it('start the handler workflow once, as the owner, with the failure as its declared inputs, before the run\'s end is kept', async () => {
    const { history, runs, started, failedRun, jobs } = setUp()
    const failed = await failedRun({ workflowId: 'on-call' })
    await history.record(failed)
    expect(started).toHaveLength(1)
    expect(started[0]).toMatchObject({
      userId: 'a', jobId: failureRunId(failed.id), failureOf: failed.id,
      inputs: { error: 'Step "Fetch the numbers" failed: OpenRouter: server error (503)', step: 'Fetch the numbers (fetch)', run_id: failed.id },
    })
    // Only the inputs it declares among the failure's: "note" is not one.
    expect(Object.keys(started[0]!.inputs).sort()).toEqual(['error', 'run_id', 'step'])
    expect(started[0]!.prompt).toMatch(/^The run .+ of the workflow “Nightly report” failed at step “Fetch the numbers \(fetch\)”: Step "Fetch/)
    expect((await runs.getRun(failed.id))!.status).toBe('error')
    const handlerJob = (await jobs.getJob(failureRunId(failed.id)))!
    expect(handlerJob.request!.workflow).toMatchObject({ startedVia: 'failure', failureOf: failed.id })

    // Its end kept again (the sweep, another instance, a restart): nothing starts twice.
    await history.record(failed)
    expect(started).toHaveLength(1)
  })

  it('after a crash between the handler\'s start and the run\'s end being kept, the sweep keeps the end and starts nothing twice', async () => {
    const { history, runs, started, failedRun } = setUp()
    const failed = await failedRun({ workflowId: 'on-call' })
    // The process started the handler, then died before the end was kept.
    let crash = true
    const saveRun = runs.saveRun.bind(runs)
    runs.saveRun = async (run) => {
      if (crash && run.status === 'error') throw new Error('killed')
      return saveRun(run)
    }
    await expect(history.record(failed)).rejects.toThrow('killed')
    expect(started).toHaveLength(1)
    expect((await runs.getRun(failed.id))!.status).toBe('streaming')
    crash = false
    await history.sweep()
    expect((await runs.getRun(failed.id))!.status).toBe('error')
    expect(started).toHaveLength(1)
  })

  it('a passing obstacle leaves the end unkept, and the sweep starts the handler later', async () => {
    let busy = true
    const { jobs, runs, started, failedRun } = setUp()
    const failed = await failedRun({ workflowId: 'on-call' })
    const handlers = new WorkflowFailureHandlers({
      loadWorkflow: async () => handlerWorkflow,
      tools: { get: () => undefined },
      runExists: async () => started.length > 0,
      startRun: async (run) => {
        if (busy) throw new Error('SQLITE_BUSY')
        started.push(run)
      },
      isPassing: () => true,
      notifications: { list: async () => [], add: async () => {} },
    })
    const other = new WorkflowRunHistory({ jobs, runs, retentionDays: 30 })
    other.beforeEndKept(job => handlers.afterRun(job))
    await expect(other.record(failed)).rejects.toThrow('SQLITE_BUSY')
    expect((await runs.getRun(failed.id))!.status).toBe('streaming')
    busy = false
    await other.sweep()
    expect(started).toHaveLength(1)
    expect((await runs.getRun(failed.id))!.status).toBe('error')
  })

  it('tells the owner once, in words, when the handler cannot start; a run started by a handler starts none', async () => {
    const { history, jobs, started, failedRun } = setUp({ startRun: async () => { throw new FailureHandlerRefusal('The account that owns this workflow is disabled.') } })
    const gone = await failedRun({ workflowId: 'deleted-workflow' })
    await history.record(gone)
    await history.record(gone)
    const disabled = await failedRun({ workflowId: 'on-call' })
    await history.record(disabled)
    const notes = await jobs.notifications.list('a')
    expect(notes.map(note => note.body)).toEqual([
      'The account that owns this workflow is disabled.',
      expect.stringMatching(/^There is no workflow “deleted-workflow” of yours to run/),
    ])
    expect(notes.every(note => note.kind === 'job-error' && note.title === 'The failure workflow of “Nightly report” did not start')).toBe(true)

    const { history: second, started: none, failedRun: failedAgain } = setUp()
    await second.record(await failedAgain({ workflowId: 'on-call' }, 'failure'))
    expect(none).toHaveLength(0)
    expect(started).toHaveLength(0)
  })

  it('notifies the owner of a failed run once, even when a tab watched it, and not for a run that completed', async () => {
    const { history, jobs, failedRun } = setUp()
    const failed = await failedRun({ notify: true })
    await history.record(failed)
    await history.record(failed)
    expect(await jobs.notifications.list('a')).toEqual([expect.objectContaining({ jobId: failed.id, kind: 'job-error', title: 'The run of “Nightly report” failed' })])
    const ok = await jobs.createJob(newWorkflowJob({ principal: { userId: 'a', role: 'user' }, workflowId: 'nightly', definition: definition({ onFailure: { notify: true } }), prompt: 'p' }, secretBox))
    await jobs.endJob(ok.id, { status: 'complete', final: { content: 'fine', reasoning: '', chunksReceived: 1, finishReason: 'stop' } })
    await history.record((await jobs.getJob(ok.id))!)
    expect(await jobs.notifications.list('a')).toHaveLength(1)
  })

  it('refuses an onFailure that asks for nothing', () => {
    const result = validateWorkflow({ version: 1, name: 'x', nodes: [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'out' }], onFailure: {} }, () => true)
    expect(result.ok).toBe(false)
  })

  it('send a failed run to its workflow\'s webhook as one message id, even without onFailure; one that cannot be reached tells the owner once', async () => {
    const sent: Array<{ workflowId: string, id: string, payload: Record<string, unknown> }> = []
    let reachable = true
    const { history, jobs, failedRun } = setUp({
      webhooks: {
        call: async (workflowId, _userId, id, payload) => {
          if (!reachable) throw new Error('hooks.example.com answered 503.')
          sent.push({ workflowId, id, payload })
          return true
        },
      },
    })
    const failed = await failedRun(undefined)
    await history.record(failed)
    await history.record(failed)
    expect(sent).toHaveLength(2)
    expect(sent[0]!.id).toBe(sent[1]!.id)
    expect(sent[0]).toMatchObject({ workflowId: 'nightly', payload: { type: 'workflow.run.failed', run_id: failed.id, step: 'Fetch the numbers (fetch)', error: expect.stringMatching(/503/) } })
    expect(await jobs.notifications.list('a')).toEqual([])
    reachable = false
    const unreachable = await failedRun(undefined)
    await history.record(unreachable)
    await history.record(unreachable)
    expect((await jobs.notifications.list('a')).map(note => note.title)).toEqual(['The failure webhook of “Nightly report” could not be reached'])
  })
})
