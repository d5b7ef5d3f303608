/**
 * Runs one chat job to its end: a checkpointed agent run (agent-run.ts) whose text, tool calls and
 * checkpoints go to the job's event sink (viewers and store), within the job's text limit and its
 * user's budget. Never throws; the job always ends in a terminal state unless the server is
 * shutting down, in which case it is left `streaming` at its checkpoint for the next start.
 */
import { expandAttachments } from '../../attachments/attachments'
import { chatClientOptions } from '../../models/chat-endpoint'
import type { ChatEndpoint } from '../../openrouter/chat-client'
import type { LoopSteer, ToolExecutionLoopResult } from '../../agent/tool-loop'
import { followSignal } from '../../follow-signal'
import type { ResumePlan } from '../resume-plan'
import type { JobRunOutcome, RunResult } from './end'
import { JobRunHarness, type JobRunOptions } from './harness'
import { observedCallbacks } from './observed-callbacks'
import { meteredCallbacks, overBudgetError } from './budget-meter'
import { runCheckpointedAgent, type AgentRunJournal } from './agent-run'
import type { ChatMessage } from '../../../../shared/types/chat'
import type { BackgroundJob, JobError } from '../../../../shared/types/job'
import { toolCallPeople } from '../waits/tool-call-people'

export type { JobStopReason } from './end'
export type { JobLogger } from './harness'

/** How a run ended. `interrupted`: stopped by shutdown or a lost lease, left to resume. */
export type ChatJobOutcome = JobRunOutcome

/**
 * Where a chat run reads what its person sends it while it runs (their conversation's queue, see
 * threads/message-queue.ts): read at each round boundary.
 */
export interface RunSteering {
  /** Messages handed to this run, less those in `given` (already in its conversation: their queue entries go). */
  take(given: ReadonlySet<string>): Promise<LoopSteer[]>
  /** These are in the run's stored checkpoint now: they leave the queue. */
  delivered(ids: readonly string[]): Promise<void>
}

/** Everything one chat run needs. */
export interface ChatJobRunOptions extends JobRunOptions {
  endpoint: ChatEndpoint
  resume?: ResumePlan
  /** Where messages sent to the running answer come from (none: it takes none). */
  steering?: RunSteering
}

/** The run's model requests with the files its conversation names, each read once per run. */
function expandFiles(read: ChatJobRunOptions['readAttachment']): ((messages: readonly ChatMessage[]) => Promise<ChatMessage[]>) | undefined {
  if (!read) return undefined
  const cache = new Map<string, Record<string, unknown>>()
  return messages => expandAttachments(messages, read, cache)
}

/** The error of an answer stopped at `limits.jobContentChars`. */
function tooLongError(maxChars: number): JobError {
  return {
    kind: 'too-long',
    message: `The answer passed ${maxChars.toLocaleString('en')} characters, the most a job keeps, and was stopped there. The text so far is kept.`,
    hint: 'Ask for a shorter answer, or split the task into several messages. The operator can raise NUXT_LIMITS_JOB_CONTENT_CHARS.',
  }
}

/**
 * The answer's text as it streams, held to the job's limit (`limits.jobContentChars`) and its
 * user's budget: past either, the model is stopped and the text so far is kept.
 */
class ChatText {
  content: string
  reasoning: string
  chunksReceived: number
  tooLong = false
  overBudget: 'tokens' | 'cost' | undefined
  readonly stop: AbortController
  readonly dispose: () => void

  constructor(private readonly harness: JobRunHarness, private readonly options: ChatJobRunOptions) {
    this.content = options.resume?.content ?? ''
    this.reasoning = options.resume?.reasoning ?? ''
    this.chunksReceived = options.job.chunksReceived
    const { controller, dispose } = followSignal(options.signal)
    this.stop = controller
    this.dispose = dispose
  }

  /** Checks the budget; past it, stops the model. */
  checkBudget(): void {
    if (this.overBudget || !this.options.budget) return
    this.stopOverBudget(this.options.budget.exceeded())
  }

  /** Stops the model because `budget` is used up (a request it refused, or the text past it). */
  stopOverBudget(budget: 'tokens' | 'cost' | undefined): void {
    if (this.overBudget || !budget) return
    this.overBudget = budget
    this.stop.abort('over-budget')
  }

  /** Takes streamed text up to the limit, and sends it to the job's viewers and store. */
  add(kind: 'content' | 'reasoning', delta: string): void {
    if (this.tooLong || this.overBudget) return
    const room = this.options.config.limits.jobContentChars - this.content.length - this.reasoning.length
    const text = delta.length > room ? delta.slice(0, Math.max(0, room)) : delta
    if (text.length < delta.length) {
      this.tooLong = true
      this.stop.abort('too-long')
    }
    if (!text) return
    if (kind === 'content') this.content += text
    else this.reasoning += text
    this.chunksReceived++
    this.harness.events.text({ [kind]: text }, this.chunksReceived)
    this.harness.activity()
    this.checkBudget()
  }
}

