/**
 * Runs a workflow job: the executor's state goes to the job's event sink as it changes (viewers,
 * and the store in order; changes that come faster than writes are written together: state-writes.ts), agent steps are checkpointed agent runs nested in their
 * nodes (agent-run.ts, the same as chat), tool steps go through the server registry with their
 * start recorded first. An interrupted run resumes from its completed nodes and its steps'
 * checkpoints. Never throws.
 */
import type { RunSteering } from './chat'
import { executeToolLoop, type ToolLoopCallbacks } from '../../agent/tool-loop'
import { chatClientOptions } from '../../models/chat-endpoint'
import type { ChatEndpoint } from '../../openrouter/chat-client'
import { toolCallStatusOf } from '../../tools/run-tool-calls'
import { executeWorkflow } from '../../workflows/execute'
import { tooLongStepError, type AgentStepHooks, type NodeOutcome, type WorkflowRunDependencies, type WorkflowRunResult } from '../../workflows/run-contract'
import { nestedStepState } from '../../workflows/step-scope'
import { followSignal } from '../../follow-signal'
import { planFromCheckpoint } from '../resume-plan'
import type { JobRunOutcome, RunResult } from './end'
import { observedCallbacks } from './observed-callbacks'
import { JobRunHarness, type JobRunOptions } from './harness'
import { meteredCallbacks, overBudgetError } from './budget-meter'
import { usageOfSteps } from '../../openrouter/usage'
import type { Usage } from '../../openrouter/types'
import { runCheckpointedAgent, type AgentRunJournal } from './agent-run'
import { executionOf } from './run-events'
import type { JobStopReason } from './end'
import { toolCallPeople } from '../waits/tool-call-people'
import { approvalNeeded, policyToolNamed } from '../../tools/policy/tool-policy'
import type { JobCheckpoint, ToolExecutionRecord } from '../../../../shared/types/job'
import type { SavedWorkflow, WorkflowNode, WorkflowState } from '../../../../shared/types/workflow'
import { runnableWorkflow } from '../../workflows/validate'
import { agentStepTools } from '../../workflows/tool-access'
import { workflowModelCallBound } from '../../workflows/model-calls'
import { workflowStepBound } from '../../workflows/step-budget'
import { CoalescedStateWrites } from './state-writes'
import { stepErrorKindOfModel, stepErrorKindOfTool, waitUntil } from '../../workflows/retry-policy'
import { childRunId } from '../workflow-runs'
import { RunOutputFiles, type OutputFileAccess } from '../../workflows/output-files'

/** Everything one workflow run needs. */
export interface WorkflowJobRunOptions extends JobRunOptions {
  /** The endpoint for a node's model (throws MissingApiKeyError when it needs a key). */
  endpointFor: (model: string) => ChatEndpoint
  /** A saved workflow by id, for a workflow step (the job's user's only; none: such steps fail). */
  loadWorkflow?: (workflowId: string) => Promise<SavedWorkflow | null>
  /** The most model calls one run may make (the role's): what child workflows may reserve is this less the run's own worst case. */
  modelCallLimit?: number
  /** The most steps one run may run (the role's): likewise for child workflows' steps (step-budget.ts). */
  stepLimit?: number
  /** A run's workspace, for the step outputs too long for its record (none: they stay in the record). */
  runOutputs?: (jobId: string, userId: string) => OutputFileAccess
  /** Where an agent step reads the messages its person sends it from the run view (none: it takes none). */
  stepSteering?: (nodeId: string) => RunSteering | undefined
}

/** How often live node text is pushed to viewers (it is persisted on node transitions). */
const LIVE_OUTPUT_INTERVAL_MS = 150

/** Why a run stops to resume later (its steps keep their state). */
const RESUMABLE_STOPS = new Set<unknown>(['shutdown', 'lease-lost'] satisfies JobStopReason[])

/** The text steps are making, shown to viewers between transitions (throttled). */
class LiveStepText {
  private readonly text = new Map<string, string>()
  private timer: ReturnType<typeof setTimeout> | undefined
  state: WorkflowState | undefined

  constructor(private readonly show: (state: WorkflowState) => void) {}

  add(nodeId: string, delta: string): void {
    this.text.set(nodeId, (this.text.get(nodeId) ?? '') + delta)
    this.timer ??= setTimeout(() => {
      this.timer = undefined
      this.publish()
    }, LIVE_OUTPUT_INTERVAL_MS)
  }

