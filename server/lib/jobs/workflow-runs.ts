/**
 * The history of workflow runs: each run is kept (written when its job is created, again when it
 * ends) for the operator's retention in days, long after its job's live state is gone (minutes).
 *
 * A crash at any point loses nothing: a run whose start was not written is written whole when it
 * ends (writes replace, by job id); a run whose end was not written is finished by the sweep, from
 * its job, before the job's own retention deletes that job (a job already gone is marked as lost).
 */
import type { JobStore } from '../stores/jobs/job-store'
import type { StoredRunPage, WorkflowRunStore } from '../stores/workflows/run-store'
import type { BackgroundJob } from '../../../shared/types/job'
import type { WorkflowRun, WorkflowRunQuery } from '../../../shared/types/workflow-run'
import { promptLine, toPublicJob } from './public-job'

/** Unfinished runs one sweep looks at. */
const RECONCILE_BATCH = 100

/** Batches of deletes one call makes at most before it leaves the rest to the next sweep. */
const DELETE_BATCHES = 20

const DAY_MS = 86_400_000

/** What the history needs. */
export interface WorkflowRunHistoryOptions {
  runs: WorkflowRunStore
  jobs: JobStore
  /** Days a run is kept after it ends. */
  retentionDays: number
  logger?: { warn: (message: string, ...details: unknown[]) => void }
}

/** A workflow job as its history keeps it (undefined for a job that is not a workflow run). */
export function runOfJob(job: BackgroundJob): WorkflowRun | undefined {
  const spec = job.request?.workflow
  if (job.type !== 'workflow' || !spec) return undefined
  const states = Object.values(job.workflowState?.nodeStates ?? {})
  const prompt = promptLine(job)
  return {
    jobId: job.id,
    workflowId: spec.workflowId,
    workflowName: spec.definition.name,
    ...(spec.version ? { version: spec.version } : {}),
    userId: job.userId,
    startedVia: spec.startedVia ?? (spec.resumedFrom ? 'resume' : 'form'),
    status: job.status,
    startedAt: job.startedAt,
    ...(job.status !== 'streaming' ? { finishedAt: job.completedAt ?? job.updatedAt } : {}),
    ...(prompt ? { prompt } : {}),
    stepsDone: states.filter(state => state.status === 'completed').length,
    stepCount: spec.definition.nodes.length,
    ...(job.usage ? { usage: job.usage } : {}),
    ...(job.error ? { error: { message: job.error.message, ...(job.error.kind ? { kind: job.error.kind } : {}) } } : {}),
    ...(spec.resumedFrom ? { resumedFrom: spec.resumedFrom } : {}),
    job: toPublicJob(job),
  }
}

/** Workflow runs, kept and listed (see the file comment). */
export class WorkflowRunHistory {
  constructor(private readonly options: WorkflowRunHistoryOptions) {}

  /** Records a run (a workflow job) as it is now: when it starts, and when it ends. */
  async record(job: BackgroundJob): Promise<void> {
    const run = runOfJob(job)
    if (run) await this.options.runs.saveRun(run)
  }

  /** A run: from its live job while that is kept (fresher), else as kept. */
  async get(jobId: string): Promise<WorkflowRun | null> {
    const job = await this.options.jobs.getJob(jobId)
    const live = job ? runOfJob(job) : undefined
    return live ?? await this.options.runs.getRun(jobId)
  }

  /** One page of an account's runs, newest first. */
  list(query: WorkflowRunQuery): Promise<StoredRunPage> {
    return this.options.runs.listRuns(query)
  }

  /** Deletes a kept run (its live job, if still kept, goes with the jobs' retention). */
  delete(jobId: string): Promise<boolean> {
    return this.options.runs.deleteRun(jobId)
  }

  /** Deletes every kept run of a workflow. */
  deleteOfWorkflow(workflowId: string): Promise<void> {
    return this.deleteInBatches(() => this.options.runs.deleteRunsOfWorkflow(workflowId))
  }

  /** Deletes every kept run of an account. */
  deleteOfUser(userId: string): Promise<void> {
    return this.deleteInBatches(() => this.options.runs.deleteRunsOfUser(userId))
  }

  /**
   * Finishes runs whose end was not recorded (from their jobs, or as lost when their job is gone),
   * then deletes runs past the retention. Called by the job sweeper before it deletes expired jobs.
   */
  async sweep(now = Date.now()): Promise<void> {
    for (const run of await this.options.runs.listUnfinishedRuns(RECONCILE_BATCH)) {
      const job = await this.options.jobs.getJob(run.jobId)
      if (job?.status === 'streaming') continue
      if (job) {
        await this.record(job)
        continue
      }
      const kept = await this.options.runs.getRun(run.jobId)
      if (!kept) continue
      const error = { message: 'The server lost this run before its end was recorded.', kind: 'interrupted' }
      await this.options.runs.saveRun({ ...kept, status: 'error', finishedAt: now, error, job: { ...kept.job, status: 'error', error, completedAt: now } })
    }
    await this.deleteInBatches(() => this.options.runs.cleanupExpired(now - this.options.retentionDays * DAY_MS))
  }

  private async deleteInBatches(deleteBatch: () => Promise<number>): Promise<void> {
    for (let batch = 0; batch < DELETE_BATCHES; batch++) {
      if (await deleteBatch() === 0) return
    }
  }
}
