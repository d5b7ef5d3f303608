/** A workflow's schedule: when it runs on its own, with what, and how its last occurrence went. */
import type { WorkflowScheduleInput } from '../schemas/workflow-schedule'

export type { WorkflowScheduleInput } from '../schemas/workflow-schedule'

/** How a schedule's last occurrence went: a run started, none (skipped: missed or still running), or it could not start. */
export interface WorkflowScheduleOutcome {
  at: number
  /** The occurrence it was for. */
  occurrence: number
  status: 'started' | 'skipped' | 'failed'
  jobId?: string
  message?: string
}

/** A stored schedule (`WorkflowScheduleInput` as given, and its state). */
export interface WorkflowSchedule extends WorkflowScheduleInput {
  id: string
  workflowId: string
  /** The workflow's owner: its runs are theirs, counted against their limits and budget. */
  userId: string
  createdAt: number
  updatedAt: number
  /** When it runs next (null: never again, or switched off). */
  nextRunAt: number | null
  last?: WorkflowScheduleOutcome
}
