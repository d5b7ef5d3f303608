import { describe, expect, it } from 'vitest'
import { executeWorkflow } from '../../../server/lib/workflows/execute'
import type { WorkflowRunDependencies } from '../../../server/lib/workflows/run-contract'
import { validateWorkflow } from '../../../server/lib/workflows/validate'
import type { WorkflowDefinition } from '../../../shared/schemas/workflow'
import type { WorkflowState } from '../../../shared/types/workflow'

function workflow(name: string, nodes: unknown[], edges: unknown[], inputs?: unknown[]): WorkflowDefinition {
  const result = validateWorkflow({ version: 1, name, nodes, edges, ...(inputs ? { inputs } : {}) }, () => true)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.workflow
}

/** A child that triages a ticket at a priority (its named inputs), in two agent steps. */
const triage = workflow('Triage', [
  { id: 'start', kind: 'start' },
  { id: 'read', kind: 'agent', prompt: 'Read {{inputs.ticket}} at {{inputs.priority}}' },
  { id: 'route', kind: 'agent', prompt: 'Route {{input}}' },
  { id: 'out', kind: 'output' },
], [{ from: 'start', to: 'read' }, { from: 'read', to: 'route' }, { from: 'route', to: 'out' }], [{ name: 'ticket', type: 'text', required: true }, { name: 'priority', type: 'number', required: true }])

/** A parent that drafts, then calls `child` with the draft and a priority, then finishes. */
const parentOf = (child: string, extra: Record<string, unknown> = {}) => workflow('Parent', [
  { id: 'start', kind: 'start' },
  { id: 'draft', kind: 'agent', prompt: 'Draft {{input}}' },
  { id: 'call', kind: 'workflow', workflowId: child, inputs: { ticket: '{{input}}', priority: '2' }, ...extra },
  { id: 'out', kind: 'output', template: 'Done: {{input}}' },
], [{ from: 'start', to: 'draft' }, { from: 'draft', to: 'call' }, { from: 'call', to: 'out' }])

function dependencies(saved: Record<string, WorkflowDefinition>, gate?: (id: string) => Promise<void>) {
  const calls: string[] = []
  const deps: WorkflowRunDependencies = {
    runAgent: async (node, request) => {
      calls.push(`${node.id}:${request.prompt}`)
      await gate?.(node.id)
      return { output: `${node.id.split('.').pop()}(${request.prompt})`, usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2, cachedTokens: 0, reasoningTokens: 0, cost: 0 } }
    },
    runTool: async name => ({ output: name }),
    askModel: async () => ({ output: 'no' }),
    askApproval: async () => ({ approved: true }),
    isIdempotent: () => true,
    loadWorkflow: async id => saved[id] ? { definition: saved[id]!, name: saved[id]!.name, version: 4 } : { error: `there is no workflow “${id}” of yours to run (was it deleted?)` },
  }
  return { deps, calls }
}

