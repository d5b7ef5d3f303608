/**
 * Runs one chat job to its end: the tool loop streams into the live hub (viewers) and, throttled,
 * into the store (durable state), with a checkpoint before and after every tool round so a restart
 * can resume it. Never throws; the job always ends in a terminal state unless the server is
 * shutting down, in which case it is left `streaming` at its checkpoint for the next start.
 */
import { executeToolLoop, type InterruptedToolRound } from '../../agent/tool-loop'
import { expandAttachments } from '../../threads/attachments'
import { chatClientOptions } from '../../models/chat-endpoint'
import type { ChatEndpoint } from '../../openrouter/chat-client'
import { getEnabledDefinitions, getServerTool, whenServerToolsReady } from '../../tools/registry'
import { toolErrorMessage, type ToolCallRecord } from '../../tools/run-tool-calls'
import { withToolExecution } from '../../stores/jobs/job-record'
import { followSignal } from '../../follow-signal'
import { UNKNOWN_OUTCOME_ERROR, type ResumePlan } from '../resume-plan'
import type { JobRunOutcome, RunResult } from './end'
import { JobRunHarness, toolCallView, type JobRunOptions } from './harness'
import { overBudgetError } from './budget-meter'
import type { ChatMessage } from '../../../../shared/types/chat'
import type { ActiveToolCall, BackgroundJob, JobCheckpoint, JobError } from '../../../../shared/types/job'
import type { JobInputRequest } from '../../../../shared/types/input-request'
import { toolCallPeople } from '../waits/tool-call-people'

export type { JobStopReason } from './end'
export type { JobLogger } from './harness'

/** How a run ended. `interrupted`: stopped by shutdown or a lost lease, left to resume. */
export type ChatJobOutcome = JobRunOutcome

/** The run's model requests with the files its conversation names, each read once per run. */
function expandFiles(read: ChatJobRunOptions['readAttachment']): ((messages: readonly ChatMessage[]) => Promise<ChatMessage[]>) | undefined {
  if (!read) return undefined
  const cache = new Map<string, Record<string, unknown>>()
  return messages => expandAttachments(messages, read, cache)
}

/** Everything one chat run needs. */
export interface ChatJobRunOptions extends JobRunOptions {
  endpoint: ChatEndpoint
  resume?: ResumePlan
}

/**
 * The interrupted round as the tool loop finishes it: calls that had finished keep their stored
 * result; idempotent ones that had not are run again; the rest get "outcome unknown".
 */
function interruptedRoundOf(plan: NonNullable<ResumePlan['interruptedRound']>, offered: ReadonlySet<string>, requests: readonly JobInputRequest[]): InterruptedToolRound & { unknown: ToolCallRecord[] } {
  // A call that was waiting for its user had not started: it waits again for the same request.
  const waiting = (callId: string) => requests.some(request => request.toolCallId === callId && request.round === plan.round
    && (request.kind === 'client-tool' || (request.kind === 'approval' && request.consumedAt === undefined)))
  const settled = new Map<string, ToolCallRecord>()
  const unknown: ToolCallRecord[] = []
  const now = Date.now()
  for (const call of plan.calls) {
    const base = { id: call.id, name: call.name, arguments: call.arguments, timedOut: false, startedAt: now, finishedAt: now }
    if (call.recorded) {
      const failed = call.recorded.error !== undefined
      settled.set(call.id, { ...base, status: failed ? 'error' : 'completed', result: call.recorded.result, error: call.recorded.error, executionTimeMs: call.recorded.executionTimeMs })
    } else if (!offered.has(call.name) || (!getServerTool(call.name)?.idempotent && !waiting(call.id))) {
      const record: ToolCallRecord = { ...base, status: 'error', result: toolErrorMessage(call.name, UNKNOWN_OUTCOME_ERROR), error: UNKNOWN_OUTCOME_ERROR, executionTimeMs: 0 }
      settled.set(call.id, record)
      unknown.push(record)
    }
  }
  const calls = plan.calls.map((call, index) => ({ index, id: call.id, name: call.name, arguments: call.arguments }))
  return { round: plan.round, assistant: plan.assistant, calls, settled, unknown }
}

