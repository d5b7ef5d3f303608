/** A run's budget of steps: counted from the definition (loops × bodies × attempts), children reserved as they start. */
import { describe, expect, it } from 'vitest'
import { executeWorkflow } from '../../../server/lib/workflows/execute'
import type { WorkflowRunDependencies } from '../../../server/lib/workflows/run-contract'
import { assertWorkflowSteps, workflowStepBound, WorkflowStepsError } from '../../../server/lib/workflows/step-budget'
import { validateWorkflow } from '../../../server/lib/workflows/validate'
import { WORKFLOW_EXAMPLES } from '../../../server/lib/workflows/examples'
import { testServerConfig } from '../../support/server-config'
import type { WorkflowDefinition } from '../../../shared/schemas/workflow'

function workflow(name: string, nodes: unknown[], edges: unknown[]): WorkflowDefinition {
  const result = validateWorkflow({ version: 1, name, nodes, edges }, () => true)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.workflow
}

/** `calls` calculate steps in a row. */
const tools = (calls: number) => workflow('Sums', [
  { id: 'start', kind: 'start' },
  ...Array.from({ length: calls }, (_, index) => ({ id: `t${index}`, kind: 'tool', tool: 'calculate', arguments: { expression: '1+1' } })),
  { id: 'out', kind: 'output' },
], [{ from: 'start', to: 't0' }, ...Array.from({ length: calls - 1 }, (_, index) => ({ from: `t${index}`, to: `t${index + 1}` })), { from: `t${calls - 1}`, to: 'out' }])

/** A for-each loop of up to `items` items, each running workflow `child`. */
const loopOver = (child: string, items: number) => workflow('Fan-out', [
  { id: 'start', kind: 'start' },
  { id: 'each', kind: 'loop', mode: 'for-each', maxItems: items, body: { nodes: [{ id: 'begin', kind: 'start' }, { id: 'call', kind: 'workflow', workflowId: child }, { id: 'end', kind: 'output' }], edges: [{ from: 'begin', to: 'call' }, { from: 'call', to: 'end' }] } },
  { id: 'out', kind: 'output' },
], [{ from: 'start', to: 'each' }, { from: 'each', to: 'out' }])

function dependencies(saved: Record<string, WorkflowDefinition>) {
  let tools = 0
  const deps: WorkflowRunDependencies = {
    runAgent: async () => ({ output: 'agent' }),
    runTool: async () => ({ output: String(++tools) }),
    askModel: async () => ({ output: 'no' }),
    askApproval: async () => ({ approved: true }),
    isIdempotent: () => true,
    loadWorkflow: async id => saved[id] ? { definition: saved[id]!, name: saved[id]!.name } : { error: 'none' },
  }
  return { deps, toolCalls: () => tools }
}

describe('the steps a workflow run may run', () => {
  it('are counted from the definition: each step × its attempts, a loop\'s body × its items, children as one', () => {
    expect(workflowStepBound(tools(12))).toBe(14)
    // The loop itself, and 12 iterations of start, call, output.
    expect(workflowStepBound(loopOver('sums', 12))).toBe(2 + 1 + 12 * 3)
    const retried = workflow('Retried', [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent', prompt: 'x', retries: 2 }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'a' }, { from: 'a', to: 'out' }])
    expect(workflowStepBound(retried)).toBe(5)
    expect(() => assertWorkflowSteps(loopOver('sums', 100), 100)).toThrow(WorkflowStepsError)
    expect(() => assertWorkflowSteps(loopOver('sums', 100), 100)).toThrow(/could run up to 303 steps in one run.*more than the 100 your role allows/)
  })

  it('lets the guest run every example workflow', () => {
    const guest = testServerConfig().limits.roles.guest.workflowSteps
    for (const [name, definition] of Object.entries(WORKFLOW_EXAMPLES)) expect(workflowStepBound(definition), name).toBeLessThanOrEqual(guest)
  })

  it('reserves each child\'s worst case as it starts: a fan-out past the budget fails at the child that would pass it, before its steps run', async () => {
    const { deps, toolCalls } = dependencies({ sums: tools(12) })
    const limit = 200
    const parent = loopOver('sums', 20)
    const result = await executeWorkflow({ workflow: parent, workflowId: 'w', prompt: Array.from({ length: 20 }, (_, index) => `item ${index}`).join('\n'), dependencies: deps, childSteps: { left: limit - workflowStepBound(parent), limit } })
    expect(result.status).toBe('error')
    expect(result.error).toMatch(/the workflow “Sums” could run up to 14 steps, and this run may run only \d+ more of the 200 your role allows one run/)
    // What ran stayed within the budget: (200 − 63) / 14 children of 12 tool steps each.
    expect(toolCalls()).toBe(Math.floor((limit - workflowStepBound(parent)) / 14) * 12)
  })
})
