import { describe, expect, it } from 'vitest'
import { executeWorkflow } from '../../../server/lib/workflows/execute'
import type { WorkflowRunDependencies } from '../../../server/lib/workflows/run-contract'
import { loopItems, saysYes } from '../../../server/lib/workflows/loop'
import { validateWorkflow } from '../../../server/lib/workflows/validate'
import { workflowModelCallBound, workflowModels } from '../../../server/lib/workflows/model-calls'
import { publicWorkflowState } from '../../../server/lib/jobs/public-job'
import type { WorkflowDefinition } from '../../../shared/schemas/workflow'
import type { WorkflowState } from '../../../shared/types/workflow'

const hasTool = (name: string) => ['calculate', 'send_email'].includes(name)

function workflow(nodes: unknown[], edges: unknown[]): WorkflowDefinition {
  const result = validateWorkflow({ version: 1, name: 'Loops', nodes, edges }, hasTool)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.workflow
}

/** A for-each (or until) loop between a start and an output, its body one agent step `draft`. */
function loopWorkflow(loop: Record<string, unknown>, bodyPrompt = 'Reply to {{item}} (#{{index}})'): WorkflowDefinition {
  return workflow([
    { id: 'start', kind: 'start' },
    { id: 'each', kind: 'loop', ...loop, body: { nodes: [{ id: 'in', kind: 'start' }, { id: 'draft', kind: 'agent', prompt: bodyPrompt }, { id: 'done', kind: 'output' }], edges: [{ from: 'in', to: 'draft' }, { from: 'draft', to: 'done' }] } },
    { id: 'out', kind: 'output' },
  ], [{ from: 'start', to: 'each' }, { from: 'each', to: 'out' }])
}

/** Agents answer `<node>(<prompt>)`, after `gate` (when given) lets them; every call recorded. */
function dependencies(overrides: Partial<WorkflowRunDependencies> = {}, gate?: (nodeId: string) => Promise<void>) {
  const calls: string[] = []
  let running = 0
  let mostAtOnce = 0
  const deps: WorkflowRunDependencies = {
    runAgent: async (node, request) => {
      calls.push(`${node.id}:${request.prompt}`)
      running++
      mostAtOnce = Math.max(mostAtOnce, running)
      await gate?.(node.id)
      running--
      return { output: `${node.id.split('.').pop()}(${request.prompt})`, usage: { promptTokens: 1, completionTokens: 2, totalTokens: 3, cachedTokens: 0, reasoningTokens: 0, cost: 0.01 } }
    },
    runTool: async name => ({ output: name }),
    askModel: async () => ({ output: 'no' }),
    askApproval: async () => ({ approved: true }),
    isIdempotent: () => true,
    ...overrides,
  }
  return { deps, calls, mostAtOnce: () => mostAtOnce }
}

describe('loopItems', () => {
  it('reads a JSON array (in a code fence too), else the non-empty lines without list markers', () => {
    expect(loopItems('["a", "b", {"id": 3}, 4]')).toEqual(['a', 'b', '{"id":3}', '4'])
    expect(loopItems('```json\n["x","y"]\n```')).toEqual(['x', 'y'])
    expect(loopItems('- first\n\n2. second\n  * third  \n')).toEqual(['first', 'second', 'third'])
    expect(loopItems('[not json\nreally')).toEqual(['[not json', 'really'])
    expect(loopItems('   ')).toEqual([])
  })

  it('reads yes from a reply\'s first word only', () => {
    expect(saysYes('Yes, it approves.')).toBe(true)
    expect(saysYes('**YES**')).toBe(true)
    expect(saysYes('No, not yet. yes later')).toBe(false)
    expect(saysYes('')).toBe(false)
  })
})

