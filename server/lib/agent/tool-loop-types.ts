/** What the tool loop takes, reports as it goes, and returns (the seed's ToolExecutionLoop shapes). */
import type { RunTools } from '../tools/run-tools'
import type { ToolCallPeople, ToolCallRecord } from '../tools/run-tool-calls'
import type { ClientToolDeclaration } from '../../../shared/types/tool'
import type { ToolAccessCheck } from '../tools/policy/tool-policy'
import type { ToolCredentials } from '../tools/tool-types'
import type { ChatClientOptions, ChatEndpoint } from '../openrouter/chat-client'
import type { OpenRouterError, OpenRouterErrorKind } from '../openrouter/errors'
import type { ChatCompletionRequest, ChatMessage, FinishReason, StreamedToolCall, Usage } from '../openrouter/types'

/** One round that ran tools. */
export interface ToolRoundResult {
  round: number
  toolCalls: ToolCallRecord[]
  totalExecutionMs: number
}

/** Why the loop ended. */
export type ToolLoopFinishReason = 'stop' | 'length' | 'content_filter' | 'tool_limit' | 'error' | 'aborted'

/** Progress as it happens, for the job layer to persist and fan out. */
export interface ToolLoopCallbacks {
  /**
   * A model request is about to go out (`request`: what is sent); awaited. Aborting the loop's
   * signal here stops the loop before it is sent (a budget that refuses it).
   */
  beforeModelRequest?: (event: { round: number, request: ChatCompletionRequest }) => void | Promise<void>
  /**
   * The request that `beforeModelRequest` announced has ended, however it ended; `error` is the
   * kind of upstream error it ended with (`timeout` when the round's deadline passed).
   */
  afterModelRequest?: (event: { round: number, error?: OpenRouterErrorKind }) => void
  onTextDelta?: (text: string, info: { round: number }) => void
  onReasoningDelta?: (text: string, info: { round: number }) => void
  /**
   * The model asked for tools; `assistant` is its turn (text, tool_calls, reasoning details).
   * Called, and awaited, before any runs: the place to checkpoint the round.
   */
  onToolRoundStart?: (event: { round: number, assistant: AssistantMessage, calls: StreamedToolCall[] }) => void | Promise<void>
  /** A registry tool call is about to run (after any approval); awaited (see RunToolCallsOptions.beforeExecute). */
  beforeToolExecute?: (event: { round: number, call: StreamedToolCall }) => Promise<void>
  onToolCallStart?: (event: { round: number, id: string, name: string, arguments: string, startedAt: number }) => void
  onToolCallFinish?: (event: ToolCallRecord & { round: number }) => void
  /** A model request reported what it used (once per request, at its end). */
  onUsage?: (usage: Usage, info: { round: number }) => void
  /**
   * Messages the person sent the running answer went into the conversation, before request
   * `round` (`messages`: the conversation with them); awaited before that request is made: the place
   * to record that they were given, so they are given once.
   */
  onSteered?: (event: { round: number, steers: readonly LoopSteer[], messages: readonly ChatMessage[] }) => Promise<void>
  /** A round ended; `messages` is the conversation so far (a checkpoint to resume from). */
  onRoundFinish?: (event: { round: number, finishReason: FinishReason, toolCalls: ToolCallRecord[], messages: readonly ChatMessage[] }) => void
}

/** A message the person sent the running answer, as the loop gives it to the model (a user turn). */
export interface LoopSteer {
  id: string
  content: string
}

