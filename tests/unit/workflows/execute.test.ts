import { describe, expect, it, vi } from 'vitest'
import { executeWorkflow } from '../../../server/lib/workflows/execute'
import { UNKNOWN_NODE_OUTCOME, type WorkflowRunDependencies } from '../../../server/lib/workflows/run-contract'
import { validateWorkflow } from '../../../server/lib/workflows/validate'
import { WORKFLOW_EXAMPLES } from '../../../server/lib/workflows/examples'
import type { WorkflowDefinition } from '../../../shared/schemas/workflow'
import type { WorkflowState } from '../../../shared/types/workflow'

const tools = new Set(['calculate', 'get_current_time', 'get_current_weather', 'send_email'])
const hasTool = (name: string) => tools.has(name)

function workflow(nodes: unknown[], edges: unknown[]): WorkflowDefinition {
  const result = validateWorkflow({ version: 1, name: 'Test', nodes, edges }, hasTool)
  if (!result.ok) throw new Error(JSON.stringify(result.problems))
  return result.workflow
}

/** Dependencies that answer from functions and record what ran. */
function dependencies(overrides: Partial<WorkflowRunDependencies> = {}) {
  const calls: string[] = []
  const deps: WorkflowRunDependencies = {
    runAgent: async (node, request, hooks) => {
      calls.push(`agent:${node.id}`)
      hooks.onToken(`[${node.id}]`)
      return { output: `${node.id}(${request.prompt})` }
    },
    runTool: async (name, args) => {
      calls.push(`tool:${name}`)
      return { output: `${name}:${JSON.stringify(args)}` }
    },
    askModel: async () => ({ output: 'general' }),
    askApproval: async () => ({ approved: true }),
    isIdempotent: name => name !== 'send_email',
    // A retry's wait is not slept here (retry-policy.test.ts checks when each is due).
    waitUntil: async () => {},
    ...overrides,
  }
  return { deps, calls }
}

const threeSteps = () => workflow(
  [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent', prompt: 'A: {{input}}' }, { id: 'b', kind: 'agent', prompt: 'B: {{input}}' }, { id: 'c', kind: 'agent', prompt: 'C: {{input}} / {{nodes.a}}' }, { id: 'out', kind: 'output' }],
  [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'c', to: 'out' }],
)