  done(nodeId: string): void {
    this.text.delete(nodeId)
  }

  /** Shows the last state with each running step's text so far. */
  publish(): void {
    if (!this.state) return
    const shown = structuredClone(this.state)
    for (const [nodeId, text] of this.text) {
      // A step of a loop's iteration or of a child run: its text goes on that run's own state.
      const step = nestedStepState(shown, nodeId)
      if (step?.status === 'running') step.output = text
    }
    this.show(shown)
  }

  dispose(): void {
    clearTimeout(this.timer)
  }
}

/** An agent step's journal: its checkpoint and finished calls go into the run state (`hooks.save`). */
function stepJournal(hooks: AgentStepHooks, text: () => string, steering: RunSteering | undefined, given: Set<string>): AgentRunJournal {
  let executions: ToolExecutionRecord[] = hooks.resume?.executions ?? []
  let last: JobCheckpoint | undefined = hooks.resume
  const save = (checkpoint: JobCheckpoint) => {
    // Finished calls belong to the round under way; a new round (or none) starts with none.
    if (checkpoint.pendingToolRound?.round !== last?.pendingToolRound?.round) executions = []
    last = checkpoint
    return hooks.save({ ...checkpoint, content: text(), executions: [...executions] })
  }
  return {
    save,
    recorded: (_round, record) => {
      executions = [...executions.filter(item => item.id !== record.id), executionOf(record)]
      if (last) void save(last)
    },
    toolCall: call => hooks.onToolCall(call),
    textLengths: () => ({ content: text().length, reasoning: 0 }),
    // In the step's stored checkpoint (the run view shows them from there) before their entries go; unsaved, a resumed step gives them again.
    steered: (steers, saved) => {
      for (const steer of steers) given.add(steer.id)
      if (saved) void steering?.delivered(steers.map(steer => steer.id)).catch(() => {})
    },
  }
}

/** The parts of a workflow run its steps share. */
class WorkflowJobContext {
  readonly budget
  readonly runStop: AbortController
  readonly stopFollowingRun: () => void
  overBudget: 'tokens' | 'cost' | undefined

  constructor(readonly options: WorkflowJobRunOptions, readonly harness: JobRunHarness) {
    this.budget = options.budget
    const { controller, dispose } = followSignal(options.signal)
    this.runStop = controller
    this.stopFollowingRun = dispose
  }

  /** Checks the user's budget; past it, the run stops. */
  checkBudget(): void {
    if (this.overBudget || !this.budget) return
    this.stopOverBudget(this.budget.exceeded())
  }

  /** Stops the run because `budget` is used up (a request it refused, or text past it). */
  stopOverBudget(budget: 'tokens' | 'cost' | undefined): void {
    if (this.overBudget || !budget) return
    this.overBudget = budget
    this.runStop.abort('over-budget')
  }

  /**
   * A step's loop callbacks for `model`: its model requests metered against the budget (parallel
   * steps wait their turn for it) and reported for monitoring.
   */
  metered(model: string, callbacks: ToolLoopCallbacks, signal: AbortSignal): ToolLoopCallbacks {
    return observedCallbacks(this.harness.observer, { model, role: this.harness.role }, meteredCallbacks(this.budget, callbacks, budget => this.stopOverBudget(budget), signal))
  }

  /** The loop parameters every model call of a step shares. */
  loopBase(model: string, endpoint: ChatEndpoint, signal: AbortSignal) {
    const { job, config } = this.options
    return {
      jobId: job.id,
      userId: job.userId,
      threadId: job.threadId,
      model,
      endpoint,
      client: chatClientOptions(config),
      // The role's output clamp, set when the run was created.
      request: job.request!.fields,
      tools: this.options.tools,
      toolAccess: this.options.toolAccess,
      credentials: this.options.credentials,
      maxToolsPerRound: config.backgroundJobs.toolExecution.maxToolsPerRound,
      maxOfferedTools: config.backgroundJobs.toolExecution.maxOfferedTools,
      roundTimeoutMs: config.backgroundJobs.toolExecution.roundTimeoutMs,
      signal,
    }
  }
}

