/**
 * Runs a workflow graph: nodes start as soon as everything flowing into them has resolved, so
 * independent branches run at the same time; a router activates one branch and skips the others;
 * a merge joins what reached it. Every transition updates the run state and calls
 * `onStateChange`, which the job layer persists, so an interrupted run resumes from its completed
 * nodes (their outputs are reused, never recomputed), its agent steps from their checkpoints, and
 * a tool step that had begun a tool with side effects is reported, not run again. A loop step runs
 * its body as runs of its own (loop.ts), nested in the loop's node state; a workflow step runs
 * another saved workflow the same way, as a child run kept on its node, its worst case in steps
 * reserved from the run's budget first (step-budget.ts). Each step starts on a turn of the event
 * loop of its own, so a run of steps that make no model call never holds the server. Never throws.
 */
import type { WorkflowNodeState, WorkflowState } from '../../../shared/types/workflow'
import { renderArguments, renderTemplate } from './templates'
import type { WorkflowCallNode, WorkflowDefinition, WorkflowLoopNode, WorkflowNode } from '../../../shared/schemas/workflow'
import { runLoopStep } from './loop'
import { admitChildRun } from './child-admission'
import { startingState } from './starting-state'
import { routeStep } from './router-step'
import { childStepId, iterationStepId, scopedDependencies } from './step-scope'
import { UNKNOWN_NODE_OUTCOME, type AgentStepHooks, type NodeOutcome, type StepOutcome, type WorkflowRunCallbacks, type WorkflowRunLimits, type WorkflowRunParams, type WorkflowRunResult } from './run-contract'
import { followSignal } from '../follow-signal'
import { WorkflowGraph } from './graph'
import { attemptStep, heldToLimits } from './step-attempts'
import { usageOfSteps } from '../openrouter/usage'
import type { Usage } from '../openrouter/types'

type RouterNode = Extract<WorkflowNode, { kind: 'router' }>

/** Whether a step's output is text of its own: a loop's and a workflow step's are their nested steps' (counted there). */
function makesText(node: WorkflowNode): boolean {
  return node.kind !== 'loop' && node.kind !== 'workflow'
}

/** One run of a workflow (see the module comment). */
class WorkflowRun {
  private readonly graph: WorkflowGraph
  private readonly state: WorkflowState
  private readonly limits: WorkflowRunLimits
  private readonly callbacks: WorkflowRunCallbacks
  /** Nodes that were running when the last run stopped (their checkpoints and start marks count, for their first try here). */
  private readonly interrupted: Set<string>
  private readonly outputs: Record<string, string | undefined> = {}
  /** Shared with nested runs: a loop of iterations each under the run limit does not add up past it. */
  private readonly produced: { chars: number }
  /** Run-wide: the caller's abort, a failing node or a rejection stops every running node. */
  private readonly controller: AbortController
  private readonly stopFollowing: () => void
  private failure: { nodeId: string, error: string } | undefined
  /** An approval said no with nowhere for "no" to go: the run ends `rejected`. */
  private rejection: { nodeId: string, reason: string } | undefined

  constructor(private readonly params: WorkflowRunParams) {
    this.graph = new WorkflowGraph(params.workflow)
    this.limits = params.limits ?? { stepChars: Number.POSITIVE_INFINITY, runChars: Number.POSITIVE_INFINITY }
    this.callbacks = params.callbacks ?? {}
    this.produced = params.produced ?? { chars: 0 }
    this.interrupted = new Set(Object.entries(params.resume?.nodeStates ?? {}).filter(([, node]) => node.status === 'running').map(([id]) => id))
    this.state = startingState(params, this.interrupted)
    const { controller, dispose } = followSignal(params.signal)
    this.controller = controller
    this.stopFollowing = dispose
    // Completed nodes from before a restart count as done: reuse their outputs and decisions.
    for (const node of params.workflow.nodes) {
      const done = this.state.nodeStates[node.id]!
      if (done.status !== 'completed') continue
      this.outputs[node.id] = done.output ?? ''
      if (makesText(node)) this.produced.chars += done.output?.length ?? 0
      this.graph.release(node, done.branch)
    }
  }

