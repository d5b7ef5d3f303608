/** Saved workflows, per user, in the same backend as threads and jobs. */
import type { WorkflowDefinition } from '../../lib/workflows/workflow-schema'

/** A user's saved workflow. */
export interface SavedWorkflow {
  id: string
  userId: string
  name: string
  definition: WorkflowDefinition
  createdAt: number
  updatedAt: number
}

/** Storage of saved workflows (memory, sqlite, Convex), one contract for each. */
export interface WorkflowStore {
  listWorkflows(userId: string): Promise<SavedWorkflow[]>
  getWorkflow(id: string): Promise<SavedWorkflow | null>
  createWorkflow(input: { userId: string, definition: WorkflowDefinition, id?: string, now?: number }): Promise<SavedWorkflow>
  updateWorkflow(id: string, definition: WorkflowDefinition, now?: number): Promise<boolean>
  deleteWorkflow(id: string): Promise<boolean>
  close(): Promise<void>
}
