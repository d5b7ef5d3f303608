/**
 * The history of workflow runs: each run is kept (written when its job is created, again when it
 * ends) for the operator's retention in days, long after its job's live state is gone (minutes).
 *
 * A crash at any point loses nothing: a run whose start was not written is written whole when it
 * ends (writes replace, by job id); a run whose end was not written is finished by the sweep, from
 * its job, before the job's own retention deletes that job (a job already gone is marked as lost).
 *
 * A run's workflow steps ran child runs inside its job; each is kept too, under its own id (made
 * from the parent's job and the step), when the parent's end is: listed with its own workflow,
 * opened in the run view like any run, linked to its parent.
 */
import type { JobStore } from '../stores/jobs/job-store'
import type { StoredRunPage, WorkflowRunStore } from '../stores/workflows/run-store'
import type { BackgroundJob } from '../../../shared/types/job'
import type { WorkflowRun, WorkflowRunQuery } from '../../../shared/types/workflow-run'
import { promptLine, publicWorkflowState, toPublicJob } from './public-job'
import { derivedRunId } from '../workflows/run-ids'
import { childStepId, iterationStepId } from '../workflows/step-scope'
import type { WorkflowNodeState, WorkflowState } from '../../../shared/types/workflow'
import type { JobStatus } from '../../../shared/types/job'

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
  /** Most the kept runs of one account, and of one workflow, may take (bytes); the oldest ended go first. */
  maxBytes?: { perUser: number, perWorkflow: number }
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
    ...(spec.failureOf ? { failureOf: spec.failureOf } : {}),
    job: toPublicJob(job),
  }
}

/** The id a child run is kept under: from its parent's job and the step that ran it (`<loop>.<n>.<step>` in a loop). */
export function childRunId(parentJobId: string, nodeId: string): string {
  return derivedRunId('workflow-child', parentJobId, nodeId)
}

/** A child run's status, from its step's and its parent's. */
function childStatus(step: WorkflowNodeState, parent: JobStatus): JobStatus {
  if (step.status === 'completed') return 'complete'
  if (step.status === 'error') return 'error'
  if (step.status === 'running' && parent === 'streaming') return 'streaming'
  return 'aborted'
}

/** The child runs of an ended workflow job (those of its loops' iterations and of its children too), as the history keeps them. */
export function childRunsOf(job: BackgroundJob): WorkflowRun[] {
  const runs: WorkflowRun[] = []
  const visit = (state: WorkflowState | undefined, prefix: string) => {
    for (const [id, step] of Object.entries(state?.nodeStates ?? {})) {
      const path = `${prefix}${id}`
      step.iterations?.forEach((iteration, index) => visit(iteration.state, iterationStepId(path, index + 1, '')))
      const child = step.child
      if (!child) continue
      visit(child.state, childStepId(path, ''))
      const runId = child.runId ?? childRunId(job.id, path)
      const status = childStatus(step, job.status)
      const states = Object.values(child.state?.nodeStates ?? {})
      const error = step.status === 'error' && step.error ? { message: step.error, kind: 'workflow' } : undefined
      const startedAt = step.startedAt ?? job.startedAt
      const finishedAt = status === 'streaming' ? undefined : step.finishedAt ?? job.completedAt ?? job.updatedAt
      const prompt = child.prompt?.split('\n')[0]?.slice(0, 120)
      runs.push({
        jobId: runId,
        workflowId: child.workflowId,
        workflowName: child.workflowName,
        ...(child.version ? { version: child.version } : {}),
        userId: job.userId,
        startedVia: 'parent',
        status,
        startedAt,
        ...(finishedAt ? { finishedAt } : {}),
        ...(prompt ? { prompt } : {}),
        stepsDone: states.filter(node => node.status === 'completed').length,
        stepCount: child.definition.nodes.length,
        ...(step.usage ? { usage: step.usage } : {}),
        ...(error ? { error } : {}),
        parentRun: { jobId: job.id, nodeId: path },
        job: {
          ...toPublicJob({ ...job, request: undefined, checkpoint: undefined }),
          id: runId,
          status,
          content: status === 'complete' ? step.output ?? '' : '',
          reasoning: '',
          startedAt,
          ...(finishedAt ? { completedAt: finishedAt } : {}),
          ...(step.usage ? { usage: step.usage } : { usage: undefined }),
          ...(error ? { error } : { error: undefined }),
          ...(child.state ? { workflowState: publicWorkflowState(child.state) } : { workflowState: undefined }),
          workflow: { workflowId: child.workflowId, ...(child.version ? { version: child.version } : {}), prompt: child.prompt ?? '', ...(child.inputs ? { inputs: child.inputs } : {}), definition: child.definition, startedVia: 'parent' },
        },
      })
    }
  }
  visit(job.workflowState, '')
  return runs
}