  /** Runs every node that becomes ready until none is left or running, then says how it went. */
  async run(): Promise<WorkflowRunResult> {
    const running = new Map<string, Promise<void>>()
    try {
      while (true) {
        if (!this.controller.signal.aborted) this.startReady(running)
        if (running.size === 0) break
        await Promise.race(running.values())
      }
    } finally {
      this.stopFollowing()
    }
    return this.result()
  }

  /** Starts every pending node whose inputs have resolved (skipping those no live edge reaches). */
  private startReady(running: Map<string, Promise<void>>): void {
    let progressed = true
    while (progressed) {
      progressed = false
      for (const node of this.params.workflow.nodes) {
        if (this.state.nodeStates[node.id]!.status !== 'pending' || running.has(node.id)) continue
        const readiness = this.graph.readiness(node)
        if (readiness === 'wait') continue
        if (readiness === 'skip') {
          this.setNode(node.id, { status: 'skipped' })
          this.graph.skip(node.id)
          progressed = true
          continue
        }
        running.set(node.id, this.execute(node).finally(() => running.delete(node.id)))
      }
    }
  }

  private setNode(id: string, patch: Partial<WorkflowNodeState>): void {
    this.state.nodeStates[id] = { ...this.state.nodeStates[id]!, ...patch }
  }

  /** Hands the state to `onStateChange` (a copy unless `liveState`); resolves `true` once it is stored. */
  private async changed(): Promise<boolean> {
    return (await this.callbacks.onStateChange?.(this.params.liveState ? this.state : structuredClone(this.state))) ?? true
  }

  /** Whether the run is stopping to resume later (running steps keep their state). */
  private get stoppingToResume(): boolean {
    return this.params.signal?.aborted === true && this.params.isResumableStop?.() === true
  }

  /** Runs one node (with its retries) and records how it ended. */
  private async execute(node: WorkflowNode): Promise<void> {
    // A turn of the event loop per step: steps that make no model call (tools, templates,
    // conditions) would otherwise follow each other without ever letting a request in.
    await new Promise(resolve => setImmediate(resolve))
    // Stopped meanwhile: a stop to resume leaves it pending (it runs after the restart), any other skips it.
    if (this.controller.signal.aborted) {
      if (!this.stoppingToResume) {
        this.ended(node, { error: 'stopped' })
        void this.changed()
      }
      return
    }
    const input = this.graph.inputOf(node, this.params.prompt, this.outputs)
    const resumed = this.interrupted.has(node.id)
    const before = this.params.resume?.nodeStates[node.id]
    // A step resumed from its checkpoint keeps the calls it had shown; a loop, its iterations.
    this.setNode(node.id, { status: 'running', startedAt: Date.now(), output: undefined, error: this.state.nodeStates[node.id]!.retryAt !== undefined ? before?.error : undefined, usage: undefined, toolCalls: resumed && this.state.agentSteps?.[node.id] ? before?.toolCalls : undefined, iterations: resumed && node.kind === 'loop' ? before?.iterations : undefined, child: resumed && node.kind === 'workflow' ? before?.child : undefined })
    this.state.currentNodeId = node.id
    this.callbacks.onNodeStart?.(node.id)
    void this.changed()
    const outcome = await this.attempt(node, input)
    if (this.stoppingToResume) return
    this.dropCheckpoint(node.id)
    if ('error' in outcome) this.ended(node, outcome)
    else this.completed(node, outcome)
    void this.changed()
  }

  /** The node's work, tried again under its retry policy while it fails for a reason another try may cure (step-attempts.ts). */
  private attempt(node: WorkflowNode, input: string): Promise<StepOutcome> {
    return attemptStep({
      node,
      before: this.interrupted.has(node.id) ? this.params.resume?.nodeStates[node.id] : undefined,
      runSignal: this.controller.signal,
      waitUntil: this.params.dependencies.waitUntil,
      retryAt: () => this.state.nodeStates[node.id]!.retryAt,
      work: signal => this.runNode(node, input, signal),
      checked: outcome => heldToLimits(outcome, this.limits, makesText(node) ? this.produced.chars : undefined),
      waited: () => this.setNode(node.id, { retryAt: undefined }),
      failedTry: (retry) => { // The next try starts afresh: no checkpoint, no resumed iterations or child run.
        this.interrupted.delete(node.id)
        this.dropCheckpoint(node.id)
        this.setNode(node.id, { ...retry, toolCalls: undefined, iterations: undefined, child: undefined })
        return this.changed()
      },
    })
  }

