/**
 * What a workflow of many steps without a model call costs the server (issue 57, finding 3): a
 * loop of 55 items each running a sub-workflow of 12 tool steps (770 steps), run by the executor
 * with the job layer's live state and coalesced writes (a copy of the state per write, not per
 * change), beside the old way of a copy per change. Prints the time per run and how long the event
 * loop was held at most in one go (numbers, not assertions).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { bench, describe } from 'vitest'
import { executeWorkflow } from '../../server/lib/workflows/execute'
import { validateWorkflow } from '../../server/lib/workflows/validate'
import { CoalescedStateWrites } from '../../server/lib/jobs/run/state-writes'
import type { WorkflowDefinition } from '../../shared/schemas/workflow'

function workflow(name: string, nodes: unknown[], edges: unknown[]): WorkflowDefinition {
  const result = validateWorkflow({ version: 1, name, nodes, edges }, () => true)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.workflow
}

const sums = workflow('Sums', [{ id: 'start', kind: 'start' }, ...Array.from({ length: 12 }, (_, index) => ({ id: `t${index}`, kind: 'tool', tool: 'calculate', arguments: { expression: '1+1' } })), { id: 'out', kind: 'output' }],
  [{ from: 'start', to: 't0' }, ...Array.from({ length: 11 }, (_, index) => ({ from: `t${index}`, to: `t${index + 1}` })), { from: 't11', to: 'out' }])
const fanOut = workflow('Fan-out', [{ id: 'start', kind: 'start' }, { id: 'each', kind: 'loop', mode: 'for-each', maxItems: 55, body: { nodes: [{ id: 'b', kind: 'start' }, { id: 'call', kind: 'workflow', workflowId: 'sums' }, { id: 'e', kind: 'output' }], edges: [{ from: 'b', to: 'call' }, { from: 'call', to: 'e' }] } }, { id: 'out', kind: 'output' }],
  [{ from: 'start', to: 'each' }, { from: 'each', to: 'out' }])
const prompt = Array.from({ length: 55 }, (_, index) => `item ${index}`).join('\n')
const dependencies = {
  runAgent: async () => ({ output: 'x' }),
  runTool: async () => ({ output: '2' }),
  askModel: async () => ({ output: 'no' }),
  askApproval: async () => ({ approved: true }),
  isIdempotent: () => true,
  loadWorkflow: async () => ({ definition: sums, name: 'Sums' }),
}

const figures: Array<Record<string, string | number>> = []

async function measure(label: string, run: () => Promise<unknown>): Promise<void> {
  const delay = monitorEventLoopDelay({ resolution: 5 })
  delay.enable()
  const startedAt = performance.now()
  await run()
  const ms = performance.now() - startedAt
  delay.disable()
  figures.push({ way: label, 'run (ms)': Math.round(ms), 'longest hold of the event loop (ms)': Math.round(delay.max / 1e6) })
}

describe('a fan-out of 770 tool steps', () => {
  bench('live state, coalesced writes (as the job layer runs it)', async () => {
    let writes = 0
    const coalesced = new CoalescedStateWrites(async (copy) => {
      writes += JSON.stringify(copy).length > 0 ? 1 : 0
      return true
    })
    await measure('live state, coalesced writes', async () => {
      await executeWorkflow({ workflow: fanOut, workflowId: 'w', prompt, liveState: true, dependencies, callbacks: { onStateChange: state => coalesced.changed(state) } })
      await coalesced.settled()
    })
    figures.at(-1)!.writes = writes
  }, { iterations: 3, warmupIterations: 0, time: 0 })

  bench('a copy of the state at every change (before)', async () => {
    let changes = 0
    await measure('a copy per change', () => executeWorkflow({ workflow: fanOut, workflowId: 'w', prompt, dependencies, callbacks: { onStateChange: () => void changes++ } }))
    figures.at(-1)!.writes = changes
  }, { iterations: 2, warmupIterations: 0, time: 0, teardown: () => console.table(figures) })
})
