/**
 * The background job record and everything stored with it. Stores (memory, sqlite, Convex)
 * persist exactly these shapes; the HTTP API returns `PublicJob`, which leaves out the checkpoint.
 */
import type { ChatMessage, Usage } from './chat'
import type { WorkflowDefinition, WorkflowState } from './workflow'
import type { WorkflowRunStart } from './workflow-run'
import type { JobInputRequest } from './input-request'
import type { ClientToolDeclaration } from './tool'
import type { AppLocale } from '../locales'


/** What a job runs. */
export type JobType = 'chat' | 'workflow'

/** A job is `streaming` until it reaches one of the three terminal states. */
export type JobStatus = 'streaming' | 'complete' | 'error' | 'aborted' | 'rejected'

/** One tool call of a job (any round), as viewers see it: status, timing and result. */
export interface ActiveToolCall {
  id: string
  name: string
  arguments: string
  round: number
  status: 'pending' | 'running' | 'completed' | 'error'
  /** Set when the call ran out of time (status is then `error`). */
  timedOut?: boolean
  startedAt?: number
  finishedAt?: number
  executionTimeMs?: number
  /** The text the model got back (capped for display). */
  result?: string
  error?: string
}

/** One executed tool call, kept for observability and for resuming after a restart. */
export interface ToolExecutionRecord {
  id: string
  name: string
  arguments: string
  result: string
  error?: string
  executionTimeMs: number
}

/** A round that ran tools. */
export interface ToolRoundRecord {
  round: number
  toolCalls: ToolExecutionRecord[]
}

/** How a job went wrong, in words a person can act on. */
export interface JobError {
  message: string
  /** `timeout`, `interrupted`, or an OpenRouter error kind (`auth`, `rate_limit`, …). */
  kind?: string
  status?: number
  hint?: string
}

/** What a chat job asked for, enough to start it again after a restart. */
export interface ChatJobRequest {
  model: string
  /** The language of the person who started it (what its notifications are written in); absent: English. */
  locale?: AppLocale
  messages: ChatMessage[]
  /** Pass-through request fields (temperature, reasoning, tool_choice…). */
  fields: Record<string, unknown>
  /** Server tools offered; undefined means every enabled tool. */
  toolNames?: string[]
  /** Tools the user's browser runs for this job (declared by the app that started it). */
  clientTools?: ClientToolDeclaration[]
  /** A subagent (a child job the `task` tool started): its parent, how deep it is, where its files are. */
  subagent?: {
    parentJobId: string
    toolCallId: string
    /** 1 for a child of a top-level job, 2 for its child… */
    depth: number
    /** What the parent asked it to do, in a few words (shown with it). */
    description: string
    /** The workspace it shares with its parent. */
    workspaceId: string
  }
  /** A workflow run's workflow: which, the version it ran (absent on runs from before versions), what it was asked (its prompt and named inputs), and the definition it ran. */
  workflow?: {
    workflowId: string
    version?: number
    prompt: string
    inputs?: Record<string, string>
    definition: WorkflowDefinition
    /** How it was started (absent on runs from before run history: from the app). */
    startedVia?: WorkflowRunStart
    /** "Run again": the run whose inputs this one ran with again. */
    rerunOf?: string
    /** A failure handler's run: the failed run it was started for (its workflow's `onFailure`). */
    failureOf?: string
    /** The run this one resumes ("Resume from here"), and the step it resumed from. */
    resumedFrom?: { jobId: string, nodeId: string }
    /** What it starts from: the kept steps of the run it resumes (server-side only; not shown). */
    resumeState?: WorkflowState
  }
}

/** A tool round whose calls had started when the last checkpoint was written. */
export interface PendingToolRound {
  round: number
  /** The assistant turn that asked for the calls (its text, tool_calls, reasoning details). */
  assistant: Extract<ChatMessage, { role: 'assistant' }>
  contentLength: number
  reasoningLength: number
  /**
   * Calls that may have side effects and had begun to run (written before each one starts), so
   * a resumed run knows a call that had not begun can safely run now. Absent in checkpoints
   * written before it existed: every unfinished call then counts as begun.
   */
  started?: string[]
}