/** The error of an answer stopped at `limits.jobContentChars`. */
function tooLongError(maxChars: number): JobError {
  return {
    kind: 'too-long',
    message: `The answer passed ${maxChars.toLocaleString('en')} characters, the most a job keeps, and was stopped there. The text so far is kept.`,
    hint: 'Ask for a shorter answer, or split the task into several messages. The operator can raise NUXT_LIMITS_JOB_CONTENT_CHARS.',
  }
}

/** Runs `options.job` to its end (or to its checkpoint on shutdown). */
export async function runChatJob(options: ChatJobRunOptions): Promise<ChatJobOutcome> {
  const { job, store, hub, config, signal, resume } = options
  const request = job.request!
  const harness = new JobRunHarness(options)
  const { writer } = harness

  let content = resume?.content ?? ''
  let reasoning = resume?.reasoning ?? ''
  let chunksReceived = job.chunksReceived
  // Every tool call of the job, in call order (a resumed job keeps the ones that had finished).
  let activeCalls: ActiveToolCall[] = resume ? job.activeToolCalls.filter(call => call.status === 'completed' || call.status === 'error') : []
  let toolRounds = job.toolRounds

  const setActiveCall = (call: ActiveToolCall) => {
    const index = activeCalls.findIndex(item => item.id === call.id && item.round === call.round)
    activeCalls = index >= 0 ? activeCalls.with(index, call) : [...activeCalls, call]
    hub.updateToolCall(job.id, call)
    void writer.setActiveToolCalls(activeCalls)
  }
  const saveCheckpoint = (checkpoint: JobCheckpoint) => {
    void writer.flush()
    void writer.enqueue(() => store.updateJobMetadata(job.id, { checkpoint }))
  }
  const recordExecution = (round: number, record: ToolCallRecord) => {
    const execution = { id: record.id, name: record.name, arguments: record.arguments, result: record.result, executionTimeMs: record.executionTimeMs, ...(record.error === undefined ? {} : { error: record.error }) }
    toolRounds = withToolExecution(toolRounds, round, execution)
    hub.setToolRounds(job.id, toolRounds)
    void writer.enqueue(() => store.appendToolExecution(job.id, round, execution))
  }
  // The answer is kept up to `limits.jobContentChars`; past it the model is stopped (`tooLong`).
  const maxChars = config.limits.jobContentChars
  const { controller: stop, dispose: stopFollowing } = followSignal(signal)
  let tooLong = false
  // The user's daily budget: past its allowance the model is stopped (`overBudget`), text kept.
  const budget = options.budget
  let overBudget: 'tokens' | 'cost' | undefined
  const checkBudget = () => {
    if (overBudget || !budget) return
    overBudget = budget.exceeded()
    if (overBudget) stop.abort('over-budget')
  }
  const onStreamed = (kind: 'content' | 'reasoning', delta: string) => {
    if (tooLong || overBudget) return
    const room = maxChars - content.length - reasoning.length
    const text = delta.length > room ? delta.slice(0, Math.max(0, room)) : delta
    if (text.length < delta.length) {
      tooLong = true
      stop.abort('too-long')
    }
    if (!text) return
    if (kind === 'content') content += text
    else reasoning += text
    chunksReceived++
    hub.appendText(job.id, { [kind]: text }, chunksReceived)
    writer.addText({ [kind]: text }, chunksReceived)
    harness.activity()
    budget?.addText(text.length)
    checkBudget()
  }

  // On resume, rewind to the checkpoint so viewers and the store agree on the text; what the job had
  // asked its user before the restart is shown again (and open requests are waited on again).
  const startState: BackgroundJob = { ...job, content, reasoning, activeToolCalls: activeCalls }
  if (resume) {
    startState.resumeCount = job.resumeCount + 1
    await store.updateJobMetadata(job.id, { content, reasoning, resumeCount: startState.resumeCount })
    await store.updateJob(job.id, { activeToolCalls: activeCalls })
  }
  const requests = await harness.openLive(startState, resume !== undefined)

  let messages: ChatMessage[] = resume?.messages ?? request.messages
  let rounds = resume?.rounds ?? 0
  let completedToolRounds = resume?.toolRounds ?? 0
  const { toolExecution } = config.backgroundJobs
  let interruptedRound: InterruptedToolRound | undefined
  if (resume?.interruptedRound) {
    await whenServerToolsReady()
    const offered = new Set(toolExecution.enabled ? [...getEnabledDefinitions(request.toolNames).map(tool => tool.function.name), ...(request.clientTools ?? []).map(tool => tool.name)] : [])
    const { unknown, ...round } = interruptedRoundOf(resume.interruptedRound, offered, requests)
    interruptedRound = round
    for (const call of round.calls) setActiveCall({ id: call.id, name: call.name, arguments: call.arguments, round: round.round, status: 'pending' })
    for (const record of round.settled.values()) setActiveCall(toolCallView(record, round.round))
    for (const record of unknown) recordExecution(round.round, record)
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
        clientTools: request.clientTools,
        people: options.inputs ? toolCallPeople(options.inputs, job, request.clientTools) : undefined,
        toolAccess: options.toolAccess,
        credentials: options.credentials,
        expandMessages: expandFiles(options.readAttachment),
        maxRounds: toolExecution.maxRounds,
        maxToolsPerRound: toolExecution.maxToolsPerRound,
        maxOfferedTools: toolExecution.maxOfferedTools,
        roundTimeoutMs: toolExecution.roundTimeoutMs,
        signal: stop.signal,
        resume: { rounds, toolRounds: completedToolRounds, content, reasoning, interruptedRound },
        callbacks: {
          onTextDelta: text => onStreamed('content', text),
          onReasoningDelta: text => onStreamed('reasoning', text),
          // Real usage arrives as a request ends; it is checked before the next request (below), so
          // an answer that ended is never turned into an error by its own final count.
          onUsage: usage => budget?.addUsage(usage),
          onToolRoundStart: ({ round, assistant, calls }) => {
            saveCheckpoint({ messages: [...messages], rounds, toolRounds: completedToolRounds, contentLength: content.length, reasoningLength: reasoning.length, pendingToolRound: { round, assistant: structuredClone(assistant), contentLength: content.length, reasoningLength: reasoning.length } })
            for (const call of calls) setActiveCall({ id: call.id, name: call.name, arguments: call.arguments, round, status: 'pending' })
          },
          onToolCallStart: (call) => {
            harness.toolStarted()
            setActiveCall(toolCallView(call, call.round))
          },
          onToolCallFinish: (record) => {
            harness.toolFinished()
            setActiveCall(toolCallView(record, record.round))
            // A call stopped with its job is not recorded: a resumed run decides (waits again, re-runs or says unknown).
            if (record.status === 'aborted' && stop.signal.aborted) return
            recordExecution(record.round, record)
          },
          onRoundFinish: (round) => {
            rounds = round.round
            if (round.toolCalls.length === 0) return
            completedToolRounds++
            messages = [...round.messages]
            saveCheckpoint({ messages, rounds, toolRounds: completedToolRounds, contentLength: content.length, reasoningLength: reasoning.length })
            checkBudget()
          },
        },
      })

  stopFollowing()

  let runResult: RunResult
  const stoppedHere = tooLong || overBudget !== undefined
  if (tooLong && !signal.aborted) runResult = { status: 'error', error: tooLongError(maxChars) }
  else if (overBudget && !signal.aborted) runResult = { status: 'error', error: overBudgetError(overBudget) }
  else if (!result || result.finishReason === 'aborted') runResult = { status: 'aborted' }
  else if (result.finishReason === 'error') {
    const { message, kind, status, hint } = result.error!.toJSON()
    runResult = { status: 'error', error: { message, kind, ...(typeof status === 'number' ? { status } : {}), ...(hint ? { hint } : {}) } }
  } else runResult = { status: 'complete', finishReason: result.finishReason }
  return harness.end({
    result: runResult,
    // Stopped by a limit, the runner's text is the kept part; otherwise the loop's is the whole answer.
    final: { content: stoppedHere ? content : result?.finalContent ?? content, reasoning: stoppedHere ? reasoning : result?.reasoning ?? reasoning, chunksReceived, usage: result?.usage },
    timeoutError: { kind: 'timeout', message: harness.timeoutMessage('The job'), hint: 'The model or a tool stopped responding; try again, or raise NUXT_BACKGROUND_JOBS_JOB_TIMEOUT_MS.' },
  })
}