/** Rewinds a resumed job to its checkpoint, so viewers and the store agree on the text, and opens its live view. */
async function openRun(harness: JobRunHarness, options: ChatJobRunOptions, text: ChatText): Promise<void> {
  const { job, store, resume } = options
  // A resumed job keeps the calls that had finished; the interrupted round shows its calls again.
  const activeToolCalls = resume ? job.activeToolCalls.filter(call => call.status === 'completed' || call.status === 'error') : []
  const startState: BackgroundJob = { ...job, content: text.content, reasoning: text.reasoning, activeToolCalls }
  if (resume) {
    startState.resumeCount = job.resumeCount + 1
    // The steers its checkpoint has are the ones its conversation has (one shown but not kept there is given again).
    startState.steers = resume.steered ?? []
    await store.updateRunState(job.id, { content: text.content, reasoning: text.reasoning, resumeCount: startState.resumeCount, steers: startState.steers })
    await store.updateJob(job.id, { activeToolCalls })
    await options.tools.ready()
  }
  await harness.openLive(startState, resume !== undefined)
}

/** A chat job's journal: checkpoints on the job's record, finished calls in its tool rounds, steers shown and taken from the queue. */
function chatJournal(harness: JobRunHarness, text: ChatText, steering: RunSteering | undefined, given: Set<string>): AgentRunJournal {
  return {
    steered: (steers, saved) => {
      for (const steer of steers) {
        given.add(steer.id)
        harness.events.steer(steer)
      }
      // Unsaved, they stay queued: a crash resumes from before them and gives them again; this run does not (`given`).
      if (saved) void steering?.delivered(steers.map(steer => steer.id)).catch(() => {})
    },
    save: checkpoint => harness.events.checkpoint(checkpoint),
    recorded: (round, record) => harness.events.toolExecution(round, record),
    toolCall: call => harness.events.toolCall(call),
    textLengths: () => ({ content: text.content.length, reasoning: text.reasoning.length }),
  }
}

/** How the run went, from the loop's result and the limits that stopped it. */
function runResultOf(result: ToolExecutionLoopResult | undefined, text: ChatText, signal: AbortSignal, maxChars: number): RunResult {
  if (text.tooLong && !signal.aborted) return { status: 'error', error: tooLongError(maxChars) }
  if (text.overBudget && !signal.aborted) return { status: 'error', error: overBudgetError(text.overBudget) }
  if (!result || result.finishReason === 'aborted') return { status: 'aborted' }
  if (result.finishReason === 'error') {
    const { message, kind, status, hint } = result.error!.toJSON()
    return { status: 'error', error: { message, kind, ...(typeof status === 'number' ? { status } : {}), ...(hint ? { hint } : {}) } }
  }
  return { status: 'complete', finishReason: result.finishReason }
}

/** Runs `options.job` to its end (or to its checkpoint on shutdown). */
export async function runChatJob(options: ChatJobRunOptions): Promise<ChatJobOutcome> {
  const { job, config, signal, resume } = options
  const request = job.request!
  const harness = new JobRunHarness(options)
  const text = new ChatText(harness, options)
  await openRun(harness, options, text)
  const { toolExecution } = config.backgroundJobs
  const given = new Set((resume?.steered ?? []).map(steer => steer.id))
  const result = signal.aborted
    ? undefined
    : await runCheckpointedAgent({
        resume,
        journal: chatJournal(harness, text, options.steering, given),
        tools: harness.agentTools(),
        isIdempotent: name => options.tools.get(name)?.idempotent === true,
        loop: {
          jobId: job.id,
          userId: job.userId,
          threadId: job.threadId,
          ...(request.subagent ? { workspaceId: request.subagent.workspaceId } : {}),
          model: request.model,
          initialMessages: request.messages,
          endpoint: options.endpoint,
          client: chatClientOptions(config),
          request: request.fields,
          tools: options.tools,
          toolNames: request.toolNames,
          toolsEnabled: toolExecution.enabled,
          clientTools: request.clientTools,
          people: options.inputs ? toolCallPeople(options.inputs, job, request.clientTools) : undefined,
          toolAccess: options.toolAccess,
          credentials: options.credentials,
          expandMessages: expandFiles(options.readAttachment),
          ...(options.steering ? { takeSteers: () => options.steering!.take(given) } : {}),
          maxRounds: toolExecution.maxRounds,
          maxToolsPerRound: toolExecution.maxToolsPerRound,
          maxOfferedTools: toolExecution.maxOfferedTools,
          roundTimeoutMs: toolExecution.roundTimeoutMs,
          signal: text.stop.signal,
          // Each request reserves before it goes out; real usage arrives as it ends and is checked
          // before the next, so an answer that ended is never turned into an error by its own final count.
          callbacks: observedCallbacks(harness.observer, { model: request.model, role: harness.role }, meteredCallbacks(options.budget, {
            onTextDelta: delta => text.add('content', delta),
            onReasoningDelta: delta => text.add('reasoning', delta),
            onRoundFinish: () => text.checkBudget(),
          }, budget => text.stopOverBudget(budget), text.stop.signal)),
        },
      })
  text.dispose()
  harness.modelRounds = result?.totalRounds ?? 0
  // Stopped by a limit, the runner's text is the kept part; otherwise the loop's is the whole answer.
  const stoppedHere = text.tooLong || text.overBudget !== undefined
  return harness.end({
    result: runResultOf(result, text, signal, config.limits.jobContentChars),
    final: { content: stoppedHere ? text.content : result?.finalContent ?? text.content, reasoning: stoppedHere ? text.reasoning : result?.reasoning ?? text.reasoning, chunksReceived: text.chunksReceived, usage: result?.usage },
    timeoutError: { kind: 'timeout', message: harness.timeoutMessage('The job'), hint: 'The model or a tool stopped responding; try again, or raise NUXT_BACKGROUND_JOBS_JOB_TIMEOUT_MS.' },
  })
}
