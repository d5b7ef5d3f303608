/** In-memory workflow run store for tests. */
import type { WorkflowRun } from '../../../../shared/types/workflow-run'
import { runIsAfter, runMatches, storedForm, summaryOf, WORKFLOW_RUNS_CLEANUP_BATCH, WORKFLOW_RUNS_PAGE_MAX, type RunOwner, type WorkflowRunStore } from './run-store'

/** Creates an empty in-memory run store. */
export function createMemoryWorkflowRunStore(): WorkflowRunStore {
  const runs = new Map<string, WorkflowRun>()
  const newestFirst = () => [...runs.values()].sort((a, b) => b.startedAt - a.startedAt || (a.jobId < b.jobId ? 1 : -1))
  const owned = (owner: RunOwner) => [...runs.values()].filter(run => 'userId' in owner ? run.userId === owner.userId : run.workflowId === owner.workflowId)
  const deleteWhere = (keep: (run: WorkflowRun) => boolean) => {
    const deleted: string[] = []
    for (const run of [...runs.values()]) {
      if (deleted.length >= WORKFLOW_RUNS_CLEANUP_BATCH) break
      if (keep(run)) continue
      runs.delete(run.jobId)
      deleted.push(run.jobId)
    }
    return deleted
  }
  return {
    async saveRun(run) {
      runs.set(run.jobId, structuredClone(storedForm(run).run))
    },
    async getRun(jobId) {
      const run = runs.get(jobId)
      return run ? structuredClone(run) : null
    },
    async listRuns(query) {
      const limit = Math.min(query.limit, WORKFLOW_RUNS_PAGE_MAX)
      const matching = newestFirst().filter(run => runMatches(run, query) && runIsAfter(run, query.after))
      const page = matching.slice(0, limit).map(summaryOf)
      const last = page.at(-1)
      return { runs: structuredClone(page), ...(matching.length > limit && last ? { next: { startedAt: last.startedAt, jobId: last.jobId } } : {}) }
    },
    async listUnfinishedRuns(limit) {
      return newestFirst().reverse().filter(run => run.status === 'streaming').slice(0, limit).map(summaryOf)
    },
    async deleteRun(jobId) {
      return runs.delete(jobId)
    },
    async deleteRunsOfWorkflow(workflowId) {
      return deleteWhere(run => run.workflowId !== workflowId)
    },
    async deleteRunsOfUser(userId) {
      return deleteWhere(run => run.userId !== userId)
    },
    async cleanupExpired(finishedBefore) {
      return deleteWhere(run => run.finishedAt === undefined || run.finishedAt >= finishedBefore)
    },
    async bytesOf(owner) {
      return owned(owner).reduce((total, run) => total + (run.sizeBytes ?? 0), 0)
    },
    async trimToBytes(owner, maxBytes) {
      const ofOwner = owned(owner)
      let excess = ofOwner.reduce((total, run) => total + (run.sizeBytes ?? 0), 0) - maxBytes
      const oldest = ofOwner.filter(run => run.finishedAt !== undefined).sort((a, b) => a.finishedAt! - b.finishedAt!).slice(0, WORKFLOW_RUNS_CLEANUP_BATCH)
      const deleted: string[] = []
      for (const run of oldest) {
        if (excess <= 0) break
        runs.delete(run.jobId)
        excess -= run.sizeBytes ?? 0
        deleted.push(run.jobId)
      }
      return deleted
    },
    async close() {
      runs.clear()
    },
  }
}