  /** A node that failed, or was stopped because the run stopped. */
  private ended(node: WorkflowNode, outcome: { error: string, usage?: Usage }): void {
    if (this.controller.signal.aborted) {
      // Stopped from outside, or because another step failed or was rejected: not this step's failure.
      const why = this.failure ? `stopped because "${this.failure.nodeId}" failed` : this.rejection ? `stopped because "${this.rejection.nodeId}" was rejected` : 'stopped'
      this.setNode(node.id, { status: 'skipped', finishedAt: Date.now(), error: why })
      return
    }
    this.setNode(node.id, { status: 'error', finishedAt: Date.now(), error: outcome.error, ...(outcome.usage ? { usage: outcome.usage } : {}) })
    if (!this.failure) {
      this.failure = { nodeId: node.id, error: outcome.error }
      this.state.failedNodeId = node.id
      this.controller.abort('node-failed')
    }
    this.callbacks.onError?.(node.id, outcome.error)
  }

  /** A node that produced its output: what it releases flows on. */
  private completed(node: WorkflowNode, outcome: { output: string, branch?: string, usage?: Usage }): void {
    this.outputs[node.id] = outcome.output
    if (makesText(node)) this.produced.chars += outcome.output.length
    this.setNode(node.id, { status: 'completed', finishedAt: Date.now(), output: outcome.output, error: undefined, retryAt: undefined, ...(outcome.branch ? { branch: outcome.branch } : {}), ...(outcome.usage ? { usage: outcome.usage } : {}) })
    this.state.executionOrder.push(node.id)
    if (node.kind === 'approval' && outcome.branch === 'reject' && !this.graph.hasBranch(node.id, 'reject') && !this.failure && !this.rejection) {
      this.rejection = { nodeId: node.id, reason: outcome.output }
      this.controller.abort('node-rejected')
    }
    this.graph.release(node, outcome.branch)
    this.callbacks.onNodeFinish?.(node.id, outcome.output)
  }

  /** What one kind of node does. */
  private async runNode(node: WorkflowNode, input: string, signal: AbortSignal): Promise<StepOutcome> {
    const { prompt, dependencies, workflow, inputs, body } = this.params
    const scope = { prompt, input, nodes: body ? { ...body.outerNodes, ...this.outputs } : this.outputs, inputs, ...(body ? { loop: body.loop } : {}) }
    const fill = (template: string) => renderTemplate(template, scope, this.limits.stepChars)
    switch (node.kind) {
      case 'start':
        return { output: body ? body.startWith : prompt }
      case 'parallel':
      case 'merge':
        return { output: input }
      case 'output':
        return { output: node.template ? fill(node.template) : input }
      case 'agent':
        return dependencies.runAgent(node, { model: node.model ?? workflow.defaultModel, system: fill(node.systemPrompt), prompt: fill(node.prompt ?? '{{input}}') }, this.agentHooks(node.id), signal)
      case 'tool':
        return this.runToolStep(node, renderArguments(node.arguments, scope, this.limits.stepChars), signal)
      case 'approval': {
        const asked = await dependencies.askApproval(node, { question: fill(node.question ?? 'Continue with this?'), preview: input }, signal)
        if ('error' in asked) return asked
        // Approved, what came in flows on; rejected, the reason does (for a `reject` branch to use).
        return asked.approved ? { output: input, branch: 'approve' } : { output: `Rejected${asked.reason ? `: ${asked.reason}` : ''}`, branch: 'reject' }
      }
      case 'router':
        return this.route(node, input, fill, signal)
      case 'loop':
        return this.runLoop(node, input, fill, signal)
      case 'workflow':
        return this.runChild(node, input, fill, signal)
    }
  }

