import type { BackgroundJob } from '../background-jobs/types'
import type { StartWorkflowJobInput } from '../../lib/background-jobs/job-manager'

/**
 * The seed's `executeWorkflowInBackground`: starts a workflow run as a background job of type
 * `workflow` and returns the job at once; the run's `workflowState` is persisted on every node
 * transition and it resumes after a restart.
 */
export function executeWorkflowInBackground(input: StartWorkflowJobInput): Promise<BackgroundJob> {
  return useBackgroundJobs().startWorkflowJob(input)
}
