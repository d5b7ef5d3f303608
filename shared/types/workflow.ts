/** Workflows: a saved definition per user, and the progress of a run (kept on its job). */
import type { WorkflowDefinition } from '../schemas/workflow'
import type { ActiveToolCall, JobCheckpoint, ToolExecutionRecord, JobSteer } from './job'
import type { Usage } from './chat'

export type { WorkflowBodyNode, WorkflowCallNode, WorkflowDefinition, WorkflowEdge, WorkflowInput, WorkflowLoopNode, WorkflowNode, WorkflowNodeKind } from '../schemas/workflow'

/** A user's saved workflow. */
export interface SavedWorkflow {
  id: string
  userId: string
  name: string
  definition: WorkflowDefinition
  createdAt: number
  updatedAt: number
  /** Its current version's number: 1 when created, one more at each save. */
  version: number
}

/** One saved version of a workflow, without its definition: every save (and a restore) makes one. */
export interface WorkflowVersionSummary {
  workflowId: string
  version: number
  /** The workflow's name in that version. */
  name: string
  createdAt: number
  /** The id of the account that saved it. */
  createdBy: string
  /** What the person said about the change, if anything. */
  note?: string
}

/** One saved version with its definition. */
export interface WorkflowVersion extends WorkflowVersionSummary {
  definition: WorkflowDefinition
}

/** A step output too long for the run's record, kept as a file of the run's workspace (the record keeps its start). */
export interface WorkflowOutputFile {
  /** Its path in the run's workspace (`outputs/…`). */
  path: string
  /** Its length: characters of text, and bytes of UTF-8. */
  chars: number
  bytes: number
}

/** One workflow node's progress (filled in by workflow runs). */
export interface WorkflowNodeState {
  status: 'pending' | 'running' | 'completed' | 'error' | 'skipped'
  startedAt?: number
  finishedAt?: number
  output?: string
  /** Where the whole output is, when `output` is only its start (output-files.ts). */
  outputFile?: WorkflowOutputFile
  error?: string
  toolCalls?: ActiveToolCall[]
  /** A router's chosen branch. */
  branch?: string
  /** Failed tries so far (steps with retries); `error` holds the last one's while the next is due. */
  attempts?: number
  /** When the step's next try is due (ms since the epoch), while it waits for it: kept so a restart waits out the rest. */
  retryAt?: number
  /** A tool step: when its tool began to run (recorded before it does, so a restart never runs it twice). */
  toolStartedAt?: number
  /** What its model requests used, every attempt counted (agent and model-router steps; a loop: all its iterations'). */
  usage?: Usage
  /** A loop's iterations, in order (for each: one per item, made when the loop starts). */
  iterations?: WorkflowIterationState[]
  /** A workflow step's child run: the workflow as it was when the step began, and its steps. */
  child?: WorkflowChildRun
  /** An agent step: what the person sent it from the run view while it ran, where its model read them. */
  steers?: JobSteer[]
}

/** The run a workflow step made of another workflow, kept on the step (a restart resumes it from here). */
export interface WorkflowChildRun {
  /** Its id in the run history (`/workflows/runs/<runId>`), made from the parent's job and the step. */
  runId?: string
  workflowId: string
  workflowName: string
  version?: number
  definition: WorkflowDefinition
  /** What it was given. */
  prompt?: string
  inputs?: Record<string, string>
  /** Its steps, as they stand. */
  state?: WorkflowState
}

/** One iteration of a loop: its own small run of the loop's body. */
export interface WorkflowIterationState {
  status: 'pending' | 'running' | 'completed' | 'error' | 'skipped'
  /** What it was given (a for-each's item), shortened to 200 characters for display. */
  item?: string
  startedAt?: number
  finishedAt?: number
  /** The body's result. */
  output?: string
  /** Where the whole result is, when `output` is only its start. */
  outputFile?: WorkflowOutputFile
  error?: string
  usage?: Usage
  /** An until loop: whether its condition held after this iteration (kept, so a restart does not ask again). */
  conditionHeld?: boolean
  /** The body's steps: while it runs (a restart resumes it from here) and once it failed (to see where). */
  state?: WorkflowState
}

/**
 * Where a running agent step stands, checkpointed like a chat job: its conversation after its last
 * finished tool round, its text so far, the round under way and the calls of it that finished.
 * Kept while the step runs (a restart resumes it from here), dropped when it ends; never shown to viewers.
 */
export interface AgentStepCheckpoint extends JobCheckpoint {
  /** The step's text so far (`contentLength`, or the pending round's, says how much of it a resumed step keeps). */
  content: string
  /** The pending round's calls that finished, with what the model was told. */
  executions: ToolExecutionRecord[]
}

/** Progress of a workflow job. */
export interface WorkflowState {
  workflowId: string
  workflowName: string
  nodeStates: Record<string, WorkflowNodeState>
  executionOrder: string[]
  currentNodeId: string | null
  failedNodeId?: string | null
  /**
   * The run records when a tool step's tool begins (`toolStartedAt`). Absent in runs saved before it
   * did: a tool step they left running counts as begun.
   */
  startsRecorded?: boolean
  /** Agent steps under way, by node id (server-side only: stripped from what viewers get). */
  agentSteps?: Record<string, AgentStepCheckpoint>
}

/** One problem, with the node (or edge) it is about. */
export interface WorkflowProblem {
  nodeId?: string
  message: string
}

/** The answer of `POST /api/workflows/validate`. */
export interface WorkflowCheck {
  ok: boolean
  problems: WorkflowProblem[]
}

/** A workflow shipped with the app (`GET /api/workflows/examples`). */
export interface WorkflowExample {
  key: string
  name: string
  description?: string
  definition: WorkflowDefinition
}

/** A value a run is given for one named input: text, a number, yes/no, or a text file (`data`: its bytes in base64). */
export type WorkflowRunValue = string | number | boolean | { name: string, data: string }