/** Workflow runs, kept and listed (see the file comment). */
export class WorkflowRunHistory {
  private readonly endListeners: Array<(job: BackgroundJob) => Promise<void>> = []
  private readonly deletionListeners: Array<(jobIds: string[]) => Promise<void>> = []

  constructor(private readonly options: WorkflowRunHistoryOptions) {}

  /**
   * Calls `listener` with every ended run before its end is kept (a failure handler starts there):
   * when it throws, the end is not kept, and the sweep calls it again later. It must be idempotent.
   */
  beforeEndKept(listener: (job: BackgroundJob) => Promise<void>): void {
    this.endListeners.push(listener)
  }

  /**
   * Calls `listener` with the job ids of kept runs once they are deleted (by the person, with their
   * workflow or account, past the retention or a size cap): what a run keeps elsewhere goes too.
   */
  afterRunsDeleted(listener: (jobIds: string[]) => Promise<void>): void {
    this.deletionListeners.push(listener)
  }

  /** Records a run (a workflow job) as it is now: when it starts, and when it ends (then its child runs too). */
  async record(job: BackgroundJob): Promise<void> {
    const run = runOfJob(job)
    if (!run) return
    if (job.status !== 'streaming') for (const listener of this.endListeners) await listener(job)
    await this.options.runs.saveRun(run)
    if (job.status === 'streaming') return
    for (const child of childRunsOf(job)) await this.options.runs.saveRun(child)
    await this.holdToSize(run)
  }

  /** Deletes the oldest ended runs of `run`'s workflow and of its account past their caps (a few batches; the rest at the next end). */
  private async holdToSize(run: WorkflowRun): Promise<void> {
    const caps = this.options.maxBytes
    if (!caps) return
    await this.deleteInBatches(() => this.options.runs.trimToBytes({ workflowId: run.workflowId }, caps.perWorkflow))
    await this.deleteInBatches(() => this.options.runs.trimToBytes({ userId: run.userId }, caps.perUser))
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
  async delete(jobId: string): Promise<boolean> {
    const deleted = await this.options.runs.deleteRun(jobId)
    if (deleted) await this.deleted([jobId])
    return deleted
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

  /** Deletes batch after batch (a turn of the event loop between them: requests are answered meanwhile). */
  private async deleteInBatches(deleteBatch: () => Promise<string[]>): Promise<void> {
    for (let batch = 0; batch < DELETE_BATCHES; batch++) {
      const jobIds = await deleteBatch()
      if (jobIds.length === 0) return
      await this.deleted(jobIds)
      await new Promise(resolve => setImmediate(resolve))
    }
  }

  /** Tells the deletion listeners; one that fails is logged and the others still hear (the runs are gone either way). */
  private async deleted(jobIds: string[]): Promise<void> {
    for (const listener of this.deletionListeners) {
      try {
        await listener(jobIds)
      } catch (error) {
        this.options.logger?.warn('Could not delete what deleted workflow runs kept', { runs: jobIds.length, error: (error as Error).message })
      }
    }
  }
}
