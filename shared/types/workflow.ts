/** Workflows: a saved definition per user, and the progress of a run (kept on its job). */
import type { WorkflowDefinition } from '../schemas/workflow'
import type { ActiveToolCall } from './job'

export type { WorkflowDefinition, WorkflowNode } from '../schemas/workflow'

/** A user's saved workflow. */
export interface SavedWorkflow {
  id: string
  userId: string
  name: string
  definition: WorkflowDefinition
  createdAt: number
  updatedAt: number
}

/** One workflow node's progress (filled in by workflow runs). */
export interface WorkflowNodeState {
  status: 'pending' | 'running' | 'completed' | 'error' | 'skipped'
  startedAt?: number
  finishedAt?: number
  output?: string
  error?: string
  toolCalls?: ActiveToolCall[]
  /** A router's chosen branch. */
  branch?: string
  /** Failed attempts so far (nodes with retries). */
  attempts?: number
}

/** Progress of a workflow job. */
export interface WorkflowState {
  workflowId: string
  workflowName: string
  nodeStates: Record<string, WorkflowNodeState>
  executionOrder: string[]
  currentNodeId: string | null
  failedNodeId?: string | null
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