/** An agent step: a checkpointed agent run nested in its node, its text held to the step limit. */
async function runAgentStep(context: WorkflowJobContext, node: Extract<WorkflowNode, { kind: 'agent' }>, request: { model: string, system: string, prompt: string }, hooks: AgentStepHooks, nodeSignal: AbortSignal): Promise<NodeOutcome> {
  const { options, harness } = context
  let endpoint: ChatEndpoint
  try {
    endpoint = options.endpointFor(request.model)
  } catch (error) {
    return { error: (error as Error).message, kind: 'invalid' }
  }
  const resume = hooks.resume ? planFromCheckpoint({ checkpoint: hooks.resume, content: hooks.resume.content, reasoning: '', contentLength: hooks.resume.contentLength, reasoningLength: 0, recorded: hooks.resume.executions }) : undefined
  let text = resume?.content ?? ''
  // A step's model stops as soon as its text passes the step limit, not when it ends.
  const stepChars = options.config.limits.workflowStepChars
  const { controller: step, dispose } = followSignal(nodeSignal)
  let overLimit: string | undefined
  const messages = [{ role: 'system' as const, content: request.system }, { role: 'user' as const, content: request.prompt }].filter(message => message.content !== '')
  const steering = options.stepSteering?.(node.id)
  const given = new Set((resume?.steered ?? []).map(steer => steer.id))
  const result = await runCheckpointedAgent({
    resume,
    journal: stepJournal(hooks, () => text, steering, given),
    tools: harness.agentTools(),
    isIdempotent: name => options.tools.get(name)?.idempotent === true,
    loop: {
      ...context.loopBase(request.model, endpoint, step.signal),
      ...agentStepTools(node, options.toolAccess),
      initialMessages: messages,
      people: options.inputs ? toolCallPeople(options.inputs, options.job, [], `node:${node.id}:`) : undefined,
      maxRounds: node.maxToolRounds ?? 0,
      ...(steering ? { takeSteers: () => steering.take(given) } : {}),
      callbacks: context.metered(request.model, {
        onTextDelta: (delta: string) => {
          if (overLimit) return
          if (text.length + delta.length > stepChars) {
            overLimit = tooLongStepError(text.length + delta.length, { stepChars, runChars: options.config.limits.jobContentChars }, 'step')
            step.abort('too-long')
            return
          }
          text += delta
          hooks.onToken(delta)
          harness.activity()
          context.checkBudget()
        },
      }, step.signal),
    },
  }).finally(dispose)
  harness.modelRounds += result.totalRounds
  const usage = usedAny(result.usage)
  if (overLimit) return { error: overLimit, kind: 'too-long', usage }
  if (result.finishReason === 'error') return { error: result.error?.message ?? 'the model call failed', kind: stepErrorKindOfModel(result.error?.kind), usage }
  if (result.finishReason === 'aborted') return { error: 'stopped', kind: 'stopped', usage }
  return { output: result.finalContent, usage }
}

/** A step's usage, or undefined when it made no request that reported any. */
function usedAny(usage: Usage): Usage | undefined {
  return usage.totalTokens > 0 || usage.cost > 0 ? usage : undefined
}

/** A question to a model: a router's, a loop's condition (no tools: nothing to checkpoint). */
async function askModel(context: WorkflowJobContext, request: { model: string, prompt: string }, signal: AbortSignal): Promise<NodeOutcome> {
  let endpoint: ChatEndpoint
  try {
    endpoint = context.options.endpointFor(request.model)
  } catch (error) {
    return { error: (error as Error).message, kind: 'invalid' }
  }
  const result = await executeToolLoop({
    ...context.loopBase(request.model, endpoint, signal),
    initialMessages: [{ role: 'user', content: request.prompt }],
    toolNames: [],
    toolsEnabled: false,
    maxRounds: 0,
    callbacks: context.metered(request.model, { onTextDelta: () => context.harness.activity() }, signal),
  })
  context.harness.modelRounds += result.totalRounds
  const usage = usedAny(result.usage)
  if (result.finishReason === 'error') return { error: result.error?.message ?? 'the model call failed', kind: stepErrorKindOfModel(result.error?.kind), usage }
  if (result.finishReason === 'aborted') return { error: 'stopped', kind: 'stopped', usage }
  return { output: result.finalContent, usage }
}

