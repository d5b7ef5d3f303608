/** Kept workflow runs on Convex (see convex/workflowRuns.ts). */
import { api } from '../../../../convex/_generated/api'
import type { ConvexFunctionClient } from '../jobs/convex'
import type { WorkflowRun } from '../../../../shared/types/workflow-run'
import { storedForm, WORKFLOW_RUNS_CLEANUP_BATCH, WORKFLOW_RUNS_PAGE_MAX, type StoredRunPage, type WorkflowRunStore } from './run-store'

/** A Convex run store. */
export function createConvexWorkflowRunStore(options: { client: ConvexFunctionClient, secret: string }): WorkflowRunStore {
  const { client, secret } = options
  const removeMany = (which: { workflowId?: string, userId?: string, finishedBefore?: number }) =>
    client.mutation(api.workflowRuns.removeMany, { secret, ...which, batch: WORKFLOW_RUNS_CLEANUP_BATCH }) as Promise<string[]>
  return {
    async saveRun(run) {
      const stored = storedForm(run)
      await client.mutation(api.workflowRuns.save, { secret, jobId: run.jobId, userId: run.userId, workflowId: run.workflowId, status: run.status, startedAt: run.startedAt, ...(run.finishedAt !== undefined ? { finishedAt: run.finishedAt } : {}), summary: stored.summary, job: stored.job, size: stored.size })
    },
    async getRun(jobId) {
      return await client.query(api.workflowRuns.get, { secret, jobId }) as WorkflowRun | null
    },
    async listRuns({ limit, ...query }) {
      return await client.query(api.workflowRuns.list, { secret, ...query, limit: Math.min(limit, WORKFLOW_RUNS_PAGE_MAX) }) as StoredRunPage
    },
    async listUnfinishedRuns(limit) {
      return await client.query(api.workflowRuns.listUnfinished, { secret, limit }) as StoredRunPage['runs']
    },
    async deleteRun(jobId) {
      return client.mutation(api.workflowRuns.remove, { secret, jobId })
    },
    deleteRunsOfWorkflow: workflowId => removeMany({ workflowId }),
    deleteRunsOfUser: userId => removeMany({ userId }),
    cleanupExpired: finishedBefore => removeMany({ finishedBefore }),
    async bytesOf(owner) {
      return await client.query(api.workflowRuns.bytes, { secret, ...owner }) as number
    },
    async trimToBytes(owner, maxBytes) {
      return await client.mutation(api.workflowRuns.trim, { secret, ...owner, maxBytes, batch: WORKFLOW_RUNS_CLEANUP_BATCH }) as string[]
    },
    async close() {},
  }
}
