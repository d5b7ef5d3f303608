import { describe, expect, it } from 'vitest'
import { executeWorkflow } from '../../../server/lib/workflows/execute'
import { retryDelayMs, retryPolicyOf, stepErrorKindOfModel, stepErrorKindOfTool } from '../../../server/lib/workflows/retry-policy'
import type { NodeOutcome, WorkflowRunDependencies } from '../../../server/lib/workflows/run-contract'
import { validateWorkflow } from '../../../server/lib/workflows/validate'
import type { WorkflowDefinition, WorkflowNode } from '../../../shared/schemas/workflow'
import type { WorkflowState } from '../../../shared/types/workflow'

function oneStep(step: Record<string, unknown>): WorkflowDefinition {
  const result = validateWorkflow({ version: 1, name: 'Retry', nodes: [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent', ...step }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'a' }, { from: 'a', to: 'out' }] }, () => true)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.workflow
}

/** An agent that answers each try from `replies` in turn; waits are recorded (when each was due), not slept. */
function scripted(replies: Array<NodeOutcome | 'hang'>) {
  const tries: number[] = []
  const waits: number[] = []
  const states: WorkflowState[] = []
  const deps: WorkflowRunDependencies = {
    runAgent: (_node, _request, _hooks, signal) => {
      tries.push(Date.now())
      const reply = replies[tries.length - 1] ?? { output: 'done' }
      if (reply !== 'hang') return Promise.resolve(reply)
      return new Promise(resolve => signal.addEventListener('abort', () => resolve({ error: 'stopped', kind: 'stopped' }), { once: true }))
    },
    runTool: async () => ({ output: '' }),
    askModel: async () => ({ output: '' }),
    askApproval: async () => ({ approved: true }),
    isIdempotent: () => true,
    waitUntil: async (at) => {
      waits.push(at)
    },
  }
  return { deps, tries, waits, states, callbacks: { onStateChange: (state: WorkflowState) => { states.push(structuredClone(state)) } } }
}

describe('retry policies', () => {
  const agent = (extra: Record<string, unknown>) => oneStep(extra).nodes[1] as WorkflowNode

  it('waits fixed, or exponentially with jitter between half and whole, up to the cap', () => {
    const fixed = retryPolicyOf(agent({ retries: 3, retry: { backoff: 'fixed', delaySeconds: 2 } }))
    expect([1, 2, 3].map(n => retryDelayMs(fixed, n, () => 0.5))).toEqual([2000, 2000, 2000])
    const exponential = retryPolicyOf(agent({ retries: 5, retry: { delaySeconds: 1, maxDelaySeconds: 5 } }))
    expect([1, 2, 3, 4].map(n => retryDelayMs(exponential, n, () => 1))).toEqual([1000, 2000, 4000, 5000])
    expect([1, 2, 3, 4].map(n => retryDelayMs(exponential, n, () => 0))).toEqual([500, 1000, 2000, 2500])
    // Defaults: exponential from a second, capped at a minute; one try and no timeout without retries.
    expect(retryPolicyOf(agent({ retries: 2 }))).toMatchObject({ attempts: 3, backoff: 'exponential', delayMs: 1000, maxDelayMs: 60_000, timeoutMs: undefined })
    expect(retryPolicyOf(agent({})).attempts).toBe(1)
  })

  it('sorts model and tool errors into what another try may cure and what it may not', () => {
    expect(['rate_limited', 'timeout', 'upstream_unavailable', 'stream_interrupted', 'bad_request', 'unauthorized', 'insufficient_credits', 'forbidden'].map(kind => stepErrorKindOfModel(kind as never)))
      .toEqual(['rate-limit', 'timeout', 'upstream', 'upstream', 'refused', 'refused', 'refused', 'refused'])
    expect(['timeout', 'execution_failed', 'unavailable', 'invalid_arguments', 'disabled', 'credentials_missing'].map(code => stepErrorKindOfTool(code as never)))
      .toEqual(['timeout', 'step', 'upstream', 'invalid', 'refused', 'refused'])
  })

  it('retries an upstream failure after the policy\'s wait, stored before it waits, and counts every try', async () => {
    const run = scripted([{ error: 'OpenRouter: server error (503)', kind: 'upstream', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2, cachedTokens: 0, reasoningTokens: 0, cost: 0.5 } }, { error: 'rate limited', kind: 'rate-limit' }, { output: 'third time' }])
    const result = await executeWorkflow({ workflow: oneStep({ retries: 3, retry: { backoff: 'fixed', delaySeconds: 7 } }), workflowId: 'w', prompt: 'p', dependencies: run.deps, callbacks: run.callbacks })
    expect(result).toMatchObject({ status: 'complete', output: 'third time' })
    expect(run.tries).toHaveLength(3)
    expect(run.waits).toHaveLength(2)
    expect(run.waits[0]! - run.tries[0]!).toBeGreaterThanOrEqual(7000)
    // Before the first wait, the step's failed try and when the next is due were handed over to store.
    const waiting = run.states.find(state => state.nodeStates.a!.retryAt !== undefined)!.nodeStates.a!
    expect(waiting).toMatchObject({ status: 'running', attempts: 1, retryAt: run.waits[0], error: 'OpenRouter: server error (503)' })
    expect(result.state.nodeStates.a).toMatchObject({ status: 'completed', attempts: 2, usage: { cost: 0.5 } })
    expect(result.state.nodeStates.a!.retryAt).toBeUndefined()
    expect(result.state.nodeStates.a!.error).toBeUndefined()
  })

  it.each([
    ['a refusal', { error: 'OpenRouter: insufficient credits (402)', kind: 'refused' as const }],
    ['an invalid input', { error: 'invalid arguments', kind: 'invalid' as const }],
    ['text over the limit', { error: 'too long', kind: 'too-long' as const }],
  ])('never retries %s', async (_label, failure) => {
    const run = scripted([failure])
    const result = await executeWorkflow({ workflow: oneStep({ retries: 5 }), workflowId: 'w', prompt: 'p', dependencies: run.deps })
    expect(result.status).toBe('error')
    expect(run.tries).toHaveLength(1)
    expect(run.waits).toHaveLength(0)
  })

  it('retries only the failures its policy names', async () => {
    const run = scripted([{ error: 'rate limited', kind: 'rate-limit' }, { error: 'the tool broke', kind: 'step' }])
    const result = await executeWorkflow({ workflow: oneStep({ retries: 5, retry: { on: ['rate-limit', 'timeout'] } }), workflowId: 'w', prompt: 'p', dependencies: run.deps })
    expect(result.state.nodeStates.a).toMatchObject({ status: 'error', error: 'the tool broke', attempts: 1 })
    expect(run.tries).toHaveLength(2)
  })

  it('stops a try that passes the step\'s timeout, as a timeout its policy retries', async () => {
    const run = scripted(['hang', 'hang'])
    const result = await executeWorkflow({ workflow: oneStep({ retries: 1, timeoutSeconds: 1 }), workflowId: 'w', prompt: 'p', dependencies: run.deps })
    expect(run.tries).toHaveLength(2)
    expect(result.state.nodeStates.a).toMatchObject({ status: 'error', error: 'this step took longer than its timeout of 1 s and was stopped', attempts: 1 })
  })

  it('after a restart, goes on with the same count and waits until the stored time, not a new wait', async () => {
    const retryAt = Date.now() + 60_000
    const resume: WorkflowState = {
      workflowId: 'w', workflowName: 'Retry', executionOrder: ['start'], currentNodeId: 'a', startsRecorded: true,
      nodeStates: { start: { status: 'completed', output: 'p' }, a: { status: 'running', attempts: 2, retryAt, error: 'upstream', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2, cachedTokens: 0, reasoningTokens: 0, cost: 1 } }, out: { status: 'pending' } },
    }
    const run = scripted([{ error: 'upstream again', kind: 'upstream', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2, cachedTokens: 0, reasoningTokens: 0, cost: 1 } }])
    const result = await executeWorkflow({ workflow: oneStep({ retries: 2, retry: { delaySeconds: 600 } }), workflowId: 'w', prompt: 'p', dependencies: run.deps, resume })
    // Two tries had failed: the third was the last, after the wait that was under way.
    expect(run.waits).toEqual([retryAt])
    expect(run.tries).toHaveLength(1)
    expect(result.state.nodeStates.a).toMatchObject({ status: 'error', error: 'upstream again', usage: { cost: 2 } })
  })

  it('a run stopped during a wait stops at once, and a stop to resume keeps the wait for the restart', async () => {
    const controller = new AbortController()
    const run = scripted([{ error: 'upstream', kind: 'upstream' }])
    run.deps.waitUntil = (_at, signal) => new Promise((resolve) => {
      signal.addEventListener('abort', () => resolve(), { once: true })
      controller.abort('shutdown')
    })
    const result = await executeWorkflow({ workflow: oneStep({ retries: 2 }), workflowId: 'w', prompt: 'p', dependencies: run.deps, signal: controller.signal, isResumableStop: () => true })
    expect(result.status).toBe('aborted')
    expect(result.state.nodeStates.a).toMatchObject({ status: 'running', attempts: 1 })
    expect(result.state.nodeStates.a!.retryAt).toBeGreaterThan(Date.now() - 1000)
  })
})
