/**
 * One checkpointed agent run: the tool loop (agent/tool-loop.ts) with its progress journaled, so a
 * restart resumes it where it stood and a tool with side effects runs at most once. A chat job is
 * one; a workflow's agent step is one nested in its node. Checkpoints are written
 * - before a round's tools run: the assistant turn that asked for them (awaited);
 * - before each call that is not idempotent begins: its id (awaited; a call whose mark cannot be
 *   stored is not run);
 * - after each completed tool round: the conversation so far;
 * - when the person's messages to the running answer go in (a steer, at a round boundary): the
 *   conversation with them and the steers given, before the model is asked (awaited), so a
 *   resumed run has them and never gives them twice.
 * A resumed run finishes the interrupted round (resume-plan.ts): finished calls keep their result,
 * a begun call with side effects is reported "interrupted, not retried", every other call runs.
 * Where text goes and where checkpoints are kept differ per kind of run: `AgentRunJournal`.
 */
import { executeToolLoop, type ToolExecutionLoopParams, type ToolExecutionLoopResult, type ToolLoopCallbacks } from '../../agent/tool-loop'
import type { ToolCallRecord } from '../../tools/run-tool-calls'
import type { ChatMessage } from '../../openrouter/types'
import { interruptedRoundOf, type ResumePlan } from '../resume-plan'
import { toolCallView } from './tool-call-view'
import type { ActiveToolCall, JobCheckpoint, JobSteer, PendingToolRound } from '../../../../shared/types/job'

/** Where one kind of run keeps what the agent run journals. */
export interface AgentRunJournal {
  /** Saves where the run stands; resolves `true` once the store has it. */
  save(checkpoint: JobCheckpoint): Promise<boolean>
  /** A finished call with what the model got (a call cut short by a stop is left to the resumed run). */
  recorded(round: number, record: ToolCallRecord): void
  /** A call appeared or changed state (for viewers). */
  toolCall(call: ActiveToolCall): void
  /** How much text the run has made so far, for checkpoints. */
  textLengths(): { content: number, reasoning: number }
  /** Steers went into the conversation (`saved`: its checkpoint with them is stored). */
  steered?(steers: readonly JobSteer[], saved: boolean): void
}

/** Everything one checkpointed agent run needs. */
export interface AgentRunOptions {
  /** The tool loop's parameters; its text and usage callbacks are the caller's. */
  loop: Omit<ToolExecutionLoopParams, 'resume'>
  resume?: ResumePlan
  journal: AgentRunJournal
  /** Told when a tool call starts and ends (the inactivity timeout waits while tools run; metrics count them). */
  tools: { started: (tool: string) => void, finished: (record: ToolCallRecord) => void }
  /** Whether a tool may run again after a crash cut it short. */
  isIdempotent: (tool: string) => boolean
}

/** Why a call with side effects was not run: its start could not be recorded. */
const UNRECORDED_START = 'the server could not record that this call was starting, so it did not run it (a restart could otherwise run it twice). Try again.'

/** The run's checkpoint as it moves on. */
class AgentProgress {
  messages: ChatMessage[]
  rounds: number
  toolRounds: number
  pending: (PendingToolRound & { started: string[] }) | undefined
  steered: JobSteer[]
  /** The pending round's checkpoint was not stored: its calls with side effects do not run. */
  unsaved = false

  constructor(initialMessages: ChatMessage[], resume: ResumePlan | undefined, lengths: { content: number, reasoning: number }) {
    this.messages = resume?.messages ?? initialMessages
    this.rounds = resume?.rounds ?? 0
    this.toolRounds = resume?.toolRounds ?? 0
    this.steered = [...resume?.steered ?? []]
    const interrupted = resume?.interruptedRound
    if (interrupted) {
      this.pending = { round: interrupted.round, assistant: interrupted.assistant, contentLength: lengths.content, reasoningLength: lengths.reasoning, started: [...interrupted.started ?? []] }
    }
  }

  checkpoint(lengths: { content: number, reasoning: number }): JobCheckpoint {
    const base: JobCheckpoint = { messages: this.messages, rounds: this.rounds, toolRounds: this.toolRounds, contentLength: lengths.content, reasoningLength: lengths.reasoning }
    if (this.steered.length) base.steered = structuredClone(this.steered)
    return this.pending ? { ...base, pendingToolRound: structuredClone(this.pending) } : base
  }
}

