/**
 * A workflow's failure handler (`onFailure` in its definition): when a run fails, another of the
 * owner's workflows runs with the failure as its inputs, and/or the owner gets a notification even
 * if a tab watched the run. The run history calls `afterRun` before it keeps a run's end, so:
 *
 * - a crash before the handler started leaves the run's end unkept: the history's sweep keeps it
 *   later (from its job) and calls `afterRun` again;
 * - the handler's run has an id made from the failed run's (`failureRunId`): found in the jobs or
 *   the run history, it is not started again; two instances starting it at once meet the store's
 *   refusal of a second job with that id;
 * - a handler that cannot start (its workflow deleted or no longer valid, inputs that do not fit, a
 *   limit) leaves the owner a notification that says why, once; a passing obstacle (the store, a
 *   start rate, running caps) throws, and the sweep tries again.
 *
 * A run started by a failure handler that fails starts nothing further (no loop of handlers).
 */
import type { BackgroundJob, JobNotification } from '../../../shared/types/job'
import type { SavedWorkflow, WorkflowDefinition } from '../../../shared/types/workflow'
import type { NewJobNotification } from '../stores/jobs/job-store'
import { derivedRunId } from './run-ids'
import { MAX_INPUT_LONG_TEXT_CHARS, MAX_INPUT_TEXT_CHARS } from '../../../shared/schemas/workflow'
import { MAX_RUN_PROMPT_CHARS } from './run-inputs'
import { reasonAsSentence, runnableWorkflow, type WorkflowToolLookup } from './validate'

/** The named inputs a failure handler's workflow may declare, and what each is given. */
export const FAILURE_INPUTS = ['run_id', 'workflow_id', 'workflow_name', 'step', 'error', 'run_prompt', 'run_inputs', 'run_url'] as const
type FailureInput = typeof FAILURE_INPUTS[number]

/** What a failure handler needs from the rest of the server. */
export interface FailureHandlerOptions {
  /** A saved workflow by id. */
  loadWorkflow: (workflowId: string) => Promise<SavedWorkflow | null>
  /** The tools a handler's workflow is checked against before it runs. */
  tools: WorkflowToolLookup
  /** Whether a run (a job, or a kept run) with this id exists. */
  runExists: (jobId: string) => Promise<boolean>
  /** Starts the handler's run as the failed run's owner, under `jobId`; throws a refusal or a passing obstacle. */
  startRun: (run: { userId: string, workflow: SavedWorkflow, definition: WorkflowDefinition, prompt: string, inputs: Record<string, string>, jobId: string, failureOf: string }) => Promise<unknown>
  /** Whether an error from `startRun` is a passing obstacle (try again later), not a refusal. */
  isPassing: (error: unknown) => boolean
  notifications: {
    list: (userId: string) => Promise<JobNotification[]>
    add: (notification: NewJobNotification) => Promise<unknown>
  }
  /** The workflows' failure webhooks (failure-webhooks.ts): called with the failure, as message `id`; true once delivered, false with none. */
  webhooks?: { call: (workflowId: string, userId: string, id: string, payload: Record<string, unknown>) => Promise<boolean> }
}

/** A handler that may not start, said in words for its owner (never tried again). */
export class FailureHandlerRefusal extends Error {}

/** The id a failed run's webhook call is sent as (`webhook-id`): the same for every retry, and after a crash. */
export function failureWebhookId(jobId: string): string {
  return derivedRunId('workflow-failure-webhook', jobId)
}

/** The id of the run a failure handler starts for the failed run `jobId` (the same on every instance and after a crash). */
export function failureRunId(jobId: string): string {
  return derivedRunId('workflow-failure', jobId)
}

/** What a failed run tells its handler. */
export function failureOf(job: BackgroundJob): Record<FailureInput, string> {
  const spec = job.request!.workflow!
  const stepId = job.workflowState?.failedNodeId
  const node = stepId ? spec.definition.nodes.find(item => item.id === stepId) : undefined
  return {
    run_id: job.id,
    workflow_id: spec.workflowId,
    workflow_name: spec.definition.name,
    step: node ? (node.label ? `${node.label} (${node.id})` : node.id) : '',
    error: job.error?.message ?? 'The run failed.',
    run_prompt: spec.prompt,
    run_inputs: JSON.stringify(spec.inputs ?? {}),
    run_url: `/workflows/runs/${job.id}`,
  }
}