/** The seed's ToolExecutionLoopParams, with the endpoint and limits made explicit. */
export interface ToolExecutionLoopParams {
  jobId: string
  userId: string
  threadId: string
  /** The workspace its tools work in, when not its thread's own (a subagent shares its parent's). */
  workspaceId?: string
  /** The knowledge bases `search_knowledge` searches, when not its thread's: a workflow agent step's own. */
  knowledgeBaseIds?: readonly string[]
  initialMessages: ChatMessage[]
  model: string
  endpoint: ChatEndpoint
  client: ChatClientOptions
  /** Extra request fields passed through (tool_choice, parallel_tool_calls, max_tokens, reasoning, temperature…). */
  request?: Omit<Partial<ChatCompletionRequest>, 'model' | 'messages' | 'stream' | 'tools'>
  /** The tool registry it offers, checks and runs tools from (default: this process's, `processTools`). */
  tools?: RunTools
  /** Names of server tools to offer; default every enabled one. An empty list offers none. */
  toolNames?: readonly string[]
  /** False offers no tools at all (tool execution switched off). */
  toolsEnabled?: boolean
  /** Tools the job's user's browser runs; offered with the server's, run through `people`. */
  clientTools?: readonly ClientToolDeclaration[]
  /** How a call waits for the job's user (browser tools, approvals); without it those calls are refused. */
  people?: ToolCallPeople
  /** Tool rounds before one last answer is forced with tool_choice "none". Default 10. */
  maxRounds?: number
  /** Calls run per round; extra calls get an error result. Default 20. */
  maxToolsPerRound?: number
  /**
   * The tool policy for this job's principal, read before every model request (so a change applies
   * from the next round): denied tools are not offered, and a call to one is refused naming the policy.
   */
  toolAccess?: () => Promise<ToolAccessCheck>
  /** The credentials of the job's user, read before every tool round (so one saved meanwhile is used). */
  credentials?: () => Promise<ToolCredentials>
  /**
   * Turns the conversation into what the model is sent, before every request (files a message
   * names by reference become their content); the conversation itself, and checkpoints, keep the references.
   */
  expandMessages?: (messages: readonly ChatMessage[]) => Promise<ChatMessage[]>
  /** Tools offered at most; past it the most relevant ones and `find_tools`. Default 40. */
  maxOfferedTools?: number
  /** Limit for one round: the model's stream plus its tools. Default 120000. */
  roundTimeoutMs?: number
  /** Tool calls of a round running at once. Default 5. */
  toolConcurrency?: number
  signal?: AbortSignal
  callbacks?: ToolLoopCallbacks
  /**
   * Messages sent to the running answer since it last asked, read at each round boundary (before
   * every model request): each becomes a user turn the model reads next (see `onSteered`).
   */
  takeSteers?: () => Promise<LoopSteer[]>
  /** Resuming a job: what earlier runs already did, so round numbers, limits and text carry on. */
  resume?: ToolLoopResumeState
}

/** Progress of an interrupted run that this run continues. */
export interface ToolLoopResumeState {
  /** Model requests already made. */
  rounds: number
  /** Tool rounds already completed (they count towards `maxRounds`). */
  toolRounds: number
  /** Text already streamed; the result's `finalContent` continues it. */
  content: string
  reasoning: string
  /**
   * A tool round that was running when the earlier run stopped. The loop finishes it before its
   * first model request: calls with a `settled` record keep it; the others run again.
   */
  interruptedRound?: InterruptedToolRound
}

/** A tool round to finish on resume (its assistant turn was checkpointed before its calls ran). */
export interface InterruptedToolRound {
  round: number
  assistant: AssistantMessage
  calls: StreamedToolCall[]
  /** Calls whose outcome is already decided (finished before the stop, or not to be re-run). */
  settled: ReadonlyMap<string, ToolCallRecord>
}

/** The model's turn in the conversation. */
export type AssistantMessage = Extract<ChatMessage, { role: 'assistant' }>

/** The seed's ToolExecutionLoopResult, plus usage, the error and the whole conversation. */
export interface ToolExecutionLoopResult {
  /** Every round's text as the user saw it streamed (rounds separated by a blank line). */
  finalContent: string
  reasoning: string
  totalRounds: number
  totalToolCalls: number
  toolRounds: ToolRoundResult[]
  finishReason: ToolLoopFinishReason
  usage: Usage
  error?: OpenRouterError
  /** The conversation including every assistant and tool message the loop added. */
  messages: ChatMessage[]
}
