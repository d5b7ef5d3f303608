/**
 * Runs a workflow job: the executor's node transitions are persisted as the job's
 * `workflowState` (in order, through the job's write queue) and fanned out to viewers; agent
 * nodes run the same tool loop as chat, tool nodes go through the server registry. An
 * interrupted run resumes from its completed nodes. Never throws.
 */
import { executeToolLoop, type ToolCallRecord } from '../../utils/chat/tool-loop'
import { executeServerTool, getServerTool, whenServerToolsReady } from '../../utils/chat/tool-registry'
import { chatClientOptions } from '../../utils/chat/chat-endpoint'
import type { ChatEndpoint } from '../../utils/openrouter/chat-client'
import type { ServerConfig } from '../config/server-config'
import type { BackgroundJobProvider } from '../../utils/background-jobs/providers/provider'
import { toPublicJob, type ActiveToolCall, type BackgroundJob, type WorkflowState } from '../../utils/background-jobs/types'
import { executeWorkflow, type NodeOutcome, type WorkflowRunDependencies } from '../workflows/execute-workflow'
import type { WorkflowDefinition } from '../workflows/workflow-schema'
import type { ChatJobOutcome, JobLogger } from './chat-job-runner'
import type { JobLiveHub } from './live-hub'
import { ThrottledJobWriter } from './job-writer'
import { endJobRun } from './end-job-run'

/** Everything one workflow run needs. */
export interface WorkflowJobRunOptions {
  job: BackgroundJob
  provider: BackgroundJobProvider
  hub: JobLiveHub
  config: ServerConfig
  /** The endpoint for a node's model (throws MissingApiKeyError when it needs a key). */
  endpointFor: (model: string) => ChatEndpoint
  signal: AbortSignal
  onActivity?: (toolsRunning: number) => void
  onWriteRefused?: () => void
  logger?: JobLogger
}

/** How often live node text is pushed to viewers (it is persisted on node transitions). */
const LIVE_OUTPUT_INTERVAL_MS = 150

function callView(record: ToolCallRecord | { id: string, name: string, arguments: string, startedAt: number }, round: number): ActiveToolCall {
  if (!('status' in record)) return { id: record.id, name: record.name, arguments: record.arguments, round, status: 'running', startedAt: record.startedAt }
  return {
    id: record.id, name: record.name, arguments: record.arguments, round,
    status: record.status === 'completed' ? 'completed' : 'error',
    startedAt: record.startedAt, finishedAt: record.finishedAt, executionTimeMs: record.executionTimeMs,
    result: record.result.length > 2_000 ? `${record.result.slice(0, 2_000)}…` : record.result,
    ...(record.timedOut ? { timedOut: true } : {}),
    ...(record.error === undefined ? {} : { error: record.error }),
  }
}

async function loopOutcome(run: Promise<Awaited<ReturnType<typeof executeToolLoop>>>): Promise<NodeOutcome> {
  const result = await run
  if (result.finishReason === 'error') return { error: result.error?.message ?? 'the model call failed' }
  if (result.finishReason === 'aborted') return { error: 'stopped' }
  return { output: result.finalContent }
}

