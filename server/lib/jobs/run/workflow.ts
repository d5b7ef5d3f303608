/**
 * Runs a workflow job: the executor's node transitions are persisted as the job's
 * `workflowState` (in order, through the job's write queue) and fanned out to viewers; agent
 * nodes run the same tool loop as chat, tool nodes go through the server registry. An
 * interrupted run resumes from its completed nodes. Never throws.
 */
import { executeToolLoop } from '../../agent/tool-loop'
import { chatClientOptions } from '../../models/chat-endpoint'
import type { ChatEndpoint } from '../../openrouter/chat-client'
import { executeServerTool } from '../../tools/execute-tool'
import { getServerTool, whenServerToolsReady } from '../../tools/registry'
import { executeWorkflow, tooLongStepError, type NodeOutcome, type WorkflowRunDependencies } from '../../workflows/execute'
import { followSignal } from '../../follow-signal'
import type { JobRunOutcome } from './end'
import { JobRunHarness, toolCallView, type JobRunOptions } from './harness'
import { overBudgetError } from './budget-meter'
import { toolCallPeople } from '../waits/tool-call-people'
import { approvalNeeded } from '../../tools/policy/tool-policy'
import type { ActiveToolCall } from '../../../../shared/types/job'
import type { WorkflowState } from '../../../../shared/types/workflow'

/** Everything one workflow run needs. */
export interface WorkflowJobRunOptions extends JobRunOptions {
  /** The endpoint for a node's model (throws MissingApiKeyError when it needs a key). */
  endpointFor: (model: string) => ChatEndpoint
}

/** How often live node text is pushed to viewers (it is persisted on node transitions). */
const LIVE_OUTPUT_INTERVAL_MS = 150

async function loopOutcome(run: Promise<Awaited<ReturnType<typeof executeToolLoop>>>, tooLong: () => string | undefined): Promise<NodeOutcome> {
  const result = await run
  const overLimit = tooLong()
  if (overLimit) return { error: overLimit, tooLong: true }
  if (result.finishReason === 'error') return { error: result.error?.message ?? 'the model call failed' }
  if (result.finishReason === 'aborted') return { error: 'stopped' }
  return { output: result.finalContent }
}