  /**
   * A workflow step: the saved workflow (as it is when the step begins, kept on the step so a
   * restart resumes the same) runs as a nested run, its steps' ids scoped `<step>.<child step>`;
   * within the depth limit and the model calls left for children. Its answer is the child's output.
   */
  private async runChild(node: WorkflowCallNode, input: string, fill: (template: string) => string, signal: AbortSignal): Promise<NodeOutcome> {
    const { params } = this
    const depth = (params.depth ?? 0) + 1
    const admitted = await admitChildRun(node, input, fill, { ...params, depth, interruptedChild: this.interrupted.has(node.id) ? params.resume?.nodeStates[node.id]?.child : undefined })
    if ('error' in admitted) return admitted
    const { running, started } = admitted
    this.setNode(node.id, { child: running })
    void this.changed()
    const scoped = (id: string) => childStepId(node.id, id)
    const result = await new WorkflowRun({
      workflow: running.definition,
      workflowId: running.workflowId,
      prompt: started.prompt,
      inputs: started.inputs,
      ...this.nested(scoped, (state) => {
        this.setNode(node.id, { child: { ...running, state } })
        return this.changed()
      }, depth),
      signal,
      ...(running.state ? { resume: running.state } : {}),
    }).run()
    const usage = usageOfSteps(result.state.nodeStates)
    if (result.status === 'complete') return { output: result.output, usage }
    if (result.status === 'aborted') return { error: 'stopped', kind: 'stopped', usage }
    return { error: `the workflow “${running.workflowName}” ${result.error ? `ended: ${result.error}` : 'did not finish'}`, usage }
  }

  /**
   * What a nested run (a loop's iteration, a child workflow) meets the world with: this run's
   * dependencies and progress callbacks, its steps' ids scoped (`scoped`) so approvals, tool
   * approvals and live text are each its own; its state goes to `onState`; this run's limits,
   * stop, and model calls left for children, at `depth`.
   */
  private nested(scoped: (id: string) => string, onState: (state: WorkflowState) => Promise<boolean>, depth = this.params.depth): Pick<WorkflowRunParams, 'dependencies' | 'callbacks' | 'isResumableStop' | 'limits' | 'depth' | 'childModelCalls' | 'childSteps' | 'liveState' | 'produced'> {
    const { dependencies, isResumableStop, childModelCalls, childSteps } = this.params
    return {
      limits: this.limits,
      // Its state is kept on this run's node and handed up with this run's: no copy on the way.
      liveState: true,
      produced: this.produced,
      ...(childSteps ? { childSteps } : {}),
      ...(isResumableStop ? { isResumableStop } : {}),
      ...(depth ? { depth } : {}),
      ...(childModelCalls ? { childModelCalls } : {}),
      dependencies: scopedDependencies(dependencies, scoped),
      callbacks: {
        onStateChange: onState,
        onNodeStart: id => this.callbacks.onNodeStart?.(scoped(id)),
        onNodeFinish: (id, output) => this.callbacks.onNodeFinish?.(scoped(id), output),
        onToken: (id, text) => this.callbacks.onToken?.(scoped(id), text),
      },
    }
  }

  /** A loop: its body runs as runs of its own, their steps' ids scoped to the iteration (`<loop>.<n>.<step>`) where they meet the world. */
  private runLoop(node: WorkflowLoopNode, input: string, fill: (template: string) => string, signal: AbortSignal): Promise<NodeOutcome> {
    const { params } = this
    const definition: WorkflowDefinition = { version: 1, name: node.label ?? node.id, description: '', defaultModel: params.workflow.defaultModel, nodes: node.body.nodes, edges: node.body.edges }
    const outerNodes = { ...params.body?.outerNodes, ...this.outputs }
    return runLoopStep({
      node,
      input,
      ...(node.mode === 'for-each' ? { list: fill(node.items ?? '{{input}}') } : {}),
      ...(this.interrupted.has(node.id) ? { resumed: params.resume?.nodeStates[node.id]?.iterations } : {}),
      runBody: (iteration, resume, signal, onState) => {
        const scoped = (id: string) => iterationStepId(node.id, iteration.index, id)
        return new WorkflowRun({
          workflow: definition,
          workflowId: params.workflowId,
          prompt: params.prompt,
          ...(params.inputs ? { inputs: params.inputs } : {}),
          body: { startWith: iteration.item, outerNodes, loop: iteration },
          ...this.nested(scoped, onState),
          signal,
          ...(resume ? { resume } : {}),
        }).run()
      },
      askModel: (request, signal) => params.dependencies.askModel(request, signal),
      defaultModel: params.workflow.defaultModel,
      save: (iterations) => {
        this.setNode(node.id, { iterations })
        return this.changed()
      },
      signal,
      stoppingToResume: () => this.stoppingToResume,
      maxChars: this.limits.stepChars,
    })
  }