/** Runs `options.job` (a workflow job) to its end, or to its saved state on shutdown. */
export async function runWorkflowJob(options: WorkflowJobRunOptions): Promise<ChatJobOutcome> {
  const { job, provider, hub, config, signal } = options
  const spec = job.request!.workflow!
  const workflow = spec.definition as WorkflowDefinition
  const logger = options.logger ?? { warn: () => {} }
  const writer = new ThrottledJobWriter(provider, job.id, config.backgroundJobs.flush, error => logger.warn(`Workflow job ${job.id}: a write failed`, error), job.chunksReceived, () => options.onWriteRefused?.())
  const context = { userId: job.userId, threadId: job.threadId, jobId: job.id }
  let toolsRunning = 0
  const activity = () => options.onActivity?.(toolsRunning)

  let state: WorkflowState | undefined = job.workflowState
  const liveOutput = new Map<string, string>()
  let liveTimer: ReturnType<typeof setTimeout> | undefined
  const publish = () => {
    if (!state) return
    const shown = structuredClone(state)
    for (const [nodeId, text] of liveOutput) if (shown.nodeStates[nodeId]?.status === 'running') shown.nodeStates[nodeId]!.output = text
    hub.updateWorkflowState(job.id, shown)
  }

  hub.open(toPublicJob({ ...job, resumeCount: job.workflowState ? job.resumeCount + 1 : job.resumeCount }))
  if (job.workflowState) await provider.updateJobMetadata(job.id, { resumeCount: job.resumeCount + 1 })
  await whenServerToolsReady()

  const agentLoop = (model: string, messages: Array<{ role: 'system' | 'user', content: string }>, extra: { tools?: string[], maxRounds?: number, onToken?: (text: string) => void, onToolCall?: (call: ActiveToolCall) => void }, nodeSignal: AbortSignal) => {
    let endpoint: ChatEndpoint
    try {
      endpoint = options.endpointFor(model)
    } catch (error) {
      return Promise.resolve<NodeOutcome>({ error: (error as Error).message })
    }
    return loopOutcome(executeToolLoop({
      ...context,
      model,
      initialMessages: messages.filter(message => message.content !== ''),
      endpoint,
      client: chatClientOptions(config),
      toolNames: extra.tools ?? [],
      toolsEnabled: (extra.tools?.length ?? 0) > 0,
      maxRounds: extra.maxRounds ?? 0,
      maxToolsPerRound: config.backgroundJobs.toolExecution.maxToolsPerRound,
      roundTimeoutMs: config.backgroundJobs.toolExecution.roundTimeoutMs,
      signal: nodeSignal,
      callbacks: {
        onTextDelta: (text) => {
          extra.onToken?.(text)
          activity()
        },
        onToolCallStart: (call) => {
          toolsRunning++
          extra.onToolCall?.(callView(call, call.round))
          activity()
        },
        onToolCallFinish: (record) => {
          toolsRunning = Math.max(0, toolsRunning - 1)
          extra.onToolCall?.(callView(record, record.round))
          activity()
        },
      },
    }))
  }

  const dependencies: WorkflowRunDependencies = {
    runAgent: (node, request, hooks, nodeSignal) => agentLoop(request.model, [{ role: 'system', content: request.system }, { role: 'user', content: request.prompt }], {
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
    runTool: async (name, args, nodeSignal) => {
      toolsRunning++
      activity()
      const outcome = await executeServerTool(name, JSON.stringify(args), { ...context, signal: nodeSignal })
      toolsRunning--
      activity()
      return outcome.error === undefined ? { output: outcome.result ?? '' } : { error: outcome.error }
    },
    isIdempotent: name => getServerTool(name)?.idempotent ?? false,
  }

  const result = await executeWorkflow({
    workflow,
    workflowId: spec.workflowId,
    prompt: spec.prompt,
    dependencies,
    signal,
    resume: job.workflowState,
    callbacks: {
      onNodeStart: () => activity(),
      onNodeFinish: (nodeId) => {
        liveOutput.delete(nodeId)
        activity()
      },
      onStateChange: (next) => {
        state = next
        publish()
        void writer.enqueue(() => provider.updateWorkflowState(job.id, next))
      },
    },
  })
  if (liveTimer) clearTimeout(liveTimer)

  return endJobRun({
    job,
    provider,
    hub,
    writer,
    signal,
    result: result.status === 'error'
      ? { status: 'error', error: { kind: 'workflow', message: result.error ?? 'The workflow failed.', hint: 'Open the failed step to see what went wrong, fix the workflow or the input, and run it again.' } }
      : result.status === 'aborted' ? { status: 'aborted' } : { status: 'complete', finishReason: 'stop' },
    final: { content: result.output, reasoning: '', chunksReceived: 0 },
    timeoutError: { kind: 'timeout', message: `The workflow stopped after ${Math.round(config.backgroundJobs.jobTimeoutMs / 1000)} s with no progress.` },
    // The text of the run is its output; node text reaches viewers through workflow-state events.
    streamFinalContent: true,
    logger,
  })
}
