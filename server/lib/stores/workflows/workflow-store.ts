/** The one interface every workflow store implements (memory, sqlite, Convex); one contract suite pins it. */
import type { SavedWorkflow, WorkflowDefinition, WorkflowVersion, WorkflowVersionSummary } from '../../../../shared/types/workflow'

/** Versions kept per workflow: the newest; older ones are dropped as new ones are saved. */
export const WORKFLOW_VERSIONS_KEPT = 100

/** Who saves a version, and what they said about it. */
export interface WorkflowChange {
  /** The id of the account that saves it. */
  by: string
  note?: string
  now?: number
}

/**
 * Storage of saved workflows (memory, sqlite, Convex), one contract for each. Every save is a
 * version: creating is version 1, each update the next; a workflow keeps its newest
 * `WORKFLOW_VERSIONS_KEPT`, and its versions go with it when it is deleted.
 */
export interface WorkflowStore {
  listWorkflows(userId: string): Promise<SavedWorkflow[]>
  getWorkflow(id: string): Promise<SavedWorkflow | null>
  createWorkflow(input: { userId: string, definition: WorkflowDefinition, id?: string, now?: number, note?: string }): Promise<SavedWorkflow>
  /** Saves `definition` as the workflow's next version; false when there is no such workflow. */
  updateWorkflow(id: string, definition: WorkflowDefinition, change: WorkflowChange): Promise<boolean>
  /** The workflow's versions, newest first (none for a workflow that does not exist). */
  listWorkflowVersions(id: string): Promise<WorkflowVersionSummary[]>
  getWorkflowVersion(id: string, version: number): Promise<WorkflowVersion | null>
  deleteWorkflow(id: string): Promise<boolean>
  close(): Promise<void>
}
