/**
 * What deleting an account removes besides the account: its running jobs (stopped), its
 * conversations (with their messages), its saved workflows with their webhooks and kept runs, and
 * its ended jobs with their notifications. What it kept elsewhere (schedules, workspaces, tools,
 * credentials, settings) goes by the other steps the runtime registers.
 */
import type { BackgroundJobManager } from '../jobs/manager'
import type { ThreadStore } from '../stores/threads/thread-store'
import type { WorkflowStore } from '../stores/workflows/workflow-store'
import type { WorkflowWebhooks } from '../workflows/webhooks'

/** Removes everything `userId` owns. Bounded by the per-user quotas; batches until nothing is left. */
export async function deleteUserData(stores: { jobs: BackgroundJobManager, threads: ThreadStore, workflows: WorkflowStore, webhooks: Pick<WorkflowWebhooks, 'remove'> }, userId: string): Promise<void> {
  for (const job of await stores.jobs.store.listJobs({ userId, status: 'streaming' })) await stores.jobs.abortJob(job.id)
  for (;;) {
    const threads = await stores.threads.listThreads(userId, { limit: 200 })
    if (threads.length === 0) break
    for (const thread of threads) await stores.threads.deleteThread(thread.id)
  }
  for (const workflow of await stores.workflows.listWorkflows(userId)) {
    // The webhook first: a failure in between leaves a workflow without its hook (deleted on the retry), never a hook that starts runs of a deleted account.
    await stores.webhooks.remove(workflow.id)
    await stores.workflows.deleteWorkflow(workflow.id)
  }
  await stores.jobs.workflowRuns.deleteOfUser(userId)
  await stores.jobs.store.cleanupExpired(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY, userId)
}
