/**
 * Runs a workflow graph: nodes start as soon as everything flowing into them has resolved, so
 * independent branches run at the same time; a router activates one branch and skips the others;
 * a merge joins what reached it. Every transition updates the run state and calls
 * `onStateChange`, which the job layer persists, so an interrupted run can resume from its
 * completed nodes (their outputs are reused, never recomputed). Never throws.
 */
import type { ActiveToolCall } from '../../../shared/types/job'
import type { WorkflowNodeState, WorkflowState } from '../../../shared/types/workflow'
import { renderArguments, renderTemplate, TemplateTooLargeError } from './templates'
import type { WorkflowDefinition, WorkflowEdge, WorkflowNode } from '../../../shared/schemas/workflow'
import { compileRouterPattern } from './router-patterns'
import { followSignal } from '../follow-signal'

type AgentNode = Extract<WorkflowNode, { kind: 'agent' }>
type RouterNode = Extract<WorkflowNode, { kind: 'router' }>
type ApprovalNode = Extract<WorkflowNode, { kind: 'approval' }>

/** What the person who runs a workflow said at an approval step (or that nobody answered in time). */
export type ApprovalOutcome = { approved: boolean, reason?: string } | { error: string }

/** Whether a router condition's pattern matches (a pattern that no longer compiles never does). */
function matchesPattern(source: string, input: string): boolean {
  const pattern = compileRouterPattern(source)
  return pattern.ok && pattern.test(input)
}

/** A node's work either produced text or failed with a message. */
export type NodeOutcome = { output: string } | { error: string, /** Over a text limit: retrying would not help. */ tooLong?: boolean }

/** What nodes need from the outside world (the model, the tool registry). */
export interface WorkflowRunDependencies {
  runAgent: (node: AgentNode, request: { model: string, system: string, prompt: string }, hooks: { onToken: (text: string) => void, onToolCall: (call: ActiveToolCall) => void }, signal: AbortSignal) => Promise<NodeOutcome>
  /** Runs a tool step (`nodeId` names the step, for an approval the tool may need). */
  runTool: (name: string, args: unknown, signal: AbortSignal, nodeId: string) => Promise<NodeOutcome>
  /** Asks a model to pick one of `branches`; returns its reply. */
  askRouter: (node: RouterNode, request: { model: string, prompt: string }, signal: AbortSignal) => Promise<NodeOutcome>
  /** Asks the person who runs the workflow (an approval step), with what flowed in shown. */
  askApproval: (node: ApprovalNode, request: { question: string, preview: string }, signal: AbortSignal) => Promise<ApprovalOutcome>
  /** Whether a tool may be re-run after a crash interrupted it. */
  isIdempotent: (tool: string) => boolean
}

/** Progress, as it happens. */
export interface WorkflowRunCallbacks {
  onToken?: (nodeId: string, text: string) => void
  onNodeStart?: (nodeId: string) => void
  onNodeFinish?: (nodeId: string, output: string) => void
  onToolCallEvent?: (nodeId: string, call: ActiveToolCall) => void
  onError?: (nodeId: string, error: string) => void
  /** The whole state after every transition (persist it). */
  onStateChange?: (state: WorkflowState) => void
}

/** How much text a run may make (the `limits` config). */
export interface WorkflowRunLimits {
  /** Longest text one step may produce, and longest a template may render to. */
  stepChars: number
  /** Longest text all of a run's steps together may produce. */
  runChars: number
}

/** What a step that passes a text limit reports. */
export function tooLongStepError(produced: number, limits: WorkflowRunLimits, scope: 'step' | 'run'): string {
  return scope === 'step'
    ? `this step produced ${produced.toLocaleString('en')} characters, more than the ${limits.stepChars.toLocaleString('en')} a step may (NUXT_LIMITS_WORKFLOW_STEP_CHARS); ask for a shorter result`
    : `the run's steps together produced more than ${limits.runChars.toLocaleString('en')} characters, the most a run may keep (NUXT_LIMITS_JOB_CONTENT_CHARS); ask for shorter results`
}