describe('a workflow step (a sub-workflow)', () => {
  it('runs the other workflow as a child with its inputs templated, and its output flows on', async () => {
    const { deps, calls } = dependencies({ triage })
    const result = await executeWorkflow({ workflow: parentOf('triage'), workflowId: 'parent', prompt: 'refund', dependencies: deps })
    expect(result.status).toBe('complete')
    expect(calls).toEqual(['draft:Draft refund', 'call.read:Read draft(Draft refund) at 2', 'call.route:Route read(Read draft(Draft refund) at 2)'])
    expect(result.output).toBe('Done: route(Route read(Read draft(Draft refund) at 2))')
    const step = result.state.nodeStates.call!
    expect(step.child).toMatchObject({ workflowId: 'triage', workflowName: 'Triage', version: 4, state: { nodeStates: { read: { status: 'completed' }, route: { status: 'completed' } } } })
    expect(step.usage).toMatchObject({ totalTokens: 4 })
  })

  it('fails naming the input a child cannot take, and a child that is not there', async () => {
    const { deps } = dependencies({ triage })
    const misfit = await executeWorkflow({ workflow: parentOf('triage', { inputs: { ticket: '{{input}}', priority: 'high' } }), workflowId: 'parent', prompt: 'x', dependencies: deps })
    expect(misfit.error).toMatch(/cannot take what this step gives it: .*priority/)
    const missing = await executeWorkflow({ workflow: parentOf('gone'), workflowId: 'parent', prompt: 'x', dependencies: deps })
    expect(missing.error).toMatch(/there is no workflow “gone” of yours/)
  })

  it('stops a workflow that calls itself at the depth limit', async () => {
    const loopy = parentOf('loopy')
    const { deps, calls } = dependencies({ loopy })
    const result = await executeWorkflow({ workflow: loopy, workflowId: 'loopy', prompt: 'x', dependencies: deps })
    expect(result.status).toBe('error')
    expect(result.error).toMatch(/only 3 deep, and this one would be 4 deep/)
    // The parent and three children drafted before the fourth was refused.
    expect(calls.filter(call => call.includes('draft:'))).toHaveLength(4)
  })

  it('reserves each child\'s worst case from what the run may still make, and refuses one past it', async () => {
    const { deps } = dependencies({ triage })
    const tight = { left: 4 * 2 - 1 }
    const result = await executeWorkflow({ workflow: parentOf('triage'), workflowId: 'parent', prompt: 'x', dependencies: deps, childModelCalls: tight })
    expect(result.error).toMatch(/could make up to 8 model calls, and this run may make only 7 more/)
    const enough = { left: 8 }
    expect((await executeWorkflow({ workflow: parentOf('triage'), workflowId: 'parent', prompt: 'x', dependencies: deps, childModelCalls: enough })).status).toBe('complete')
    expect(enough.left).toBe(0)
  })

  it('resumes a child at its own step after a restart, with the definition it began with; stopping the parent stops the child', async () => {
    const controller = new AbortController()
    const states: WorkflowState[] = []
    const first = dependencies({ triage }, async (id) => {
      if (id === 'call.route') {
        controller.abort('shutdown')
        await new Promise(resolve => setImmediate(resolve))
      }
    })
    await executeWorkflow({ workflow: parentOf('triage'), workflowId: 'parent', prompt: 'refund', dependencies: first.deps, signal: controller.signal, isResumableStop: () => true, callbacks: { onStateChange: (state) => { states.push(state) } } })
    const saved = states.at(-1)!
    expect(saved.nodeStates.call).toMatchObject({ status: 'running', child: { state: { nodeStates: { read: { status: 'completed' }, route: { status: 'running' } } } } })
    // The saved workflow changed meanwhile: the resumed child keeps the one it began with.
    const changed = { ...triage, nodes: triage.nodes.map(node => node.id === 'route' ? { ...node, prompt: 'CHANGED {{input}}' } : node) }
    const second = dependencies({ triage: changed as WorkflowDefinition })
    const resumed = await executeWorkflow({ workflow: parentOf('triage'), workflowId: 'parent', prompt: 'refund', dependencies: second.deps, resume: saved })
    expect(resumed.status).toBe('complete')
    expect(second.calls).toEqual(['call.route:Route read(Read draft(Draft refund) at 2)'])

    // A user's stop reaches the child's running step, and the parent ends stopped.
    const stop = new AbortController()
    const stopping = dependencies({ triage }, async (id) => {
      if (id === 'call.read') stop.abort('user')
    })
    const stopped = await executeWorkflow({ workflow: parentOf('triage'), workflowId: 'parent', prompt: 'x', dependencies: stopping.deps, signal: stop.signal })
    expect(stopped.status).toBe('aborted')
    expect(stopping.calls.some(call => call.startsWith('call.route'))).toBe(false)
    expect(stopped.state.nodeStates.call!.child?.state?.nodeStates.route?.status).toBe('skipped')
  })
})

describe('child runs in the run history', () => {
  it('keeps each child run (in a loop\'s iterations too) under an id made from its parent and step, linked to the parent', async () => {
    const { childRunsOf, childRunId } = await import('../../../server/lib/jobs/workflow-runs')
    const { deps } = dependencies({ triage })
    const parent = workflow('Parent', [
      { id: 'start', kind: 'start' },
      { id: 'each', kind: 'loop', mode: 'for-each', items: '["a", "b"]', body: { nodes: [{ id: 'in', kind: 'start' }, { id: 'call', kind: 'workflow', workflowId: 'triage', inputs: { ticket: '{{item}}', priority: '1' } }, { id: 'done', kind: 'output' }], edges: [{ from: 'in', to: 'call' }, { from: 'call', to: 'done' }] } },
      { id: 'out', kind: 'output' },
    ], [{ from: 'start', to: 'each' }, { from: 'each', to: 'out' }])
    const result = await executeWorkflow({ workflow: parent, workflowId: 'parent', prompt: 'x', dependencies: { ...deps, loadWorkflow: async (id, nodeId) => ({ definition: triage, name: 'Triage', runId: childRunId('job-1', nodeId) }) } })
    const job = { id: 'job-1', userId: 'u1', threadId: 'workflow:parent', messageId: 'm', type: 'workflow', model: 'workflow', status: 'complete', content: result.output, reasoning: '', startedAt: 1, updatedAt: 2, completedAt: 3, resumeCount: 0, chunksReceived: 0, workflowState: result.state } as unknown as Parameters<typeof childRunsOf>[0]
    const children = childRunsOf(job)
    expect(children.map(run => [run.parentRun?.nodeId, run.jobId])).toEqual([['each.1.call', childRunId('job-1', 'each.1.call')], ['each.2.call', childRunId('job-1', 'each.2.call')]])
    expect(children[1]).toMatchObject({ workflowId: 'triage', startedVia: 'parent', status: 'complete', userId: 'u1', job: { workflow: { inputs: { ticket: 'b', priority: '1' } } } })
  })
})