/** A tool step: the running user's policy, their approval when the tool needs it, its start recorded, then the tool. */
async function runToolStep(context: WorkflowJobContext, name: string, args: unknown, signal: AbortSignal, nodeId: string, markStarted: () => Promise<boolean>): Promise<NodeOutcome> {
  const { options, harness } = context
  const { job } = options
  // Checked at run time for the running user too: the policy may have changed since the workflow was saved.
  const access = options.toolAccess ? await options.toolAccess() : undefined
  const denied = access?.(policyToolNamed(name))
  if (denied !== undefined) return { error: `tool "${name}" is not available here: ${denied}.`, kind: 'refused' }
  // A tool that needs approval asks the person running the workflow first, as in a chat.
  if (approvalNeeded(name, access)) {
    if (!options.inputs) return { error: `tool "${name}" needs its user's approval, and nobody can answer for this run.`, kind: 'refused' }
    harness.toolStarted()
    const decision = await toolCallPeople(options.inputs, job, [], `node:${nodeId}:`).approve({ id: 'tool', index: 0, name, arguments: JSON.stringify(args) }, 0, signal).finally(() => harness.toolFinished())
    if (!decision.approved) return { error: decision.error, kind: signal.aborted ? 'stopped' : 'refused' }
  }
  if (!options.tools.get(name)?.idempotent && !await markStarted()) return { error: `the server could not record that "${name}" was starting, so it did not run it (a restart could otherwise run it twice). Try again.`, kind: 'upstream' }
  harness.toolCallStarted(name)
  const outcome = await options.tools.run(name, JSON.stringify(args), { userId: job.userId, threadId: job.threadId, jobId: job.id, signal, credentials: await options.credentials?.() })
  harness.toolCallFinished(name, toolCallStatusOf(outcome), outcome.executionTimeMs)
  return outcome.error === undefined ? { output: outcome.result ?? '' } : { error: outcome.error, kind: stepErrorKindOfTool(outcome.errorCode) }
}

/** The workflow's dependencies on the world, bound to this job. */
function stepDependencies(context: WorkflowJobContext, live: LiveStepText): WorkflowRunDependencies {
  const { options, harness } = context
  const { job } = options
  return {
    runAgent: (node, request, hooks, signal) => runAgentStep(context, node, request, { ...hooks, onToken: (text) => {
      live.add(node.id, text)
      hooks.onToken(text)
    } }, signal),
    askModel: (request, signal) => askModel(context, request, signal),
    runTool: (name, args, signal, nodeId, markStarted) => runToolStep(context, name, args, signal, nodeId, markStarted),
    askApproval: async (node, request, signal) => {
      if (!options.inputs) return { error: 'this step needs a person\'s approval, and nobody can answer for this run' }
      harness.toolStarted()
      const asked = await options.inputs.ask({ jobId: job.id, userId: job.userId, kind: 'approval', key: `node:${node.id}`, title: request.question.slice(0, 500), nodeId: node.id, preview: request.preview.slice(0, 20_000), origin: 'workflow' }, signal)
        .finally(() => harness.toolFinished())
      if ('aborted' in asked) return { error: 'stopped' }
      const answer = asked.request.answer
      if (answer?.kind === 'approval') return { approved: answer.approved, ...(answer.reason ? { reason: answer.reason } : {}) }
      if (asked.request.status === 'expired') return { approved: false, reason: 'nobody answered in time' }
      return { error: 'stopped' }
    },
    isIdempotent: name => options.tools.get(name)?.idempotent ?? false,
    // A step waiting for its next try is not a stalled run: the inactivity timeout waits too.
    waitUntil: (at, signal) => {
      harness.toolStarted()
      return waitUntil(at, signal).finally(() => harness.toolFinished())
    },
    loadWorkflow: async (workflowId, nodeId) => {
      const saved = await options.loadWorkflow?.(workflowId)
      if (!saved || saved.userId !== job.userId) return { error: `there is no workflow “${workflowId}” of yours to run (was it deleted?)` }
      const checked = runnableWorkflow(saved, options.tools)
      if (!checked.ok) return { error: checked.error }
      return { definition: checked.workflow, name: saved.name, version: saved.version, runId: childRunId(job.id, nodeId) }
    },
  }
}

/** How the run went, in the job's terms. */
function runResultOf(result: WorkflowRunResult, context: WorkflowJobContext): RunResult {
  if (context.overBudget && !context.options.signal.aborted) return { status: 'error', error: overBudgetError(context.overBudget) }
  if (result.status === 'error') return { status: 'error', error: { kind: 'workflow', message: result.error ?? 'The workflow failed.', hint: 'Open the failed step to see what went wrong, fix the workflow or the input, and run it again.' } }
  if (result.status === 'rejected') return { status: 'rejected', error: { kind: 'rejected', message: result.error ?? 'An approval step was not approved.', hint: 'Run it again and approve the step, or add a "reject" edge to say what happens on a no.' } }
  if (result.status === 'aborted') return { status: 'aborted' }
  return { status: 'complete', finishReason: 'stop' }
}