/** How a run ended. */
export interface WorkflowRunResult {
  /** `rejected`: an approval step was rejected (or nobody answered) and no `reject` edge leads on. */
  status: 'complete' | 'error' | 'rejected' | 'aborted'
  output: string
  state: WorkflowState
  error?: string
}

/** What an interrupted node that called a non-idempotent tool reports. */
export const UNKNOWN_NODE_OUTCOME = 'the server restarted while this step was calling a tool that may have side effects, so its outcome is unknown and it was not run again. Check the effect, then run the workflow again.'

function joinInputs(parts: Array<{ label: string, output: string }>): string {
  if (parts.length === 1) return parts[0]!.output
  return parts.map(part => `## ${part.label}\n\n${part.output}`).join('\n\n')
}

/** Runs `workflow` for `prompt` (or continues `resume`). */
export async function executeWorkflow(params: {
  workflow: WorkflowDefinition
  workflowId: string
  prompt: string
  dependencies: WorkflowRunDependencies
  callbacks?: WorkflowRunCallbacks
  signal?: AbortSignal
  resume?: WorkflowState
  limits?: WorkflowRunLimits
}): Promise<WorkflowRunResult> {
  const { workflow, prompt, dependencies } = params
  const limits = params.limits ?? { stepChars: Number.POSITIVE_INFINITY, runChars: Number.POSITIVE_INFINITY }
  const callbacks = params.callbacks ?? {}
  const nodes = new Map(workflow.nodes.map(node => [node.id, node]))
  const incoming = new Map<string, WorkflowEdge[]>()
  const outgoing = new Map<string, WorkflowEdge[]>()
  for (const edge of workflow.edges) {
    incoming.set(edge.to, [...(incoming.get(edge.to) ?? []), edge])
    outgoing.set(edge.from, [...(outgoing.get(edge.from) ?? []), edge])
  }

  const previous = params.resume?.nodeStates ?? {}
  const state: WorkflowState = {
    workflowId: params.workflowId,
    workflowName: workflow.name,
    nodeStates: Object.fromEntries(workflow.nodes.map(node => [node.id, previous[node.id]?.status === 'completed' ? previous[node.id]! : { status: 'pending' as const }])),
    executionOrder: (params.resume?.executionOrder ?? []).filter(id => previous[id]?.status === 'completed'),
    currentNodeId: null,
    failedNodeId: null,
  }
  const interrupted = new Set(Object.entries(previous).filter(([, node]) => node.status === 'running').map(([id]) => id))
  const edgeState = new Map<WorkflowEdge, 'pending' | 'active' | 'skipped'>(workflow.edges.map(edge => [edge, 'pending']))
  const outputs: Record<string, string | undefined> = {}
  let producedChars = 0
  const changed = () => callbacks.onStateChange?.(structuredClone(state))
  const setNode = (id: string, patch: Partial<WorkflowNodeState>) => {
    state.nodeStates[id] = { ...state.nodeStates[id]!, ...patch }
  }

  // A run-wide controller: the caller's abort, or a failing node, stops every running node.
  const { controller, dispose: stopFollowing } = followSignal(params.signal)
  let failure: { nodeId: string, error: string } | undefined
  // An approval said no with nowhere for "no" to go: the run ends `rejected`.
  let rejection: { nodeId: string, reason: string } | undefined

  /** Marks a finished node's outgoing edges active (a router: only its branch). */
  const release = (node: WorkflowNode, branch?: string) => {
    const branching = node.kind === 'router' || node.kind === 'approval'
    for (const edge of outgoing.get(node.id) ?? []) edgeState.set(edge, branching && edge.branch !== branch ? 'skipped' : 'active')
  }
  const skip = (node: WorkflowNode) => {
    setNode(node.id, { status: 'skipped' })
    for (const edge of outgoing.get(node.id) ?? []) edgeState.set(edge, 'skipped')
  }

  // Completed nodes from before a restart count as done: reuse their outputs and decisions.
  for (const node of workflow.nodes) {
    const done = state.nodeStates[node.id]!
    if (done.status === 'completed') {
      outputs[node.id] = done.output ?? ''
      producedChars += outputs[node.id]!.length
      release(node, done.branch)
    }
  }

  const inputOf = (node: WorkflowNode): string => {
    if (node.kind === 'start') return prompt
    const active = (incoming.get(node.id) ?? []).filter(edge => edgeState.get(edge) === 'active')
    return joinInputs(active.map(edge => ({ label: nodes.get(edge.from)?.label ?? edge.from, output: outputs[edge.from] ?? '' })))
  }

  const runNode = async (node: WorkflowNode, input: string): Promise<NodeOutcome & { branch?: string }> => {
    const scope = { prompt, input, nodes: outputs }
    const fill = (template: string) => renderTemplate(template, scope, limits.stepChars)
    switch (node.kind) {
      case 'start':
        return { output: prompt }
      case 'parallel':
      case 'merge':
        return { output: input }
      case 'output':
        return { output: node.template ? fill(node.template) : input }
      case 'agent':
        return dependencies.runAgent(node, {
          model: node.model ?? workflow.defaultModel,
          system: fill(node.systemPrompt),
          prompt: fill(node.prompt ?? '{{input}}'),
        }, {
          onToken: text => callbacks.onToken?.(node.id, text),
          onToolCall: (call) => {
            const calls = state.nodeStates[node.id]!.toolCalls ?? []
            const index = calls.findIndex(item => item.id === call.id)
            setNode(node.id, { toolCalls: index >= 0 ? calls.with(index, call) : [...calls, call] })
            callbacks.onToolCallEvent?.(node.id, call)
            changed()
          },
        }, controller.signal)
      case 'tool': {
        if (interrupted.has(node.id) && !dependencies.isIdempotent(node.tool) && !node.retries) return { error: UNKNOWN_NODE_OUTCOME }
        return dependencies.runTool(node.tool, renderArguments(node.arguments, scope, limits.stepChars), controller.signal, node.id)
      }
      case 'approval': {
        const asked = await dependencies.askApproval(node, { question: fill(node.question ?? 'Continue with this?'), preview: input }, controller.signal)
        if ('error' in asked) return asked
        // Approved, what came in flows on; rejected, the reason does (for a `reject` branch to use).
        return asked.approved
          ? { output: input, branch: 'approve' }
          : { output: `Rejected${asked.reason ? `: ${asked.reason}` : ''}`, branch: 'reject' }
      }
      case 'router': {
        if (node.mode === 'condition') {
          const match = node.conditions.find(item => (item.contains && input.toLowerCase().includes(item.contains.toLowerCase())) || (item.matches && matchesPattern(item.matches, input)))
          return { output: input, branch: match?.branch ?? node.defaultBranch }
        }
        const branches = [...new Set((outgoing.get(node.id) ?? []).map(edge => edge.branch!))]
        const asked = await dependencies.askRouter(node, {
          model: node.model ?? workflow.defaultModel,
          prompt: `${fill(node.instruction ?? '')}\n\nInput:\n${input}\n\nAnswer with exactly one of: ${branches.join(', ')}.`,
        }, controller.signal)
        if ('error' in asked) return asked
        const reply = asked.output.toLowerCase()
        const chosen = branches.map(branch => ({ branch, at: reply.indexOf(branch.toLowerCase()) })).filter(item => item.at >= 0).sort((a, b) => a.at - b.at)[0]
        return { output: input, branch: chosen?.branch ?? node.defaultBranch }
      }
    }
  }

  const execute = async (node: WorkflowNode): Promise<void> => {
    const input = inputOf(node)
    const attempts = 1 + ('retries' in node ? node.retries ?? 0 : 0)
    setNode(node.id, { status: 'running', startedAt: Date.now(), output: undefined, error: undefined, toolCalls: undefined })
    state.currentNodeId = node.id
    callbacks.onNodeStart?.(node.id)
    changed()
    let outcome: NodeOutcome & { branch?: string } = { error: 'not run' }
    for (let attempt = 1; attempt <= attempts; attempt++) {
      outcome = await runNode(node, input).catch(error => ({ error: error instanceof Error ? error.message : String(error), tooLong: error instanceof TemplateTooLargeError }))
      if (!('error' in outcome) && outcome.output.length > limits.stepChars) outcome = { error: tooLongStepError(outcome.output.length, limits, 'step'), tooLong: true }
      else if (!('error' in outcome) && producedChars + outcome.output.length > limits.runChars) outcome = { error: tooLongStepError(producedChars + outcome.output.length, limits, 'run'), tooLong: true }
      // Another attempt would render or produce the same text again.
      if (!('error' in outcome) || controller.signal.aborted || outcome.tooLong) break
      setNode(node.id, { attempts: attempt })
    }
    if ('error' in outcome && controller.signal.aborted) {
      // Stopped from outside, or because another step failed: not this step's failure.
      setNode(node.id, { status: 'skipped', finishedAt: Date.now(), error: failure ? `stopped because "${failure.nodeId}" failed` : rejection ? `stopped because "${rejection.nodeId}" was rejected` : 'stopped' })
      changed()
      return
    }
    if ('error' in outcome) {
      setNode(node.id, { status: 'error', finishedAt: Date.now(), error: outcome.error })
      if (!failure) {
        failure = { nodeId: node.id, error: outcome.error }
        state.failedNodeId = node.id
        controller.abort('node-failed')
      }
      callbacks.onError?.(node.id, outcome.error)
      changed()
      return
    }
    outputs[node.id] = outcome.output
    producedChars += outcome.output.length
    setNode(node.id, { status: 'completed', finishedAt: Date.now(), output: outcome.output, ...(outcome.branch ? { branch: outcome.branch } : {}) })
    state.executionOrder.push(node.id)
    if (node.kind === 'approval' && outcome.branch === 'reject' && !(outgoing.get(node.id) ?? []).some(edge => edge.branch === 'reject') && !failure && !rejection) {
      rejection = { nodeId: node.id, reason: outcome.output }
      controller.abort('node-rejected')
    }
    release(node, outcome.branch)
    callbacks.onNodeFinish?.(node.id, outcome.output)
    changed()
  }

  const running = new Map<string, Promise<void>>()
  try {
    while (true) {
      if (!controller.signal.aborted) {
        let progressed = true
        while (progressed) {
          progressed = false
          for (const node of workflow.nodes) {
            if (state.nodeStates[node.id]!.status !== 'pending' || running.has(node.id)) continue
            const edges = incoming.get(node.id) ?? []
            if (edges.some(edge => edgeState.get(edge) === 'pending')) continue
            if (node.kind !== 'start' && !edges.some(edge => edgeState.get(edge) === 'active')) {
              skip(node)
              progressed = true
              continue
            }
            running.set(node.id, execute(node).finally(() => running.delete(node.id)))
          }
        }
      }
      if (running.size === 0) break
      await Promise.race(running.values())
    }
  } finally {
    stopFollowing()
  }

  state.currentNodeId = null
  for (const [id, node] of Object.entries(state.nodeStates)) if (node.status === 'pending') setNode(id, { status: 'skipped' })
  const output = workflow.nodes.filter(node => node.kind === 'output' && state.nodeStates[node.id]!.status === 'completed').map(node => outputs[node.id] ?? '').join('\n\n')
  changed()
  if (failure) return { status: 'error', output, state, error: `Step "${nodes.get(failure.nodeId)?.label ?? failure.nodeId}" failed: ${failure.error}` }
  if (rejection) return { status: 'rejected', output, state, error: `Step "${nodes.get(rejection.nodeId)?.label ?? rejection.nodeId}" was not approved (${rejection.reason.replace(/^Rejected:?\s*/, '') || 'no reason given'}), and the workflow has no path for a rejection, so the run ended there.` }
  if (controller.signal.aborted) return { status: 'aborted', output, state }
  return { status: 'complete', output, state }
}
