/**
 * Where an interrupted chat job picks up after a restart: the conversation after its last
 * completed tool round, its text rewound to that point, and the tool round that was running (if
 * any) with the calls that had already finished.
 */
import type { ChatMessage } from '../openrouter/types'
import type { BackgroundJob, PendingToolRound, ToolExecutionRecord } from '../../../shared/types/job'

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
  interruptedRound?: { round: number, assistant: PendingToolRound['assistant'], calls: InterruptedCall[] }
}

/** The plan to resume `job`, or a reason it cannot be resumed. */
export function planResume(job: BackgroundJob): ResumePlan | { error: string } {
  if (job.type !== 'chat' || !job.request) return { error: 'the job was interrupted by a server restart and cannot be resumed' }
  const checkpoint = job.checkpoint ?? { messages: job.request.messages, rounds: 0, toolRounds: 0, contentLength: 0, reasoningLength: 0 }
  const pending = checkpoint.pendingToolRound
  if (!pending) {
    return {
      messages: checkpoint.messages,
      rounds: checkpoint.rounds,
      toolRounds: checkpoint.toolRounds,
      content: job.content.slice(0, checkpoint.contentLength),
      reasoning: job.reasoning.slice(0, checkpoint.reasoningLength),
    }
  }
  const recorded = job.toolRounds.find(round => round.round === pending.round)?.toolCalls ?? []
  return {
    messages: checkpoint.messages,
    rounds: pending.round,
    toolRounds: checkpoint.toolRounds,
    content: job.content.slice(0, pending.contentLength),
    reasoning: job.reasoning.slice(0, pending.reasoningLength),
    interruptedRound: {
      round: pending.round,
      assistant: pending.assistant,
      calls: (pending.assistant.tool_calls ?? []).map(call => ({
        id: call.id,
        name: call.function.name,
        arguments: call.function.arguments,
        recorded: recorded.find(item => item.id === call.id),
      })),
    },
  }
}

/** What the model is told about a call that may have been running when the server died. */
export const UNKNOWN_OUTCOME_ERROR = 'the server restarted while this call was running, so its outcome is unknown. It was not run again because it may have side effects; check its effect before calling it again.'