/** Runs `options.job` (a workflow job) to its end, or to its saved state on shutdown. */
export async function runWorkflowJob(options: WorkflowJobRunOptions): Promise<JobRunOutcome> {
  const { job, store, config, signal } = options
  const spec = job.request!.workflow!
  const harness = new JobRunHarness(options)
  const resumed = job.workflowState !== undefined
  await harness.openLive({ ...job, resumeCount: resumed ? job.resumeCount + 1 : job.resumeCount }, resumed)
  if (resumed) await store.updateRunState(job.id, { resumeCount: job.resumeCount + 1 })
  await options.tools.ready()
  const context = new WorkflowJobContext(options, harness)
  // Outputs too long for the record are kept as files of the run's workspace (output-files.ts);
  // viewers and the store get the state with their starts.
  const inlineChars = config.workflows.stepOutputInlineChars
  const outputs = options.runOutputs && new RunOutputFiles(options.runOutputs(job.id, job.userId), inlineChars, (path, error) => options.logger?.warn(`A long step output stays in the run's record: ${path} could not be written`, { jobId: job.id, error: error.message }))
  const live = new LiveStepText(state => harness.events.showWorkflowState(outputs ? outputs.shown(state) : state))
  const writes = new CoalescedStateWrites(async state => harness.events.workflowState(outputs ? await outputs.kept(state) : state))
  // Its own state after a restart (its long outputs read back from its files); at first, what the
  // run it resumes kept ("Resume from here"), read from that run's files.
  const resumeFrom = job.workflowState ?? spec.resumeState
  const resumeFiles = job.workflowState || !spec.resumedFrom || !options.runOutputs ? outputs : new RunOutputFiles(options.runOutputs(spec.resumedFrom.jobId, job.userId), inlineChars)
  const resume = resumeFrom && resumeFiles ? await resumeFiles.restored(resumeFrom) : resumeFrom

  const result = await executeWorkflow({
    workflow: spec.definition,
    workflowId: spec.workflowId,
    prompt: spec.prompt,
    ...(spec.inputs ? { inputs: spec.inputs } : {}),
    dependencies: stepDependencies(context, live),
    signal: context.runStop.signal,
    isResumableStop: () => RESUMABLE_STOPS.has(signal.reason),
    resume,
    limits: { stepChars: config.limits.workflowStepChars, runChars: config.limits.jobContentChars },
    ...(options.modelCallLimit !== undefined ? { childModelCalls: { left: Math.max(0, options.modelCallLimit - workflowModelCallBound(spec.definition)) } } : {}),
    ...(options.stepLimit !== undefined ? { childSteps: { left: Math.max(0, options.stepLimit - workflowStepBound(spec.definition)), limit: options.stepLimit } } : {}),
    liveState: true,
    callbacks: {
      onNodeStart: () => {
        context.checkBudget()
        harness.activity()
      },
      onNodeFinish: (nodeId) => {
        live.done(nodeId)
        harness.activity()
      },
      onStateChange: (next) => {
        live.state = next
        return writes.changed(next)
      },
    },
  })
  // Its last state is stored before its end is.
  await writes.settled()
  live.dispose()
  context.stopFollowingRun()
  // A long answer is kept as its output step's file (written with the state just now), or a file of its own.
  const answerSteps = spec.definition.nodes.filter(node => node.kind === 'output' && result.state.nodeStates[node.id]?.status === 'completed')
  const content = outputs ? await outputs.keptText(result.output, answerSteps.length === 1 ? answerSteps[0]!.id : undefined) : result.output
  return harness.end({
    result: runResultOf(result, context),
    // The run's usage: what each of its steps used (steps kept from a run it resumes used nothing here).
    final: { content, reasoning: '', chunksReceived: 0, usage: usageOfSteps(result.state.nodeStates) },
    timeoutError: { kind: 'timeout', message: harness.timeoutMessage('The workflow') },
    // The text of the run is its output; node text reaches viewers through workflow-state events.
    streamFinalContent: true,
  })
}