  /** A tool step: one that had begun a tool with side effects before a restart is reported, not run again. */
  private runToolStep(node: Extract<WorkflowNode, { kind: 'tool' }>, args: unknown, signal: AbortSignal): Promise<NodeOutcome> {
    const { resume } = this.params
    const begun = resume?.startsRecorded !== true || resume.nodeStates[node.id]?.toolStartedAt !== undefined
    if (begun && this.interrupted.has(node.id) && !this.params.dependencies.isIdempotent(node.tool) && !node.retries) return Promise.resolve({ error: UNKNOWN_NODE_OUTCOME, kind: 'invalid' })
    const markStarted = () => {
      this.setNode(node.id, { toolStartedAt: Date.now() })
      return this.changed()
    }
    return this.params.dependencies.runTool(node.tool, args, signal, node.id, markStarted)
  }

  /** A router: the first matching condition's branch, or the branch a model names (router-step.ts). */
  private route(node: RouterNode, input: string, fill: (template: string) => string, signal: AbortSignal): Promise<StepOutcome> {
    const { askModel } = this.params.dependencies
    return routeStep(node, input, { branches: this.graph.branchesOf(node.id), fill, askModel, defaultModel: this.params.workflow.defaultModel, signal })
  }

  /** Where an agent step's progress goes, and the checkpoint it resumes from. */
  private agentHooks(nodeId: string): AgentStepHooks {
    return {
      onToken: text => this.callbacks.onToken?.(nodeId, text),
      onToolCall: (call) => {
        const calls = this.state.nodeStates[nodeId]!.toolCalls ?? []
        const index = calls.findIndex(item => item.id === call.id && item.round === call.round)
        this.setNode(nodeId, { toolCalls: index >= 0 ? calls.with(index, call) : [...calls, call] })
        this.callbacks.onToolCallEvent?.(nodeId, call)
        void this.changed()
      },
      save: (checkpoint) => {
        this.state.agentSteps = { ...this.state.agentSteps, [nodeId]: structuredClone(checkpoint) }
        // What the person sent the step while it ran, as the run view shows it (the checkpoint is not shown).
        if ((checkpoint.steered?.length ?? 0) !== (this.state.nodeStates[nodeId]?.steers?.length ?? 0)) this.setNode(nodeId, { steers: structuredClone(checkpoint.steered) })
        return this.changed()
      },
      resume: this.state.agentSteps?.[nodeId],
    }
  }

  /** A step ended (or starts again): its checkpoint goes. */
  private dropCheckpoint(nodeId: string): void {
    if (!this.state.agentSteps?.[nodeId]) return
    const { [nodeId]: _ended, ...rest } = this.state.agentSteps
    this.state.agentSteps = Object.keys(rest).length > 0 ? rest : undefined
  }

  /** How the run ended, with the output steps' text. */
  private result(): WorkflowRunResult {
    const { state, graph } = this
    state.currentNodeId = null
    if (!this.stoppingToResume) for (const [id, node] of Object.entries(state.nodeStates)) if (node.status === 'pending') this.setNode(id, { status: 'skipped' })
    const output = this.params.workflow.nodes.filter(node => node.kind === 'output' && state.nodeStates[node.id]!.status === 'completed').map(node => this.outputs[node.id] ?? '').join('\n\n')
    void this.changed()
    if (this.failure) return { status: 'error', output, state, error: `Step "${graph.label(this.failure.nodeId)}" failed: ${this.failure.error}` }
    if (this.rejection) {
      const reason = this.rejection.reason.replace(/^Rejected:?\s*/, '') || 'no reason given'
      return { status: 'rejected', output, state, error: `Step "${graph.label(this.rejection.nodeId)}" was not approved (${reason}), and the workflow has no path for a rejection, so the run ended there.` }
    }
    if (this.controller.signal.aborted) return { status: 'aborted', output, state }
    return { status: 'complete', output, state }
  }
}

/** Runs `workflow` for `prompt` (or continues `resume`). */
export function executeWorkflow(params: WorkflowRunParams): Promise<WorkflowRunResult> {
  return new WorkflowRun(params).run()
}
