/** A workflow run's state in pieces: split into a root and a part per nested run, joined back the same; sqlite writes only the parts that changed. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import BetterSqlite3 from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { joinWorkflowState, splitWorkflowState } from '../../../shared/workflow-state-parts'
import { createSqliteJobStore } from '../../../server/lib/stores/jobs/sqlite'
import type { WorkflowState } from '../../../shared/types/workflow'

const dirs: string[] = []
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})

/** A loop of `count` iterations, each running a child run of one step with `text`. */
function fanOut(count: number, text = (n: number) => `leaf ${n}`): WorkflowState {
  const child = (n: number): WorkflowState => ({ workflowId: 'c', workflowName: 'Child', nodeStates: { read: { status: 'completed', output: text(n) } }, executionOrder: ['read'], currentNodeId: null, failedNodeId: null })
  return {
    workflowId: 'w',
    workflowName: 'Fan',
    nodeStates: {
      each: {
        status: 'running',
        iterations: Array.from({ length: count }, (_, index) => ({ status: 'completed' as const, output: `out ${index + 1}`, state: { workflowId: 'w', workflowName: 'Fan', nodeStates: { call: { status: 'completed' as const, child: { workflowId: 'c', workflowName: 'Child', definition: { version: 1, name: 'Child', nodes: [], edges: [] } as never, prompt: 'p', state: child(index + 1) } } }, executionOrder: ['call'], currentNodeId: null, failedNodeId: null } })),
      },
    },
    executionOrder: [],
    currentNodeId: 'each',
    failedNodeId: null,
  }
}

describe('a workflow state in pieces', () => {
  it('has a part per iteration and child run, named by where it sits, and joins back to the same state', () => {
    const state = fanOut(3)
    const { root, parts } = splitWorkflowState(state)
    expect([...parts.keys()].sort()).toEqual(['each.1', 'each.1.call', 'each.2', 'each.2.call', 'each.3', 'each.3.call'])
    expect(root).not.toContain('leaf')
    expect(JSON.parse(parts.get('each.2.call')!).nodeStates.read.output).toBe('leaf 2')
    expect(joinWorkflowState(root, path => parts.get(path))).toEqual(state)
    // A state stored whole before there were parts reads back as it was; a lost part leaves its run without a state.
    expect(joinWorkflowState(JSON.stringify(state), () => undefined)).toEqual(state)
    const joined = joinWorkflowState(root, path => (path === 'each.3' ? undefined : parts.get(path)))
    expect(joined.nodeStates.each!.iterations![2]).toEqual({ status: 'completed', output: 'out 3' })
  })

  it('is written by sqlite a changed part at a time, read back whole, and deleted with its job', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'or3-parts-'))
    dirs.push(dir)
    const path = join(dir, 'or3.sqlite')
    const store = createSqliteJobStore({ path })
    const job = await store.createJob({ userId: 'u', threadId: 'workflow:w', messageId: 'm', type: 'workflow', model: 'workflow' })
    const state = fanOut(100, n => `leaf ${n} ${'x'.repeat(1_000)}`)
    await store.updateRunState(job.id, { workflowState: state })
    const db = new BetterSqlite3(path, { readonly: true })
    const bodies = () => new Map((db.prepare('SELECT path, body FROM job_workflow_state_parts WHERE job_id = ?').all(job.id) as Array<{ path: string, body: string }>).map(row => [row.path, row.body]))
    expect(bodies().size).toBe(200)
    const before = bodies()
    // One leaf changes: its part is rewritten, the other 199 are not (their bodies stay, and the root stays small).
    state.nodeStates.each!.iterations![41]!.state!.nodeStates.call!.child!.state!.nodeStates.read!.output = 'changed'
    await store.updateRunState(job.id, { workflowState: state })
    const after = bodies()
    expect([...after].filter(([key, body]) => before.get(key) !== body).map(([key]) => key)).toEqual(['each.42.call'])
    expect((db.prepare('SELECT length(workflow_state) AS n FROM background_jobs WHERE id = ?').get(job.id) as { n: number }).n).toBeLessThan(20_000)
    expect((await store.getJob(job.id))!.workflowState).toEqual(state)
    db.close()
    await store.endJob(job.id, { status: 'complete', final: { content: 'done', reasoning: '', finishReason: 'stop', chunksReceived: 0, now: 1_000 } })
    await store.cleanupExpired(2_000)
    const again = new BetterSqlite3(path, { readonly: true })
    expect((again.prepare('SELECT count(*) AS n FROM job_workflow_state_parts').get() as { n: number }).n).toBe(0)
    again.close()
    await store.close()
  })
})