/** Failure handlers, run after a workflow run fails (see the file comment). */
export class WorkflowFailureHandlers {
  constructor(private readonly options: FailureHandlerOptions) {}

  /** Runs `job`'s failure handler if it is a failed run whose workflow names one; idempotent. */
  async afterRun(job: BackgroundJob): Promise<void> {
    const spec = job.request?.workflow
    if (job.type !== 'workflow' || job.status !== 'error' || !spec || spec.startedVia === 'failure') return
    const handler = spec.definition.onFailure
    const failed = failureOf(job)
    if (handler?.notify) await this.notifyOnce(job, job.id, { kind: 'job-error', title: `The run of “${failed.workflow_name}” failed`, body: failed.error.slice(0, 300) })
    if (handler?.workflowId) await this.startHandler(job, handler.workflowId, failed)
    await this.callWebhook(job, failed)
  }

  /** Sends the failure to the workflow's webhook, if it has one; one that cannot be reached tells the owner once. */
  private async callWebhook(job: BackgroundJob, failed: Record<FailureInput, string>): Promise<void> {
    const webhooks = this.options.webhooks
    if (!webhooks) return
    const id = failureWebhookId(job.id)
    try {
      await webhooks.call(failed.workflow_id, job.userId, id, { type: 'workflow.run.failed', ...failed, failed_at: job.completedAt ?? job.updatedAt })
    } catch (error) {
      await this.notifyOnce(job, id, { kind: 'job-error', title: `The failure webhook of “${failed.workflow_name}” could not be reached`, body: (error as Error).message.slice(0, 300) })
    }
  }

  private async startHandler(job: BackgroundJob, workflowId: string, failed: Record<FailureInput, string>): Promise<void> {
    const jobId = failureRunId(job.id)
    if (await this.options.runExists(jobId)) return
    const refused = (why: string) => this.notifyOnce(job, jobId, { kind: 'job-error', title: `The failure workflow of “${failed.workflow_name}” did not start`, body: why.slice(0, 300) })
    const saved = await this.options.loadWorkflow(workflowId)
    if (!saved || saved.userId !== job.userId) return refused(`There is no workflow “${workflowId}” of yours to run (was it deleted?). Choose another in the workflow's settings.`)
    const checked = runnableWorkflow(saved, this.options.tools)
    if (!checked.ok) return refused(reasonAsSentence(checked.error))
    try {
      await this.options.startRun({ userId: job.userId, workflow: saved, definition: checked.workflow, ...handlerInputs(checked.workflow, failed), jobId, failureOf: job.id })
    } catch (error) {
      // Two instances started it at once: the other's run is the one.
      if (await this.options.runExists(jobId)) return
      if (!(error instanceof FailureHandlerRefusal) && this.options.isPassing(error)) throw error
      return refused((error as Error).message)
    }
  }

  /** Tells the failed run's owner about `jobId` unless a note of that kind is already there (a second call after a crash, or the unwatched run's own). */
  private async notifyOnce(job: BackgroundJob, jobId: string, note: Pick<NewJobNotification, 'kind' | 'title' | 'body'>): Promise<void> {
    const existing = await this.options.notifications.list(job.userId)
    if (existing.some(item => item.jobId === jobId && item.kind === note.kind)) return
    await this.options.notifications.add({ userId: job.userId, jobId, threadId: job.threadId, ...note })
  }
}

/** The handler's prompt (the failure in words) and the named inputs it declares among `FAILURE_INPUTS`, each held to its type's length. */
function handlerInputs(definition: WorkflowDefinition, failed: Record<FailureInput, string>): { prompt: string, inputs: Record<string, string> } {
  const inputs: Record<string, string> = {}
  for (const input of definition.inputs ?? []) {
    if (!(FAILURE_INPUTS as readonly string[]).includes(input.name)) continue
    inputs[input.name] = failed[input.name as FailureInput].slice(0, input.type === 'long-text' ? MAX_INPUT_LONG_TEXT_CHARS : MAX_INPUT_TEXT_CHARS)
  }
  const where = failed.step ? ` at step “${failed.step}”` : ''
  const prompt = `The run ${failed.run_id} of the workflow “${failed.workflow_name}” failed${where}: ${failed.error}\n\nIts prompt: ${failed.run_prompt}\nIts inputs: ${failed.run_inputs}`
  return { prompt: prompt.slice(0, MAX_RUN_PROMPT_CHARS), inputs }
}