/** Runs `options.job` (a workflow job) to its end, or to its saved state on shutdown. */
export async function runWorkflowJob(options: WorkflowJobRunOptions): Promise<JobRunOutcome> {
  const { job, store, hub, config, signal } = options
  const spec = job.request!.workflow!
  const workflow = spec.definition
  const harness = new JobRunHarness(options)
  const { writer } = harness
  const context = { userId: job.userId, threadId: job.threadId, jobId: job.id }
  const activity = () => harness.activity()
  const limits = { stepChars: config.limits.workflowStepChars, runChars: config.limits.jobContentChars }
  // The user's daily budget: checked as text streams and before each node; past it the run stops.
  const budget = options.budget
  const { controller: runStop, dispose: stopFollowingRun } = followSignal(signal)
  let overBudget: 'tokens' | 'cost' | undefined
  const checkBudget = () => {
    if (overBudget || !budget) return
    overBudget = budget.exceeded()
    if (overBudget) runStop.abort('over-budget')
  }

  let state: WorkflowState | undefined = job.workflowState
  const liveOutput = new Map<string, string>()
  let liveTimer: ReturnType<typeof setTimeout> | undefined
  const publish = () => {
    if (!state) return
    const shown = structuredClone(state)
    for (const [nodeId, text] of liveOutput) if (shown.nodeStates[nodeId]?.status === 'running') shown.nodeStates[nodeId]!.output = text
    hub.updateWorkflowState(job.id, shown)
  }

  await harness.openLive({ ...job, resumeCount: job.workflowState ? job.resumeCount + 1 : job.resumeCount }, job.workflowState !== undefined)
  if (job.workflowState) await store.updateJobMetadata(job.id, { resumeCount: job.resumeCount + 1 })
  await whenServerToolsReady()

  const agentLoop = (model: string, messages: Array<{ role: 'system' | 'user', content: string }>, extra: { nodeId?: string, tools?: string[], maxRounds?: number, onToken?: (text: string) => void, onToolCall?: (call: ActiveToolCall) => void }, nodeSignal: AbortSignal) => {
    let endpoint: ChatEndpoint
    try {
      endpoint = options.endpointFor(model)
    } catch (error) {
      return Promise.resolve<NodeOutcome>({ error: (error as Error).message })
    }
    // A step's model stops as soon as its text passes the step limit, not when it ends.
    const { controller: step, dispose: stopFollowing } = followSignal(nodeSignal)
    let produced = 0
    let overLimit: string | undefined
    return loopOutcome(executeToolLoop({
      ...context,
      model,
      initialMessages: messages.filter(message => message.content !== ''),
      endpoint,
      client: chatClientOptions(config),
      // The role's output clamp, set when the run was created.
      request: job.request!.fields,
      toolNames: extra.tools ?? [],
      toolsEnabled: (extra.tools?.length ?? 0) > 0,
      toolAccess: options.toolAccess,
      credentials: options.credentials,
      people: options.inputs && extra.nodeId ? toolCallPeople(options.inputs, job, [], `node:${extra.nodeId}:`) : undefined,
      maxRounds: extra.maxRounds ?? 0,
      maxToolsPerRound: config.backgroundJobs.toolExecution.maxToolsPerRound,
      maxOfferedTools: config.backgroundJobs.toolExecution.maxOfferedTools,
      roundTimeoutMs: config.backgroundJobs.toolExecution.roundTimeoutMs,
      signal: step.signal,
      callbacks: {
        onTextDelta: (text) => {
          if (overLimit) return
          produced += text.length
          if (produced > limits.stepChars) {
            overLimit = tooLongStepError(produced, limits, 'step')
            step.abort('too-long')
            return
          }
          extra.onToken?.(text)
          activity()
          budget?.addText(text.length)
          checkBudget()
        },
        onUsage: usage => budget?.addUsage(usage),
        onToolCallStart: (call) => {
          harness.toolStarted()
          extra.onToolCall?.(toolCallView(call, call.round))
        },
        onToolCallFinish: (record) => {
          harness.toolFinished()
          extra.onToolCall?.(toolCallView(record, record.round))
        },
      },
    }).finally(stopFollowing), () => overLimit)
  }

  const dependencies: WorkflowRunDependencies = {
    runAgent: (node, request, hooks, nodeSignal) => agentLoop(request.model, [{ role: 'system', content: request.system }, { role: 'user', content: request.prompt }], {
      nodeId: node.id,
      tools: node.tools,
      maxRounds: node.maxToolRounds,
      onToken: (text) => {
        liveOutput.set(node.id, (liveOutput.get(node.id) ?? '') + text)
        liveTimer ??= setTimeout(() => {
          liveTimer = undefined
          publish()
        }, LIVE_OUTPUT_INTERVAL_MS)
        hooks.onToken(text)
      },
      onToolCall: hooks.onToolCall,
    }, nodeSignal),
    askRouter: (_node, request, nodeSignal) => agentLoop(request.model, [{ role: 'user', content: request.prompt }], {}, nodeSignal),
    runTool: async (name, args, nodeSignal, nodeId) => {
      // Checked at run time for the running user too: the policy may have changed since the workflow was saved.
      const access = options.toolAccess ? await options.toolAccess() : undefined
      const denied = access?.({ name, source: getServerTool(name)?.source })
      if (denied !== undefined) return { error: `tool "${name}" is not available here: ${denied}.` }
      // A tool that needs approval asks the person running the workflow first, as in a chat.
      if (approvalNeeded(name, access)) {
        if (!options.inputs) return { error: `tool "${name}" needs its user's approval, and nobody can answer for this run.` }
        harness.toolStarted()
        const decision = await toolCallPeople(options.inputs, job, [], `node:${nodeId}:`).approve({ id: 'tool', index: 0, name, arguments: JSON.stringify(args) }, 0, nodeSignal).finally(() => harness.toolFinished())
        if (!decision.approved) return { error: decision.error }
      }
      harness.toolStarted()
      const outcome = await executeServerTool(name, JSON.stringify(args), { ...context, signal: nodeSignal, credentials: await options.credentials?.() })
      harness.toolFinished()
      return outcome.error === undefined ? { output: outcome.result ?? '' } : { error: outcome.error }
    },
    askApproval: async (node, request, nodeSignal) => {
      if (!options.inputs) return { error: 'this step needs a person\'s approval, and nobody can answer for this run' }
      harness.toolStarted()
      const asked = await options.inputs.ask({
        jobId: job.id,
        userId: job.userId,
        kind: 'approval',
        key: `node:${node.id}`,
        title: request.question.slice(0, 500),
        nodeId: node.id,
        preview: request.preview.slice(0, 20_000),
        origin: 'workflow',
      }, nodeSignal).finally(() => harness.toolFinished())
      if ('aborted' in asked) return { error: 'stopped' }
      const answer = asked.request.answer
      if (answer?.kind === 'approval') return { approved: answer.approved, ...(answer.reason ? { reason: answer.reason } : {}) }
      if (asked.request.status === 'expired') return { approved: false, reason: 'nobody answered in time' }
      return { error: 'stopped' }
    },
    isIdempotent: name => getServerTool(name)?.idempotent ?? false,
  }

  const result = await executeWorkflow({
    workflow,
    workflowId: spec.workflowId,
    prompt: spec.prompt,
    dependencies,
    signal: runStop.signal,
    resume: job.workflowState,
    limits,
    callbacks: {
      onNodeStart: () => {
        checkBudget()
        activity()
      },
      onNodeFinish: (nodeId) => {
        liveOutput.delete(nodeId)
        activity()
      },
      onStateChange: (next) => {
        state = next
        publish()
        void writer.enqueue(() => store.updateWorkflowState(job.id, next))
      },
    },
  })
  if (liveTimer) clearTimeout(liveTimer)
  stopFollowingRun()

  return harness.end({
    result: overBudget && !signal.aborted
      ? { status: 'error', error: overBudgetError(overBudget) }
      : result.status === 'error'
        ? { status: 'error', error: { kind: 'workflow', message: result.error ?? 'The workflow failed.', hint: 'Open the failed step to see what went wrong, fix the workflow or the input, and run it again.' } }
        : result.status === 'rejected'
          ? { status: 'rejected', error: { kind: 'rejected', message: result.error ?? 'An approval step was not approved.', hint: 'Run it again and approve the step, or add a "reject" edge to say what happens on a no.' } }
          : result.status === 'aborted' ? { status: 'aborted' } : { status: 'complete', finishReason: 'stop' },
    final: { content: result.output, reasoning: '', chunksReceived: 0 },
    timeoutError: { kind: 'timeout', message: harness.timeoutMessage('The workflow') },
    // The text of the run is its output; node text reaches viewers through workflow-state events.
    streamFinalContent: true,
  })
}
