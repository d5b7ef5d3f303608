/**
 * What deleting an account removes besides the account: its conversations (with their messages),
 * its saved workflows and their kept runs, and its running jobs (stopped). Ended jobs and their notifications go with
 * the sweeper's retention, as anyone's do.
 */
import type { BackgroundJobManager } from '../jobs/manager'
import type { ThreadStore } from '../stores/threads/thread-store'
import type { WorkflowStore } from '../stores/workflows/workflow-store'

/** Removes everything `userId` owns. Bounded by the per-user quotas; batches until nothing is left. */
export async function deleteUserData(stores: { jobs: BackgroundJobManager, threads: ThreadStore, workflows: WorkflowStore }, userId: string): Promise<void> {
  for (const job of await stores.jobs.store.listJobsByUser(userId, { status: 'streaming' })) await stores.jobs.abortJob(job.id)
  for (;;) {
    const threads = await stores.threads.listThreads(userId, { limit: 200 })
    if (threads.length === 0) break
    for (const thread of threads) await stores.threads.deleteThread(thread.id)
  }
  for (const workflow of await stores.workflows.listWorkflows(userId)) await stores.workflows.deleteWorkflow(workflow.id)
  await stores.jobs.workflowRuns.deleteOfUser(userId)
}
