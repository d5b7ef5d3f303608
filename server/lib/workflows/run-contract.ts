/**
 * What a workflow run takes and gives (executeWorkflow in execute.ts): its parameters, what its
 * steps need from the outside world (the model, tools, approvals, saved workflows), its progress
 * callbacks, its text limits and how it ended. The job layer (jobs/run/workflow.ts) implements the
 * dependencies; loops and workflow steps hand the same to their nested runs (step-scope.ts).
 */
import type { ActiveToolCall } from '../../../shared/types/job'
import type { AgentStepCheckpoint, WorkflowState } from '../../../shared/types/workflow'
import type { WorkflowDefinition, WorkflowNode } from '../../../shared/schemas/workflow'
import type { RetryableStepError } from '../../../shared/types/workflow-retry'
import type { Usage } from '../openrouter/types'
import type { LoopIteration } from './loop'
import type { StepAllowance } from './step-budget'

type AgentNode = Extract<WorkflowNode, { kind: 'agent' }>
type ApprovalNode = Extract<WorkflowNode, { kind: 'approval' }>

/** What the person who runs a workflow said at an approval step (or that nobody answered in time). */
export type ApprovalOutcome = { approved: boolean, reason?: string } | { error: string }

/**
 * Why a step failed, for its retry policy (retry-policy.ts): the retryable kinds (an upstream 5xx or
 * lost connection, a rate limit, a timeout, the step's own failure), or one another try would meet
 * again (a refusal, an invalid input or configuration, text over a limit), or a stop. Absent: `step`.
 */
export type StepErrorKind = RetryableStepError | 'refused' | 'invalid' | 'too-long' | 'stopped'

/** A node's work either produced text or failed with a message. */
export type NodeOutcome = ({ output: string } | { error: string, kind?: StepErrorKind }) & {
  /** What the step's model requests used (agent and model-router steps). */
  usage?: Usage
}

/** What an agent step gets besides its request: where its progress goes, and where it resumes. */
export interface AgentStepHooks {
  onToken: (text: string) => void
  onToolCall: (call: ActiveToolCall) => void
  /** Keeps the step's checkpoint in the run state; resolves `true` once it is stored. */
  save: (checkpoint: AgentStepCheckpoint) => Promise<boolean>
  /** The checkpoint of this step from before a restart: the step continues from it. */
  resume?: AgentStepCheckpoint
}

/** What nodes need from the outside world (the model, the tool registry). */
export interface WorkflowRunDependencies {
  runAgent: (node: AgentNode, request: { model: string, system: string, prompt: string }, hooks: AgentStepHooks, signal: AbortSignal) => Promise<NodeOutcome>
  /**
   * Runs a tool step (`nodeId` names the step, for an approval the tool may need).
   * `markStarted` must resolve `true` before a tool with side effects runs: it records that it began.
   */
  runTool: (name: string, args: unknown, signal: AbortSignal, nodeId: string, markStarted: () => Promise<boolean>) => Promise<NodeOutcome>
  /** Asks a model a question without tools (a router's choice, a loop's yes-or-no); returns its reply. */
  askModel: (request: { model: string, prompt: string }, signal: AbortSignal) => Promise<NodeOutcome>
  /** Asks the person who runs the workflow (an approval step), with what flowed in shown. */
  askApproval: (node: ApprovalNode, request: { question: string, preview: string }, signal: AbortSignal) => Promise<ApprovalOutcome>
  /**
   * Waits until `at` (ms since the epoch) or until `signal` aborts: a step's wait before its next
   * try. The job layer holds the run's inactivity timeout meanwhile; absent, a plain timer.
   */
  waitUntil?: (at: number, signal: AbortSignal) => Promise<void>
  /** Whether a tool may be re-run after a crash interrupted it. */
  isIdempotent: (tool: string) => boolean
  /**
   * A saved workflow of the run's owner, checked against today's tools, for the workflow step
   * `nodeId` (scoped like the others); with the id its child run is kept under. Or why not.
   */
  loadWorkflow?: (workflowId: string, nodeId: string) => Promise<{ definition: WorkflowDefinition, name: string, version?: number, runId?: string } | { error: string }>
}