/**
 * A message the person sent to a running answer ("Send now" on a queued message): the model read it
 * before request `round`, when the answer's text was `contentOffset` characters long.
 */
export interface JobSteer {
  id: string
  content: string
  round: number
  contentOffset: number
  at: number
}

/** Where a chat job resumes: the conversation after its last completed tool round. */
export interface JobCheckpoint {
  messages: ChatMessage[]
  /** The steers already in `messages` (their queue entries may still be there after a crash: they are not given again; a resumed run shows them from here). */
  steered?: JobSteer[]
  /** Model requests already made. */
  rounds: number
  /** Tool rounds completed. */
  toolRounds: number
  contentLength: number
  reasoningLength: number
  pendingToolRound?: PendingToolRound
}

/** The seed's background job record. */
export interface BackgroundJob {
  id: string
  userId: string
  threadId: string
  messageId: string
  type: JobType
  model: string
  status: JobStatus
  content: string
  /** Set by a store that lists jobs without their text (Convex): how long `content` is. */
  listedContentLength?: number
  reasoning: string
  chunksReceived: number
  /** Every tool call so far, in call order, with its live status (the seed's name). */
  activeToolCalls: ActiveToolCall[]
  /** Executed calls with the full text the model got, by round. */
  toolRounds: ToolRoundRecord[]
  /** Messages the person sent it while it ran, in the order the model read them. */
  steers?: JobSteer[]
  workflowState?: WorkflowState
  usage?: Usage
  error?: JobError
  /** Why the model stopped (`stop`, `length`, `tool_limit`…), once finished. */
  finishReason?: string
  startedAt: number
  updatedAt: number
  completedAt?: number
  /** Times the job was resumed after a restart. */
  resumeCount: number
  /** The number of the last event of its run log the store kept (absent: none yet). */
  eventSeq?: number
  request?: ChatJobRequest
  checkpoint?: JobCheckpoint
  /** The user's own API key, encrypted with the server secret; absent when the server's key is used. */
  apiKeyCiphertext?: string
}

/** A job as the HTTP API shows it: no request, checkpoint or key (a workflow run shows its workflow). */
export type PublicJob = Omit<BackgroundJob, 'request' | 'checkpoint' | 'apiKeyCiphertext'> & {
  workflow?: ChatJobRequest['workflow']
  /** A subagent's parent job and task (see shared/subagent.ts). */
  subagent?: { parentJobId: string, description: string, depth: number }
  /** What the job asked its user (open ones and those settled during this run); see input-request.ts. */
  inputRequests?: JobInputRequest[]
  /** Set by `GET /api/jobs/:id` when it shows only part of the text (`?offset=`, `?limit=`). */
  textPage?: JobTextPage
}

/** Which part of a job's text an answer holds: characters `[offset, offset + limit)` of each. */
export interface JobTextPage {
  offset: number
  limit: number
  /** Length of the whole content and reasoning. */
  contentLength: number
  reasoningLength: number
}

/** A job in a list: without the large fields. */
export type JobSummary = Omit<PublicJob, 'content' | 'reasoning' | 'toolRounds' | 'workflowState' | 'inputRequests'> & {
  contentLength: number
  toolRoundCount: number
  /** What it was asked, in one line: the last user message's first line (a workflow run: its prompt's). */
  prompt?: string
  /** A workflow run's workflow name. */
  workflowName?: string
  /** Open requests the job waits on its user for (a running job only; absent when none). */
  waitingFor?: Array<Pick<JobInputRequest, 'id' | 'kind' | 'title' | 'expiresAt'>>
}

/** A note that a job ended while nobody watched it. */
export interface JobNotification {
  id: string
  userId: string
  jobId: string
  threadId: string
  kind: 'job-complete' | 'job-error' | 'job-aborted' | 'input-needed'
  title: string
  body: string
  createdAt: number
  readAt?: number
}
