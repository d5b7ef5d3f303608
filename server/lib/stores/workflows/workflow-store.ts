/** The one interface every workflow store implements (memory, sqlite, Convex); one contract suite pins it. */
import type { SavedWorkflow, WorkflowDefinition } from '../../../../shared/types/workflow'

/** Storage of saved workflows (memory, sqlite, Convex), one contract for each. */
export interface WorkflowStore {
  listWorkflows(userId: string): Promise<SavedWorkflow[]>
  getWorkflow(id: string): Promise<SavedWorkflow | null>
  createWorkflow(input: { userId: string, definition: WorkflowDefinition, id?: string, now?: number }): Promise<SavedWorkflow>
  updateWorkflow(id: string, definition: WorkflowDefinition, now?: number): Promise<boolean>
  deleteWorkflow(id: string): Promise<boolean>
  close(): Promise<void>
}