/** Shows the interrupted round again and records the calls whose outcome is unknown; returns what the loop finishes. */
function takeUpInterrupted(options: AgentRunOptions) {
  const plan = options.resume?.interruptedRound
  if (!plan) return undefined
  const { unknown, ...round } = interruptedRoundOf(plan, options.isIdempotent)
  for (const call of round.calls) options.journal.toolCall({ id: call.id, name: call.name, arguments: call.arguments, round: round.round, status: 'pending' })
  for (const record of round.settled.values()) options.journal.toolCall(toolCallView(record, round.round))
  for (const record of unknown) options.journal.recorded(round.round, record)
  return round
}

/** The loop callbacks that journal the run (the caller's text and usage callbacks pass through). */
function journalingCallbacks(options: AgentRunOptions, progress: AgentProgress): ToolLoopCallbacks {
  const { journal } = options
  const save = () => journal.save(progress.checkpoint(journal.textLengths()))
  const caller = options.loop.callbacks ?? {}
  // The last finished round's checkpoint, which the next model request waits for: a tool's result
  // is stored before the model is asked about it, so a kill -9 after that request never finds the
  // call still "running" (its outcome unknown) when it had finished.
  let roundSaved: Promise<unknown> = Promise.resolve()
  return {
    ...caller,
    beforeModelRequest: async (event) => {
      await roundSaved
      await caller.beforeModelRequest?.(event)
    },
    onToolRoundStart: async ({ round, assistant, calls }) => {
      const lengths = journal.textLengths()
      progress.pending = { round, assistant: structuredClone(assistant), contentLength: lengths.content, reasoningLength: lengths.reasoning, started: [] }
      for (const call of calls) journal.toolCall({ id: call.id, name: call.name, arguments: call.arguments, round, status: 'pending' })
      progress.unsaved = !await save()
    },
    beforeToolExecute: async ({ call }) => {
      if (options.isIdempotent(call.name)) return
      if (progress.unsaved || !progress.pending) throw new Error(UNRECORDED_START)
      progress.pending.started.push(call.id)
      if (!await save()) throw new Error(UNRECORDED_START)
    },
    onSteered: async ({ round, steers, messages }) => {
      const at = Date.now()
      const content = journal.textLengths().content
      const given = steers.map(steer => ({ id: steer.id, content: steer.content, round, contentOffset: content, at }))
      progress.steered.push(...given)
      progress.messages = [...messages]
      // Taken into the conversation (and given on) only once the checkpoint that has them is stored.
      journal.steered?.(given, await save().catch(() => false))
    },
    onToolCallStart: (call) => {
      options.tools.started(call.name)
      journal.toolCall(toolCallView(call, call.round))
    },
    onToolCallFinish: (record) => {
      options.tools.finished(record)
      journal.toolCall(toolCallView(record, record.round))
      if (record.status === 'aborted' && options.loop.signal?.aborted) return
      journal.recorded(record.round, record)
    },
    onRoundFinish: (event) => {
      // A round cut short by a stop is not complete: its checkpoint (begun calls) stays for the resumed run.
      if (options.loop.signal?.aborted) return
      progress.rounds = event.round
      if (event.toolCalls.length > 0) {
        progress.toolRounds++
        progress.messages = [...event.messages]
        progress.pending = undefined
        progress.unsaved = false
        roundSaved = save().catch(() => false)
      }
      caller.onRoundFinish?.(event)
    },
  }
}

/** Runs the agent to its answer (or its stop), journaling as it goes. Never throws. */
export async function runCheckpointedAgent(options: AgentRunOptions): Promise<ToolExecutionLoopResult> {
  const { resume } = options
  const interruptedRound = takeUpInterrupted(options)
  const progress = new AgentProgress(options.loop.initialMessages, resume, options.journal.textLengths())
  return executeToolLoop({
    ...options.loop,
    initialMessages: progress.messages,
    resume: resume ? { rounds: resume.rounds, toolRounds: resume.toolRounds, content: resume.content, reasoning: resume.reasoning, interruptedRound } : undefined,
    callbacks: journalingCallbacks(options, progress),
  })
}