/** Progress, as it happens. */
export interface WorkflowRunCallbacks {
  onToken?: (nodeId: string, text: string) => void
  onNodeStart?: (nodeId: string) => void
  onNodeFinish?: (nodeId: string, output: string) => void
  onToolCallEvent?: (nodeId: string, call: ActiveToolCall) => void
  onError?: (nodeId: string, error: string) => void
  /** The whole state after every transition (persist it); resolves `true` once stored. */
  onStateChange?: (state: WorkflowState) => void | Promise<boolean>
}

/** How much text a run may make (the `limits` config). */
export interface WorkflowRunLimits {
  /** Longest text one step may produce, and longest a template may render to. */
  stepChars: number
  /** Longest text all of a run's steps together may produce. */
  runChars: number
}

/** What a step that passes a text limit reports. */
export function tooLongStepError(produced: number, limits: WorkflowRunLimits, scope: 'step' | 'run'): string {
  return scope === 'step'
    ? `this step produced ${produced.toLocaleString('en')} characters, more than the ${limits.stepChars.toLocaleString('en')} a step may (NUXT_LIMITS_WORKFLOW_STEP_CHARS); ask for a shorter result`
    : `the run's steps together produced more than ${limits.runChars.toLocaleString('en')} characters, the most a run may keep (NUXT_LIMITS_JOB_CONTENT_CHARS); ask for shorter results`
}

/** How a run ended. */
export interface WorkflowRunResult {
  /** `rejected`: an approval step was rejected (or nobody answered) and no `reject` edge leads on. */
  status: 'complete' | 'error' | 'rejected' | 'aborted'
  output: string
  state: WorkflowState
  error?: string
}

/** What an interrupted node that called a non-idempotent tool reports. */
export const UNKNOWN_NODE_OUTCOME = 'the server restarted while this step was calling a tool that may have side effects, so its outcome is unknown and it was not run again. Check the effect, then run the workflow again.'

/** What `executeWorkflow` takes. */
export interface WorkflowRunParams {
  workflow: WorkflowDefinition
  workflowId: string
  prompt: string
  /** The run's named inputs (`{{inputs.<name>}}`), as text. */
  inputs?: Record<string, string>
  dependencies: WorkflowRunDependencies
  callbacks?: WorkflowRunCallbacks
  signal?: AbortSignal
  /** True when the caller's `signal` stops the run to resume it later (shutdown): running steps are left as they stand, checkpoints kept. */
  isResumableStop?: () => boolean
  resume?: WorkflowState
  limits?: WorkflowRunLimits
  /** A loop's body: what its start step passes on, the enclosing run's outputs, and the loop's variables. */
  body?: { startWith: string, outerNodes: Record<string, string | undefined>, loop: LoopIteration }
  /** How many workflows deep this run is (0: the job's own; a child run is one more). */
  depth?: number
  /** Model calls the run's child workflows may still reserve (their worst case, each as it starts): the role's limit less the run's own worst case; shared by every nested run. */
  childModelCalls?: { left: number }
  /** Steps the run's child workflows may still reserve (step-budget.ts), shared by every nested run. */
  childSteps?: StepAllowance
  /** Characters the steps of the whole run produced, shared by every nested run (the run limit is the job's, not each iteration's). */
  produced?: { chars: number }
  /**
   * `onStateChange` gets the run's state itself, not a copy (the caller copies what it keeps, when
   * it keeps it): a caller that writes the state less often than it changes saves a copy of a
   * growing state at every transition. Nested runs always hand theirs up this way.
   */
  liveState?: boolean
}

/** A step's outcome, with the branch it takes (routers and approvals). */
export type StepOutcome = NodeOutcome & { branch?: string }
