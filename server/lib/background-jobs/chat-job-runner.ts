/**
 * Runs one chat job to its end: the tool loop streams into the live hub (viewers) and, throttled,
 * into the provider (durable state), with a checkpoint after every tool round so a restart can
 * resume it. Never throws; the job always ends in a terminal state unless the server is shutting
 * down, in which case it is left `streaming` at its checkpoint for the next start.
 */
import { executeToolLoop, type ToolCallRecord } from '../../utils/chat/tool-loop'
import { getEnabledDefinitions, getServerTool, whenServerToolsReady } from '../../utils/chat/tool-registry'
import { runToolCalls, toolErrorMessage } from '../chat/run-tool-calls'
import { chatClientOptions } from '../../utils/chat/chat-endpoint'
import type { ChatEndpoint } from '../../utils/openrouter/chat-client'
import type { ChatMessage } from '../../utils/openrouter/types'
import type { ServerConfig } from '../config/server-config'
import type { BackgroundJobProvider } from '../../utils/background-jobs/providers/provider'
import { toPublicJob, type ActiveToolCall, type BackgroundJob, type JobCheckpoint } from '../../utils/background-jobs/types'
import type { JobLiveHub } from './live-hub'
import { ThrottledJobWriter } from './job-writer'
import { UNKNOWN_OUTCOME_ERROR, type ResumePlan } from './resume-plan'
import { endJobRun, type JobRunOutcome, type RunResult } from './end-job-run'
import { withToolExecution } from './job-record'

export type { JobStopReason } from './end-job-run'

/** How a run ended. `interrupted`: stopped by shutdown or a lost lease, left to resume. */
export type ChatJobOutcome = JobRunOutcome

/** Where log lines go (consola in the server, silent in tests). */
export interface JobLogger {
  warn: (message: string, ...details: unknown[]) => void
}

/** Everything one run needs. */
export interface ChatJobRunOptions {
  job: BackgroundJob
  provider: BackgroundJobProvider
  hub: JobLiveHub
  config: ServerConfig
  endpoint: ChatEndpoint
  signal: AbortSignal
  resume?: ResumePlan
  /** Called on every sign of life (text, tool start and finish), for the inactivity timeout. */
  onActivity?: (toolsRunning: number) => void
  /** Called when the store refuses a progress write: the job is no longer this run's to write. */
  onWriteRefused?: () => void
  logger?: JobLogger
}

/** Tool results are shown to viewers up to this length (the model gets them whole). */
const DISPLAY_RESULT_CHARS = 2_000

function displayResult(result: string): string {
  return result.length > DISPLAY_RESULT_CHARS ? `${result.slice(0, DISPLAY_RESULT_CHARS)}…` : result
}

function toActiveCall(record: ToolCallRecord, round: number): ActiveToolCall {
  const call: ActiveToolCall = {
    id: record.id,
    name: record.name,
    arguments: record.arguments,
    round,
    status: record.status === 'completed' ? 'completed' : 'error',
    startedAt: record.startedAt,
    finishedAt: record.finishedAt,
    executionTimeMs: record.executionTimeMs,
    result: displayResult(record.result),
  }
  if (record.timedOut) call.timedOut = true
  if (record.error !== undefined) call.error = record.error
  return call
}