describe('validateWorkflow', () => {
  it('accepts the shipped examples', () => {
    for (const [key, example] of Object.entries(WORKFLOW_EXAMPLES)) expect(validateWorkflow(example, hasTool).ok, key).toBe(true)
  })

  it.each([
    ['an unknown node kind', [{ id: 'start', kind: 'start' }, { id: 'x', kind: 'teleport' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'x' }, { from: 'x', to: 'out' }], /^Unknown kind of step: use start, agent/, 'x'],
    ['a dangling edge', [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'out' }, { from: 'start', to: 'ghost' }], /"ghost", which is not a node/, 'ghost'],
    ['a tool the registry lacks', [{ id: 'start', kind: 'start' }, { id: 't', kind: 'tool', tool: 'launch_rockets' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 't' }, { from: 't', to: 'out' }], /tool "launch_rockets", which this server does not have/, 't'],
    ['a cycle', [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent' }, { id: 'b', kind: 'agent' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'a' }, { from: 'b', to: 'out' }], /form a cycle/, 'a'],
    ['a router branch with no edge', [{ id: 'start', kind: 'start' }, { id: 'r', kind: 'router', conditions: [{ branch: 'yes', contains: 'y' }], defaultBranch: 'no' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'r' }, { from: 'r', to: 'out', branch: 'yes' }], /branch "no", but no edge/, 'r'],
    ['an approval edge without approve or reject', [{ id: 'start', kind: 'start' }, { id: 'ok', kind: 'approval' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'ok' }, { from: 'ok', to: 'out', branch: 'maybe' }], /needs the branch "approve" or "reject"/, 'ok'],
    ['an approval with no approve edge', [{ id: 'start', kind: 'start' }, { id: 'ok', kind: 'approval' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'ok' }, { from: 'ok', to: 'out', branch: 'reject' }], /needs an edge with the branch "approve"/, 'ok'],
    ['a tool step whose tool is not chosen yet', [{ id: 'start', kind: 'start' }, { id: 't', kind: 'tool', tool: '' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 't' }, { from: 't', to: 'out' }], /^Choose the tool this step calls\.$/, 't'],
    ['a workflow step whose workflow is not chosen yet', [{ id: 'start', kind: 'start' }, { id: 'w', kind: 'workflow', workflowId: '' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'w' }, { from: 'w', to: 'out' }], /^Choose the workflow this step runs\.$/, 'w'],
    ['a step field out of bounds, in words naming the field', [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent', maxToolRounds: 99 }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'a' }, { from: 'a', to: 'out' }], /^The tool rounds must be at most 20\.$/, 'a'],
    ['a name too long', [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent', label: 'x'.repeat(81) }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'a' }, { from: 'a', to: 'out' }], /^The name is too long: at most 80 characters\.$/, 'a'],
    ['a retry wait below its floor', [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent', retries: 2, retry: { delaySeconds: -1 } }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'a' }, { from: 'a', to: 'out' }], /^The wait before a retry must be at least /, 'a'],
    ['a problem in a loop body\'s step, shown on that step', [{ id: 'start', kind: 'start' }, { id: 'each', kind: 'loop', mode: 'for-each', body: { nodes: [{ id: 'in', kind: 'start' }, { id: 'inner', kind: 'tool', tool: '' }, { id: 'end', kind: 'output' }], edges: [{ from: 'in', to: 'inner' }, { from: 'inner', to: 'end' }] } }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'each' }, { from: 'each', to: 'out' }], /^Choose the tool this step calls\.$/, 'inner'],
    ['a node nothing leads to', [{ id: 'start', kind: 'start' }, { id: 'lost', kind: 'agent' }, { id: 'out', kind: 'output' }], [{ from: 'start', to: 'out' }, { from: 'lost', to: 'out' }], /"lost" is never reached/, 'lost'],
  ])('rejects %s, naming the node', (_label, nodes, edges, message, nodeId) => {
    const result = validateWorkflow({ version: 1, name: 'Bad', nodes, edges }, hasTool)
    expect(result.ok).toBe(false)
    const problems = (result as { problems: Array<{ nodeId?: string, message: string }> }).problems
    expect(problems).toContainEqual(expect.objectContaining({ nodeId, message: expect.stringMatching(message) }))
  })
})

describe('a workflow\'s own schema problems, in words', () => {
  it('says what to change, naming the field as a person knows it, not its path', () => {
    const result = validateWorkflow({ version: 1, name: 'x'.repeat(500), nodes: [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'out' }] }, hasTool)
    expect(result).toEqual({ ok: false, problems: [{ message: expect.stringMatching(/^The name is too long: at most [\d,]+ characters\.$/) }] })
  })
})

describe('executeWorkflow', () => {
  it('runs a chain in order, templating inputs and earlier outputs, and reports every transition', async () => {
    const { deps, calls } = dependencies()
    const states: WorkflowState[] = []
    const tokens: string[] = []
    const result = await executeWorkflow({ workflow: threeSteps(), workflowId: 'w', prompt: 'hi', dependencies: deps, callbacks: { onStateChange: (state) => { states.push(state) }, onToken: (node, text) => tokens.push(`${node}${text}`) } })
    expect(result.status).toBe('complete')
    expect(calls).toEqual(['agent:a', 'agent:b', 'agent:c'])
    expect(result.output).toBe('c(C: b(B: a(A: hi)) / a(A: hi))')
    expect(result.state.executionOrder).toEqual(['start', 'a', 'b', 'c', 'out'])
    expect(tokens).toEqual(['a[a]', 'b[b]', 'c[c]'])
    expect(states.some(state => state.currentNodeId === 'b' && state.nodeStates.b!.status === 'running')).toBe(true)
    expect(result.state.nodeStates.a).toMatchObject({ status: 'completed', output: 'a(A: hi)' })
  })

  it('runs parallel branches at the same time and merges what they produced', async () => {
    let inFlight = 0
    let most = 0
    const slow = async <T>(value: T) => {
      inFlight++
      most = Math.max(most, inFlight)
      await new Promise(resolve => setTimeout(resolve, 20))
      inFlight--
      return value
    }
    const { deps } = dependencies({
      runAgent: async node => slow({ output: `agent ${node.id}` }),
      runTool: async (name, args) => slow({ output: `${name} ${JSON.stringify(args)}` }),
    })
    const result = await executeWorkflow({ workflow: WORKFLOW_EXAMPLES['parallel-perspectives']!, workflowId: 'w', prompt: 'q', dependencies: deps })
    expect(result.status).toBe('complete')
    expect(most).toBe(2)
    expect(result.output).toBe('## Facts\n\nagent facts\n\n## Time in UTC\n\nget_current_time {"timezone":"UTC"}')
  })

  it('follows a router\'s branch and skips the other', async () => {
    const { deps, calls } = dependencies()
    const weather = await executeWorkflow({ workflow: WORKFLOW_EXAMPLES['triage-router']!, workflowId: 'w', prompt: 'What is the weather in Paris?', dependencies: deps })
    expect(calls).toEqual(['agent:weather'])
    expect(weather.state.nodeStates).toMatchObject({ triage: { status: 'completed', branch: 'weather' }, general: { status: 'skipped' }, output: { status: 'completed' } })

    const asked = vi.fn<WorkflowRunDependencies['askModel']>(async () => ({ output: 'I pick: general.' }))
    const routed = workflow(
      [{ id: 'start', kind: 'start' }, { id: 'r', kind: 'router', mode: 'model', instruction: 'Pick a desk.', defaultBranch: 'general' }, { id: 'special', kind: 'agent' }, { id: 'general', kind: 'agent' }, { id: 'out', kind: 'output' }],
      [{ from: 'start', to: 'r' }, { from: 'r', to: 'special', branch: 'special' }, { from: 'r', to: 'general', branch: 'general' }, { from: 'special', to: 'out' }, { from: 'general', to: 'out' }],
    )
    const byModel = await executeWorkflow({ workflow: routed, workflowId: 'w', prompt: 'x', dependencies: dependencies({ askModel: asked }).deps })
    expect(asked.mock.calls[0]![0].prompt).toMatch(/Answer with exactly one of: special, general\./)
    expect(byModel.state.nodeStates).toMatchObject({ r: { branch: 'general' }, special: { status: 'skipped' }, general: { status: 'completed' } })
  })

  it('asks at an approval step with the draft shown, and follows approve or reject', async () => {
    const draftThenAsk = workflow(
      [{ id: 'start', kind: 'start' }, { id: 'draft', kind: 'agent', prompt: 'Draft: {{input}}' }, { id: 'check', kind: 'approval', question: 'Send the draft about {{prompt}}?' }, { id: 'send', kind: 'tool', tool: 'send_email', arguments: { body: '{{input}}' } }, { id: 'why', kind: 'output', template: 'Not sent. {{input}}' }, { id: 'out', kind: 'output' }],
      [{ from: 'start', to: 'draft' }, { from: 'draft', to: 'check' }, { from: 'check', to: 'send', branch: 'approve' }, { from: 'check', to: 'why', branch: 'reject' }, { from: 'send', to: 'out' }],
    )
    const approve = vi.fn<WorkflowRunDependencies['askApproval']>(async () => ({ approved: true }))
    const approved = dependencies({ askApproval: approve })
    const sent = await executeWorkflow({ workflow: draftThenAsk, workflowId: 'w', prompt: 'the launch', dependencies: approved.deps })
    expect(approve.mock.calls[0]![1]).toEqual({ question: 'Send the draft about the launch?', preview: 'draft(Draft: the launch)' })
    expect(approved.calls).toEqual(['agent:draft', 'tool:send_email'])
    expect(sent).toMatchObject({ status: 'complete', output: 'send_email:{"body":"draft(Draft: the launch)"}' })
    expect(sent.state.nodeStates).toMatchObject({ check: { status: 'completed', branch: 'approve' }, why: { status: 'skipped' } })

    const rejected = dependencies({ askApproval: async () => ({ approved: false, reason: 'too long' }) })
    const kept = await executeWorkflow({ workflow: draftThenAsk, workflowId: 'w', prompt: 'the launch', dependencies: rejected.deps })
    expect(rejected.calls).toEqual(['agent:draft'])
    expect(kept).toMatchObject({ status: 'complete', output: 'Not sent. Rejected: too long' })
    expect(kept.state.nodeStates).toMatchObject({ check: { branch: 'reject' }, send: { status: 'skipped' }, out: { status: 'skipped' } })
  })

  it.each([
    ['rejected', { approved: false, reason: 'not today' }, /not approved \(not today\)/],
    ['left unanswered', { approved: false, reason: 'nobody answered in time' }, /not approved \(nobody answered in time\)/],
  ])('ends the run as rejected, never complete, when an approval is %s with no reject edge', async (_, answer, message) => {
    const approveOnly = workflow(
      [{ id: 'start', kind: 'start' }, { id: 'check', kind: 'approval', label: 'Check' }, { id: 'side', kind: 'agent' }, { id: 'send', kind: 'tool', tool: 'send_email', arguments: { body: '{{input}}' } }, { id: 'out', kind: 'output' }],
      [{ from: 'start', to: 'check' }, { from: 'start', to: 'side' }, { from: 'check', to: 'send', branch: 'approve' }, { from: 'send', to: 'out' }, { from: 'side', to: 'out' }],
    )
    const run = dependencies({ askApproval: async () => answer })
    const result = await executeWorkflow({ workflow: approveOnly, workflowId: 'w', prompt: 'p', dependencies: run.deps })
    expect(result.status).toBe('rejected')
    expect(result.error).toMatch(/^Step "Check" was /)
    expect(result.error).toMatch(message)
    expect(run.calls).not.toContain('tool:send_email')
    expect(result.state.nodeStates).toMatchObject({ check: { status: 'completed', branch: 'reject' }, send: { status: 'skipped' }, out: { status: 'skipped' } })
  })

  it('fails the run at a failing node with its error, unless the node has retries left', async () => {
    let failures = 0
    const flaky = dependencies({
      runAgent: async (node) => {
        if (node.id === 'b' && failures++ < 1) return { error: 'upstream 500' }
        return { output: node.id }
      },
    })
    const failed = await executeWorkflow({ workflow: threeSteps(), workflowId: 'w', prompt: 'p', dependencies: flaky.deps })
    expect(failed).toMatchObject({ status: 'error', error: 'Step "b" failed: upstream 500', state: { failedNodeId: 'b' } })
    expect(failed.state.nodeStates).toMatchObject({ a: { status: 'completed' }, b: { status: 'error', error: 'upstream 500' }, c: { status: 'skipped' }, out: { status: 'skipped' } })

    failures = 0
    const retried = workflow(
      [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent' }, { id: 'b', kind: 'agent', retries: 1 }, { id: 'c', kind: 'agent' }, { id: 'out', kind: 'output' }],
      [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'c' }, { from: 'c', to: 'out' }],
    )
    const recovered = await executeWorkflow({ workflow: retried, workflowId: 'w', prompt: 'p', dependencies: flaky.deps })
    expect(recovered.status).toBe('complete')
    expect(recovered.state.nodeStates.b).toMatchObject({ status: 'completed', attempts: 1 })
  })

  it('stops the running node on abort and marks the rest skipped', async () => {
    const controller = new AbortController()
    const { deps } = dependencies({
      runAgent: (node, _request, _hooks, signal) => node.id === 'b'
        ? new Promise(resolve => signal.aborted ? resolve({ error: 'aborted' }) : signal.addEventListener('abort', () => resolve({ error: 'aborted' })))
        : Promise.resolve({ output: node.id }),
    })
    const run = executeWorkflow({ workflow: threeSteps(), workflowId: 'w', prompt: 'p', dependencies: deps, signal: controller.signal, callbacks: { onNodeStart: node => node === 'b' && controller.abort() } })
    const result = await run
    expect(result.status).toBe('aborted')
    expect(result.state.nodeStates).toMatchObject({ a: { status: 'completed' }, b: { status: 'skipped' }, c: { status: 'skipped' }, out: { status: 'skipped' } })
  })

  it('resumes from completed nodes without running them again, and restarts the interrupted one', async () => {
    const { deps, calls } = dependencies()
    const resume: WorkflowState = {
      workflowId: 'w', workflowName: 'Test', executionOrder: ['start', 'a'], currentNodeId: 'b', failedNodeId: null,
      nodeStates: { start: { status: 'completed', output: 'hi' }, a: { status: 'completed', output: 'A-from-before' }, b: { status: 'running' }, c: { status: 'pending' }, out: { status: 'pending' } },
    }
    const result = await executeWorkflow({ workflow: threeSteps(), workflowId: 'w', prompt: 'hi', dependencies: deps, resume })
    expect(calls).toEqual(['agent:b', 'agent:c'])
    expect(result.output).toBe('c(C: b(B: A-from-before) / A-from-before)')
    expect(result.state.executionOrder).toEqual(['start', 'a', 'b', 'c', 'out'])
  })

  it('does not re-run an interrupted tool step whose tool may have side effects', async () => {
    const mail = workflow(
      [{ id: 'start', kind: 'start' }, { id: 'send', kind: 'tool', tool: 'send_email', arguments: { to: '{{prompt}}' } }, { id: 'out', kind: 'output' }],
      [{ from: 'start', to: 'send' }, { from: 'send', to: 'out' }],
    )
    const { deps, calls } = dependencies()
    const resume: WorkflowState = { workflowId: 'w', workflowName: 'Test', executionOrder: ['start'], currentNodeId: 'send', failedNodeId: null, nodeStates: { start: { status: 'completed', output: 'a@example.com' }, send: { status: 'running' }, out: { status: 'pending' } } }
    const result = await executeWorkflow({ workflow: mail, workflowId: 'w', prompt: 'a@example.com', dependencies: deps, resume })
    expect(calls).toEqual([])
    expect(result).toMatchObject({ status: 'error', state: { failedNodeId: 'send', nodeStates: { send: { error: UNKNOWN_NODE_OUTCOME } } } })

    // A run that records starts: the tool that had begun is reported, one that had not (it waited for approval) runs now, once.
    const begun = await executeWorkflow({ workflow: mail, workflowId: 'w', prompt: 'a@example.com', dependencies: deps, resume: { ...resume, startsRecorded: true, nodeStates: { ...resume.nodeStates, send: { status: 'running', toolStartedAt: 5 } } } })
    expect(calls).toEqual([])
    expect(begun).toMatchObject({ status: 'error', state: { nodeStates: { send: { error: UNKNOWN_NODE_OUTCOME } } } })
    const waited = await executeWorkflow({ workflow: mail, workflowId: 'w', prompt: 'a@example.com', dependencies: deps, resume: { ...resume, startsRecorded: true } })
    expect(calls).toEqual(['tool:send_email'])
    expect(waited.status).toBe('complete')
  })

  it('records that a tool step\'s tool begins before it runs, and keeps a step\'s state as it stands when stopped to resume', async () => {
    const mail = workflow(
      [{ id: 'start', kind: 'start' }, { id: 'send', kind: 'tool', tool: 'send_email', arguments: { to: '{{prompt}}' } }, { id: 'out', kind: 'output' }],
      [{ from: 'start', to: 'send' }, { from: 'send', to: 'out' }],
    )
    const saved: WorkflowState[] = []
    const stop = new AbortController()
    const { deps } = dependencies({
      runTool: async (_name, _args, signal, _nodeId, markStarted) => {
        expect(await markStarted()).toBe(true)
        expect(saved.at(-1)!.nodeStates.send).toMatchObject({ status: 'running', toolStartedAt: expect.any(Number) })
        stop.abort('shutdown')
        return { error: signal.aborted ? 'stopped' : 'late' }
      },
    })
    const result = await executeWorkflow({ workflow: mail, workflowId: 'w', prompt: 'a', dependencies: deps, signal: stop.signal, isResumableStop: () => true, callbacks: { onStateChange: async (state) => { saved.push(state); return true } } })
    expect(result.status).toBe('aborted')
    expect(saved.at(-1)!.nodeStates.send).toMatchObject({ status: 'running', toolStartedAt: expect.any(Number) })
  })
})

describe('text limits', () => {
  const amplifier = (repeats: number) => workflow(
    [{ id: 'start', kind: 'start' }, { id: 'out', kind: 'output', template: '{{prompt}}'.repeat(repeats) }],
    [{ from: 'start', to: 'out' }],
  )

  it('fails a template that would repeat a long prompt past the step limit, before building it', async () => {
    const { deps } = dependencies()
    const result = await executeWorkflow({ workflow: amplifier(2_000), workflowId: 'w', prompt: 'x'.repeat(100_000), dependencies: deps, limits: { stepChars: 200_000, runChars: 1_000_000 } })
    expect(result.status).toBe('error')
    expect(result.state.nodeStates.out).toMatchObject({ status: 'error', error: expect.stringMatching(/longer than 200,000 characters/) })
    expect(result.output).toBe('')
  })

  it('renders a template that fits', async () => {
    const { deps } = dependencies()
    const result = await executeWorkflow({ workflow: amplifier(3), workflowId: 'w', prompt: 'ab', dependencies: deps, limits: { stepChars: 6, runChars: 100 } })
    expect(result).toMatchObject({ status: 'complete', output: 'ababab' })
  })

  it('fails a step whose output passes the step limit, without retrying it', async () => {
    let attempts = 0
    const { deps } = dependencies({ runAgent: async () => ({ output: 'y'.repeat(50 + attempts++) }) })
    const flow = workflow(
      [{ id: 'start', kind: 'start' }, { id: 'a', kind: 'agent', retries: 3 }, { id: 'out', kind: 'output' }],
      [{ from: 'start', to: 'a' }, { from: 'a', to: 'out' }],
    )
    const result = await executeWorkflow({ workflow: flow, workflowId: 'w', prompt: 'go', dependencies: deps, limits: { stepChars: 40, runChars: 1_000 } })
    expect(attempts).toBe(1)
    expect(result.state.nodeStates.a).toMatchObject({ status: 'error', error: expect.stringMatching(/produced 50 characters, more than the 40 a step may/) })
  })

  it('fails the step that takes the run past its total', async () => {
    const { deps } = dependencies({ runAgent: async () => ({ output: 'z'.repeat(30) }) })
    const result = await executeWorkflow({ workflow: threeSteps(), workflowId: 'w', prompt: 'p', dependencies: deps, limits: { stepChars: 100, runChars: 50 } })
    expect(result.status).toBe('error')
    expect(result.state.nodeStates.b).toMatchObject({ status: 'error', error: expect.stringMatching(/together produced more than 50 characters/) })
    expect(result.state.nodeStates.a!.status).toBe('completed')
  })
})