describe('a for-each loop', () => {
  it('runs its body once per item, in order, and collects the results in order (text or JSON)', async () => {
    const { deps, calls } = dependencies()
    const result = await executeWorkflow({ workflow: loopWorkflow({ mode: 'for-each' }), workflowId: 'w', prompt: 'alpha\nbeta\ngamma', dependencies: deps })
    expect(result.status).toBe('complete')
    expect(calls).toEqual(['each.1.draft:Reply to alpha (#1)', 'each.2.draft:Reply to beta (#2)', 'each.3.draft:Reply to gamma (#3)'])
    expect(result.output).toBe('draft(Reply to alpha (#1))\n\ndraft(Reply to beta (#2))\n\ndraft(Reply to gamma (#3))')
    const loop = result.state.nodeStates.each!
    expect(loop.iterations?.map(iteration => [iteration.status, iteration.item])).toEqual([['completed', 'alpha'], ['completed', 'beta'], ['completed', 'gamma']])
    expect(loop.usage).toMatchObject({ totalTokens: 9, cost: 0.03 })
    // Finished iterations keep their result, not their steps.
    expect(loop.iterations![0]!.state).toBeUndefined()

    const json = await executeWorkflow({ workflow: loopWorkflow({ mode: 'for-each', items: '["x", "y"]', collect: 'json' }), workflowId: 'w', prompt: 'ignored', dependencies: dependencies().deps })
    expect(JSON.parse(json.output)).toEqual(['draft(Reply to x (#1))', 'draft(Reply to y (#2))'])
  })

  it('completes at once over an empty list, and fails naming the limit over a list longer than maxItems', async () => {
    const { deps, calls } = dependencies()
    const empty = await executeWorkflow({ workflow: loopWorkflow({ mode: 'for-each', collect: 'json' }), workflowId: 'w', prompt: '[]', dependencies: deps })
    expect(empty).toMatchObject({ status: 'complete', output: '[]' })
    expect(calls).toEqual([])
    const long = await executeWorkflow({ workflow: loopWorkflow({ mode: 'for-each', maxItems: 3 }), workflowId: 'w', prompt: 'a\nb\nc\nd', dependencies: deps })
    expect(long.status).toBe('error')
    expect(long.error).toMatch(/the list has 4 items, more than this loop's maxItems \(3\)/)
    expect(calls).toEqual([])
  })

  it('counts every iteration\'s text against the run\'s one limit: iterations each under it cannot add up past it', async () => {
    const { deps } = dependencies({ runAgent: async () => ({ output: 'z'.repeat(30) }) })
    const result = await executeWorkflow({ workflow: loopWorkflow({ mode: 'for-each' }), workflowId: 'w', prompt: 'a\nb\nc\nd\ne', dependencies: deps, limits: { stepChars: 1_000, runChars: 100 } })
    expect(result.status).toBe('error')
    expect(result.error).toMatch(/iteration 2 .*together produced more than 100 characters/)
  })

  it('runs `concurrency` iterations at a time and still collects in the items\' order', async () => {
    const waiting: Array<{ id: string, go: () => void }> = []
    const gate = (id: string) => new Promise<void>(go => waiting.push({ id, go }))
    const { deps, mostAtOnce } = dependencies({}, gate)
    const run = executeWorkflow({ workflow: loopWorkflow({ mode: 'for-each', concurrency: 2 }), workflowId: 'w', prompt: 'a\nb\nc\nd\ne', dependencies: deps })
    // Let them finish out of order: always the newest first (each step starts a turn of the event loop later).
    let done = false
    void run.then(() => (done = true))
    while (!done) {
      await new Promise(resolve => setImmediate(resolve))
      waiting.pop()?.go()
    }
    const result = await run
    expect(mostAtOnce()).toBe(2)
    expect(result.output.split('\n\n')).toEqual(['a', 'b', 'c', 'd', 'e'].map((item, index) => `draft(Reply to ${item} (#${index + 1}))`))
  })

  it('fails at a failing iteration, naming it, and stops the others', async () => {
    const { deps, calls } = dependencies({
      runAgent: async (node, request) => {
        calls.push(node.id)
        return request.prompt.includes('bad') ? { error: 'the model refused' } : { output: 'fine' }
      },
    })
    const result = await executeWorkflow({ workflow: loopWorkflow({ mode: 'for-each' }), workflowId: 'w', prompt: 'good\nbad\nnever', dependencies: deps })
    expect(result.status).toBe('error')
    expect(result.error).toMatch(/Step "each" failed: iteration 2 \(“bad”\): Step "draft" failed: the model refused/)
    expect(calls).toEqual(['each.1.draft', 'each.2.draft'])
    expect(result.state.nodeStates.each!.iterations!.map(iteration => iteration.status)).toEqual(['completed', 'error', 'pending'])
    // The failed iteration keeps its steps, to see where.
    expect(result.state.nodeStates.each!.iterations![1]!.state?.nodeStates.draft).toMatchObject({ status: 'error', error: 'the model refused' })
  })

  it('resumes at the iteration it was in: finished iterations are not run again, the one under way resumes from its own steps', async () => {
    const twoSteps = workflow([
      { id: 'start', kind: 'start' },
      { id: 'each', kind: 'loop', mode: 'for-each', body: { nodes: [{ id: 'in', kind: 'start' }, { id: 'first', kind: 'agent', prompt: 'one {{item}}' }, { id: 'second', kind: 'agent', prompt: 'two {{input}}' }, { id: 'done', kind: 'output' }], edges: [{ from: 'in', to: 'first' }, { from: 'first', to: 'second' }, { from: 'second', to: 'done' }] } },
      { id: 'out', kind: 'output' },
    ], [{ from: 'start', to: 'each' }, { from: 'each', to: 'out' }])
    // The first run stops (a shutdown) while iteration 3's second step runs.
    const controller = new AbortController()
    const states: WorkflowState[] = []
    const first = dependencies({}, async (id) => {
      if (id === 'each.3.second') {
        controller.abort('shutdown')
        await new Promise(resolve => setImmediate(resolve))
      }
    })
    const stopped = await executeWorkflow({ workflow: twoSteps, workflowId: 'w', prompt: 'a\nb\nc\nd\ne', dependencies: first.deps, signal: controller.signal, isResumableStop: () => true, callbacks: { onStateChange: (state) => { states.push(state) } } })
    expect(stopped.status).toBe('aborted')
    const saved = states.at(-1)!
    expect(saved.nodeStates.each!.status).toBe('running')
    expect(saved.nodeStates.each!.iterations!.map(iteration => iteration.status)).toEqual(['completed', 'completed', 'running', 'pending', 'pending'])
    expect(saved.nodeStates.each!.iterations![2]!.state?.nodeStates.first).toMatchObject({ status: 'completed', output: 'first(one c)' })

    const second = dependencies()
    const resumed = await executeWorkflow({ workflow: twoSteps, workflowId: 'w', prompt: 'a\nb\nc\nd\ne', dependencies: second.deps, resume: saved })
    expect(resumed.status).toBe('complete')
    // Iteration 3 goes on at its second step; 4 and 5 run whole; 1 and 2 not at all.
    expect(second.calls).toEqual(['each.3.second:two first(one c)', 'each.4.first:one d', 'each.4.second:two first(one d)', 'each.5.first:one e', 'each.5.second:two first(one e)'])
    expect(resumed.output.split('\n\n')).toHaveLength(5)
  })

  it('sees the enclosing run\'s outputs and inputs, and hides its iterations\' checkpoints from viewers', async () => {
    const { deps, calls } = dependencies()
    const definition = workflow([
      { id: 'start', kind: 'start' },
      { id: 'plan', kind: 'agent', prompt: 'plan' },
      { id: 'each', kind: 'loop', mode: 'for-each', items: '["p", "q"]', body: { nodes: [{ id: 'in', kind: 'start' }, { id: 'work', kind: 'agent', prompt: '{{item}} per {{nodes.plan}} for {{inputs.who}}; before: {{previous}}' }, { id: 'done', kind: 'output' }], edges: [{ from: 'in', to: 'work' }, { from: 'work', to: 'done' }] } },
      { id: 'out', kind: 'output' },
    ], [{ from: 'start', to: 'plan' }, { from: 'plan', to: 'each' }, { from: 'each', to: 'out' }])
    await executeWorkflow({ workflow: definition, workflowId: 'w', prompt: 'x', inputs: { who: 'Ana' }, dependencies: deps })
    expect(calls.slice(1)).toEqual(['each.1.work:p per plan(plan) for Ana; before: ', 'each.2.work:q per plan(plan) for Ana; before: work(p per plan(plan) for Ana; before: )'])

    const state: WorkflowState = {
      workflowId: 'w', workflowName: 'n', executionOrder: [], currentNodeId: 'each',
      nodeStates: { each: { status: 'running', iterations: [{ status: 'running', state: { workflowId: 'w', workflowName: 'n', executionOrder: [], currentNodeId: 'work', nodeStates: {}, agentSteps: { work: { content: 'secret', executions: [], messages: [], toolRounds: 0, contentLength: 0, reasoningLength: 0 } as never } } }] } },
    }
    expect(JSON.stringify(publicWorkflowState(state))).not.toContain('secret')
  })
})

describe('an until loop', () => {
  const reviseUntil = (until: Record<string, unknown>, extra: Record<string, unknown> = {}) => loopWorkflow({ mode: 'until', until, ...extra }, 'revise {{item}}')

  it('runs the body again on its last result until the result contains the text', async () => {
    let round = 0
    const { deps, calls } = dependencies({ runAgent: async (node, request) => {
      calls.push(`${node.id}:${request.prompt}`)
      return { output: ++round === 3 ? 'APPROVED draft' : `draft ${round}` }
    } })
    const result = await executeWorkflow({ workflow: reviseUntil({ contains: 'approved' }), workflowId: 'w', prompt: 'idea', dependencies: deps })
    expect(result).toMatchObject({ status: 'complete', output: 'APPROVED draft' })
    expect(calls).toEqual(['each.1.draft:revise idea', 'each.2.draft:revise draft 1', 'each.3.draft:revise draft 2'])
    expect(result.state.nodeStates.each!.iterations!.map(iteration => iteration.conditionHeld)).toEqual([false, false, true])
  })

  it('stops at maxIterations with the last result, or fails there when asked to', async () => {
    const { deps, calls } = dependencies()
    const last = await executeWorkflow({ workflow: reviseUntil({ matches: '^done$' }, { maxIterations: 2 }), workflowId: 'w', prompt: 'idea', dependencies: deps })
    expect(last).toMatchObject({ status: 'complete', output: 'draft(revise draft(revise idea))' })
    expect(calls).toHaveLength(2)
    const failing = await executeWorkflow({ workflow: reviseUntil({ contains: 'never' }, { maxIterations: 2, onLimit: 'fail' }), workflowId: 'w', prompt: 'idea', dependencies: deps })
    expect(failing.status).toBe('error')
    expect(failing.error).toMatch(/still did not hold after 2 iterations/)
  })

  it('asks a model the yes-or-no question after each iteration, and counts what it used', async () => {
    const questions: string[] = []
    const { deps } = dependencies({ askModel: async (request) => {
      questions.push(request.prompt)
      return { output: questions.length === 2 ? 'Yes.' : 'No, not yet.', usage: { promptTokens: 5, completionTokens: 1, totalTokens: 6, cachedTokens: 0, reasoningTokens: 0, cost: 0.001 } }
    } })
    const result = await executeWorkflow({ workflow: reviseUntil({ ask: 'Is this ready to send?' }), workflowId: 'w', prompt: 'idea', dependencies: deps })
    expect(result.status).toBe('complete')
    expect(questions).toHaveLength(2)
    expect(questions[0]).toMatch(/^Is this ready to send\?\n\nText:\ndraft\(revise idea\)\n\nAnswer with exactly one word: yes or no\.$/)
    expect(result.state.nodeStates.each!.usage).toMatchObject({ totalTokens: 2 * 3 + 2 * 6 })
  })
})

describe('loops at save time', () => {
  it('counts the worst case: the body\'s calls times maxItems or maxIterations, plus each yes-or-no question', () => {
    expect(workflowModelCallBound(loopWorkflow({ mode: 'for-each', maxItems: 10 }))).toBe(10 * 4)
    expect(workflowModelCallBound(loopWorkflow({ mode: 'until', maxIterations: 3, until: { ask: 'Done?', model: 'judge/model' } }))).toBe(3 * 4 + 3)
    expect([...workflowModels(loopWorkflow({ mode: 'until', until: { ask: 'Done?', model: 'judge/model' } }))].sort()).toEqual(['judge/model', 'or3/offline-demo'])
  })

  it.each([
    ['an until loop without a condition', { mode: 'until' }, undefined, /needs one: "contains", "matches" or "ask"/],
    ['an until pattern that needs backtracking', { mode: 'until', until: { matches: '(a)\\1' } }, undefined, /pattern that cannot be used/],
    ['a body without an output', { mode: 'for-each' }, { nodes: [{ id: 'in', kind: 'start' }, { id: 'draft', kind: 'agent' }], edges: [{ from: 'in', to: 'draft' }] }, /In the loop "each": A loop's body needs an output node/],
    ['a body step with the id of a step outside', { mode: 'for-each' }, { nodes: [{ id: 'in', kind: 'start' }, { id: 'start', kind: 'agent' }, { id: 'done', kind: 'output' }], edges: [{ from: 'in', to: 'start' }, { from: 'start', to: 'done' }] }, /"start" appears twice/],
    ['a body edge to a step outside it', { mode: 'for-each' }, { nodes: [{ id: 'in', kind: 'start' }, { id: 'done', kind: 'output' }], edges: [{ from: 'in', to: 'done' }, { from: 'in', to: 'out' }] }, /In the loop "each": An edge leads to "out", which is not a node of the body/],
    ['a loop inside a loop', { mode: 'for-each' }, { nodes: [{ id: 'in', kind: 'start' }, { id: 'inner', kind: 'loop', mode: 'for-each', body: { nodes: [], edges: [] } }, { id: 'done', kind: 'output' }], edges: [] }, /A loop's steps cannot be loops/],
  ])('refuses %s', (_label, loop, body, message) => {
    const raw = {
      version: 1,
      name: 'Bad loop',
      nodes: [{ id: 'start', kind: 'start' }, { id: 'each', kind: 'loop', ...loop, body: body ?? { nodes: [{ id: 'in', kind: 'start' }, { id: 'draft', kind: 'agent' }, { id: 'done', kind: 'output' }], edges: [{ from: 'in', to: 'draft' }, { from: 'draft', to: 'done' }] } }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'each' }, { from: 'each', to: 'out' }],
    }
    const result = validateWorkflow(raw, hasTool)
    expect(result.ok).toBe(false)
    expect((result as { problems: Array<{ message: string }> }).problems.map(problem => problem.message).join('\n')).toMatch(message)
  })

  it('says to use a loop when a graph has a cycle', () => {
    const result = validateWorkflow({ version: 1, name: 'Cycle', nodes: [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent' }, { id: 'b', kind: 'agent' }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'a' }, { from: 'b', to: 'out' }] }, hasTool)
    expect(JSON.stringify(result)).toMatch(/put them in a loop step's body/)
  })
})