/** Runs `options.job` to its end (or to its checkpoint on shutdown). */
export async function runChatJob(options: ChatJobRunOptions): Promise<ChatJobOutcome> {
  const { job, provider, hub, config, signal, resume } = options
  const request = job.request!
  const logger = options.logger ?? { warn: () => {} }
  const writer = new ThrottledJobWriter(provider, job.id, config.backgroundJobs.flush, error => logger.warn(`Job ${job.id}: a progress write failed`, error), job.chunksReceived, () => options.onWriteRefused?.())

  let content = resume?.content ?? ''
  let reasoning = resume?.reasoning ?? ''
  let chunksReceived = job.chunksReceived
  let toolsRunning = 0
  // Every tool call of the job, in call order (a resumed job keeps the ones that had finished).
  let activeCalls: ActiveToolCall[] = resume ? job.activeToolCalls.filter(call => call.status === 'completed' || call.status === 'error') : []
  let toolRounds = job.toolRounds
  const activity = () => options.onActivity?.(toolsRunning)

  const setActiveCall = (call: ActiveToolCall) => {
    const index = activeCalls.findIndex(item => item.id === call.id && item.round === call.round)
    activeCalls = index >= 0 ? activeCalls.with(index, call) : [...activeCalls, call]
    hub.updateToolCall(job.id, call)
    void writer.setActiveToolCalls(activeCalls)
  }
  const saveCheckpoint = (checkpoint: JobCheckpoint) => {
    void writer.flush()
    void writer.enqueue(() => provider.updateJobMetadata(job.id, { checkpoint }))
  }
  const recordExecution = (round: number, record: ToolCallRecord) => {
    const execution = { id: record.id, name: record.name, arguments: record.arguments, result: record.result, executionTimeMs: record.executionTimeMs, ...(record.error === undefined ? {} : { error: record.error }) }
    toolRounds = withToolExecution(toolRounds, round, execution)
    hub.setToolRounds(job.id, toolRounds)
    void writer.enqueue(() => provider.appendToolExecution(job.id, round, execution))
  }
  const onStreamed = (kind: 'content' | 'reasoning', text: string) => {
    if (kind === 'content') content += text
    else reasoning += text
    chunksReceived++
    hub.appendText(job.id, { [kind]: text }, chunksReceived)
    writer.addText({ [kind]: text }, chunksReceived)
    activity()
  }
  const onToolStart = (round: number, id: string, name: string, args: string, startedAt: number) => {
    toolsRunning++
    activity()
    setActiveCall({ id, name, arguments: args, round, status: 'running', startedAt })
  }
  const onToolFinish = (round: number, record: ToolCallRecord) => {
    toolsRunning = Math.max(0, toolsRunning - 1)
    activity()
    setActiveCall(toActiveCall(record, round))
    recordExecution(round, record)
  }

  // On resume, rewind to the checkpoint so viewers and the store agree on the text.
  const startState: BackgroundJob = { ...job, content, reasoning, activeToolCalls: activeCalls }
  if (resume) {
    startState.resumeCount = job.resumeCount + 1
    await provider.updateJobMetadata(job.id, { content, reasoning, resumeCount: startState.resumeCount })
    await provider.updateJob(job.id, { activeToolCalls: activeCalls })
  }
  hub.open(toPublicJob(startState))

  await whenServerToolsReady()
  const { toolExecution } = config.backgroundJobs
  const offered = new Set(toolExecution.enabled ? getEnabledDefinitions(request.toolNames).map(tool => tool.function.name) : [])
  let messages: ChatMessage[] = resume?.messages ?? request.messages
  let rounds = resume?.rounds ?? 0
  let completedToolRounds = resume?.toolRounds ?? 0

  if (resume?.interruptedRound) {
    const { round, assistant, calls } = resume.interruptedRound
    for (const call of calls) setActiveCall({ id: call.id, name: call.name, arguments: call.arguments, round, status: 'pending' })
    const records: ToolCallRecord[] = []
    const rerun = calls.filter(call => !call.recorded && getServerTool(call.name)?.idempotent && offered.has(call.name))
    const rerunRecords = await runToolCalls(rerun.map(call => ({ index: 0, id: call.id, name: call.name, arguments: call.arguments })), {
      offered,
      maxToolsPerRound: toolExecution.maxToolsPerRound,
      concurrency: 5,
      context: { userId: job.userId, threadId: job.threadId, jobId: job.id },
      signal,
      onStart: (call, startedAt) => onToolStart(round, call.id, call.name, call.arguments, startedAt),
      onFinish: record => onToolFinish(round, record),
    })
    for (const call of calls) {
      const now = Date.now()
      let record = rerunRecords.find(item => item.id === call.id)
      if (!record && call.recorded) {
        const failed = call.recorded.error !== undefined
        record = { id: call.id, name: call.name, arguments: call.arguments, status: failed ? 'error' : 'completed', result: call.recorded.result, error: call.recorded.error, timedOut: false, startedAt: now, finishedAt: now, executionTimeMs: call.recorded.executionTimeMs }
        setActiveCall(toActiveCall(record, round))
      }
      if (!record) {
        record = { id: call.id, name: call.name, arguments: call.arguments, status: 'error', result: toolErrorMessage(call.name, UNKNOWN_OUTCOME_ERROR), error: UNKNOWN_OUTCOME_ERROR, timedOut: false, startedAt: now, finishedAt: now, executionTimeMs: 0 }
        setActiveCall(toActiveCall(record, round))
        recordExecution(round, record)
      }
      records.push(record)
    }
    messages = [...messages, assistant, ...records.map(record => ({ role: 'tool' as const, tool_call_id: record.id, content: record.result }))]
    rounds = round
    completedToolRounds++
    saveCheckpoint({ messages, rounds, toolRounds: completedToolRounds, contentLength: content.length, reasoningLength: reasoning.length })
  }

  const result = signal.aborted
    ? undefined
    : await executeToolLoop({
        jobId: job.id,
        userId: job.userId,
        threadId: job.threadId,
        model: request.model,
        initialMessages: messages,
        endpoint: options.endpoint,
        client: chatClientOptions(config),
        request: request.fields,
        toolNames: request.toolNames,
        toolsEnabled: toolExecution.enabled,
        maxRounds: toolExecution.maxRounds,
        maxToolsPerRound: toolExecution.maxToolsPerRound,
        roundTimeoutMs: toolExecution.roundTimeoutMs,
        signal,
        resume: { rounds, toolRounds: completedToolRounds, content, reasoning },
        callbacks: {
          onTextDelta: text => onStreamed('content', text),
          onReasoningDelta: text => onStreamed('reasoning', text),
          onToolRoundStart: ({ round, assistant, calls }) => {
            saveCheckpoint({ messages: [...messages], rounds, toolRounds: completedToolRounds, contentLength: content.length, reasoningLength: reasoning.length, pendingToolRound: { round, assistant: structuredClone(assistant), contentLength: content.length, reasoningLength: reasoning.length } })
            for (const call of calls) setActiveCall({ id: call.id, name: call.name, arguments: call.arguments, round, status: 'pending' })
          },
          onToolCallStart: call => onToolStart(call.round, call.id, call.name, call.arguments, call.startedAt),
          onToolCallFinish: record => onToolFinish(record.round, record),
          onRoundFinish: (round) => {
            rounds = round.round
            if (round.toolCalls.length === 0) return
            completedToolRounds++
            messages = [...round.messages]
            saveCheckpoint({ messages, rounds, toolRounds: completedToolRounds, contentLength: content.length, reasoningLength: reasoning.length })
          },
        },
      })

  let runResult: RunResult
  if (!result || result.finishReason === 'aborted') runResult = { status: 'aborted' }
  else if (result.finishReason === 'error') {
    const { message, kind, status, hint } = result.error!.toJSON()
    runResult = { status: 'error', error: { message, kind, ...(typeof status === 'number' ? { status } : {}), ...(hint ? { hint } : {}) } }
  } else runResult = { status: 'complete', finishReason: result.finishReason }
  const seconds = Math.round(config.backgroundJobs.jobTimeoutMs / 1000)
  return endJobRun({
    job,
    provider,
    hub,
    writer,
    signal,
    result: runResult,
    final: { content: result?.finalContent ?? content, reasoning: result?.reasoning ?? reasoning, chunksReceived, usage: result?.usage },
    timeoutError: { kind: 'timeout', message: `The job stopped after ${seconds} s with no progress.`, hint: 'The model or a tool stopped responding; try again, or raise NUXT_BACKGROUND_JOBS_JOB_TIMEOUT_MS.' },
    logger,
  })
}
