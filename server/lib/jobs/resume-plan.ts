/**
 * Where an interrupted agent run picks up after a restart (a chat job, or a workflow's agent
 * step): the conversation after its last completed tool round, its text rewound to that point,
 * and the tool round that was running (if any) with the calls that had finished and those that
 * had begun. Pure functions of what was checkpointed.
 */
import type { ChatMessage } from '../openrouter/types'
import type { ToolCallRecord } from '../tools/run-tool-calls'
import { toolErrorMessage } from '../tools/run-tool-calls'
import type { InterruptedToolRound } from '../agent/tool-loop-types'
import type { BackgroundJob, JobCheckpoint, JobSteer, PendingToolRound, ToolExecutionRecord } from '../../../shared/types/job'

/** One call of the interrupted round, with its result when it had finished before the crash. */
export interface InterruptedCall {
  id: string
  name: string
  arguments: string
  recorded?: ToolExecutionRecord
}

/** What a resumed run starts from. */
export interface ResumePlan {
  messages: ChatMessage[]
  rounds: number
  toolRounds: number
  content: string
  reasoning: string
  /** The steers its conversation already has (the checkpoint's). */
  steered?: JobSteer[]
  interruptedRound?: {
    round: number
    assistant: PendingToolRound['assistant']
    calls: InterruptedCall[]
    /** Calls with side effects that had begun (undefined: an older checkpoint, every unfinished call counts as begun). */
    started?: string[]
  }
}

/** What was checkpointed, in the form both chat jobs and agent steps keep it. */
export interface CheckpointedRun {
  checkpoint: Pick<JobCheckpoint, 'messages' | 'rounds' | 'toolRounds' | 'pendingToolRound' | 'steered'>
  /** Text the run had made, and how much of it the last completed round had. */
  content: string
  reasoning: string
  contentLength: number
  reasoningLength: number
  /** Finished calls of the pending round. */
  recorded: readonly ToolExecutionRecord[]
}

/** Where a run resumes from what it checkpointed. */
export function planFromCheckpoint(run: CheckpointedRun): ResumePlan {
  const { checkpoint } = run
  const pending = checkpoint.pendingToolRound
  const base = { messages: checkpoint.messages, toolRounds: checkpoint.toolRounds, ...(checkpoint.steered?.length ? { steered: checkpoint.steered } : {}) }
  if (!pending) return { ...base, rounds: checkpoint.rounds, content: run.content.slice(0, run.contentLength), reasoning: run.reasoning.slice(0, run.reasoningLength) }
  return {
    ...base,
    rounds: pending.round,
    content: run.content.slice(0, pending.contentLength),
    reasoning: run.reasoning.slice(0, pending.reasoningLength),
    interruptedRound: {
      round: pending.round,
      assistant: pending.assistant,
      calls: (pending.assistant.tool_calls ?? []).map(call => ({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
        recorded: run.recorded.find(item => item.id === call.id),
      })),
      ...(pending.started ? { started: pending.started } : {}),
    },
  }
}

/** The plan to resume a chat `job`, or a reason it cannot be resumed. */
export function planResume(job: BackgroundJob): ResumePlan | { error: string } {
  if (job.type !== 'chat' || !job.request) return { error: 'the job was interrupted by a server restart and cannot be resumed' }
  const checkpoint = job.checkpoint ?? { messages: job.request.messages, rounds: 0, toolRounds: 0, contentLength: 0, reasoningLength: 0 }
  const round = checkpoint.pendingToolRound?.round
  const recorded = round === undefined ? [] : job.toolRounds.find(item => item.round === round)?.toolCalls ?? []
  return planFromCheckpoint({ checkpoint, content: job.content, reasoning: job.reasoning, contentLength: checkpoint.contentLength, reasoningLength: checkpoint.reasoningLength, recorded })
}

/** What the model is told about a call that may have been running when the server died. */
export const UNKNOWN_OUTCOME_ERROR = 'the server restarted while this call was running, so its outcome is unknown. It was not run again because it may have side effects; check its effect before calling it again.'

/**
 * The interrupted round as the tool loop finishes it: calls that had finished keep their stored
 * result; a call with side effects that had begun gets "outcome unknown" (`unknown`, to record);
 * every other call runs now (one that had not begun, or one safe to repeat). A call that waited
 * for a person asks again under the same request key, so an answer given meanwhile is the one used.
 */
export function interruptedRoundOf(plan: NonNullable<ResumePlan['interruptedRound']>, isIdempotent: (tool: string) => boolean): InterruptedToolRound & { unknown: ToolCallRecord[] } {
  const begun = (callId: string) => plan.started === undefined || plan.started.includes(callId)
  const settled = new Map<string, ToolCallRecord>()
  const unknown: ToolCallRecord[] = []
  const now = Date.now()
  for (const call of plan.calls) {
    const base = { id: call.id, name: call.name, arguments: call.arguments, timedOut: false, startedAt: now, finishedAt: now }
    if (call.recorded) {
      const failed = call.recorded.error !== undefined
      settled.set(call.id, { ...base, status: failed ? 'error' : 'completed', result: call.recorded.result, error: call.recorded.error, executionTimeMs: call.recorded.executionTimeMs })
    } else if (begun(call.id) && !isIdempotent(call.name)) {
      const record: ToolCallRecord = { ...base, status: 'error', result: toolErrorMessage(call.name, UNKNOWN_OUTCOME_ERROR), error: UNKNOWN_OUTCOME_ERROR, executionTimeMs: 0 }
      settled.set(call.id, record)
      unknown.push(record)
    }
  }
  const calls = plan.calls.map((call, index) => ({ index, id: call.id, name: call.name, arguments: call.arguments }))
  return { round: plan.round, assistant: plan.assistant, calls, settled, unknown }
}
