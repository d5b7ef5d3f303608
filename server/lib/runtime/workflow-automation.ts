/**
 * What starts workflow runs with nobody at the form: schedules (workflows/schedules.ts) and
 * failure handlers (workflows/failure-handlers.ts). Both start runs as the workflow's owner,
 * checked like a run from the form against today's tools, the owner's role and limits.
 */
import type { ServerConfig } from '../config/server-config'
import type { AppStores } from '../stores'
import type { BackgroundJobManager } from '../jobs/manager'
import type { AccountService } from '../auth/accounts'
import { WorkflowSchedules } from '../workflows/schedules'
import { FailureHandlerRefusal, WorkflowFailureHandlers } from '../workflows/failure-handlers'
import { FailureWebhooks } from '../workflows/failure-webhooks'
import { allowedNetworksOf } from '../tools/web/web-tools'
import type { SecretBox } from '../security/secret-box'
import type { PersonalSettings } from '../threads/personal-settings'
import { localize } from '../i18n/server-text'
import { reasonAsSentence, runnableWorkflow, type WorkflowToolLookup } from '../workflows/validate'
import { runInputsOf } from '../workflows/run-inputs'
import { httpAnswerFor } from '../http/domain-errors'
import type { WorkflowDefinition } from '../../../shared/types/workflow'
import type { WorkflowScheduleInput } from '../../../shared/types/workflow-schedule'

export interface WorkflowAutomationOptions {
  config: ServerConfig
  stores: Pick<AppStores, 'settings' | 'workflows' | 'workflowRuns' | 'jobs'>
  jobs: BackgroundJobManager
  accounts: Pick<AccountService, 'policyPrincipal'>
  /** The owner's preferences: the language their runs' notifications are written in. */
  personal: Pick<PersonalSettings, 'preferences'>
  /** Seals failure webhooks' URLs and secrets. */
  secretBox: SecretBox
  logger: { warn: (message: string, ...details: unknown[]) => void }
  /** The tools a scheduled run's or a failure handler's workflow is checked against before it starts. */
  tools: WorkflowToolLookup
}

/** The owner as admission sees them (with the language they chose), or a refusal when their account is disabled. */
async function activeOwner({ accounts, personal }: Pick<WorkflowAutomationOptions, 'accounts' | 'personal'>, userId: string) {
  const owner = await accounts.policyPrincipal(userId)
  if (owner.disabled) throw new FailureHandlerRefusal('The account that owns this workflow is disabled.')
  const { locale } = await personal.preferences(userId)
  return { userId: owner.userId, role: owner.role, ...(locale ? { locale } : {}) }
}

/** Schedules (started by the caller), failure handlers (hooked to the run history's ends) and the failure webhooks they call. */
export function createWorkflowAutomation({ config, stores, jobs, accounts, personal, secretBox, logger, tools }: WorkflowAutomationOptions): { schedules: WorkflowSchedules, failureHandlers: WorkflowFailureHandlers, failureWebhooks: FailureWebhooks } {
  const scheduledRunInputs = (definition: WorkflowDefinition, schedule: WorkflowScheduleInput) => runInputsOf(definition, { ...(schedule.prompt ? { prompt: schedule.prompt } : {}), ...(definition.inputs?.length ? { inputs: schedule.inputs ?? {} } : {}) })
  const schedules = new WorkflowSchedules({
    settings: stores.settings,
    checkInputs: async (workflowId, schedule) => {
      const workflow = await stores.workflows.getWorkflow(workflowId)
      if (workflow) scheduledRunInputs(workflow.definition, schedule)
    },
    startRun: async (schedule, jobId) => {
      const workflow = await stores.workflows.getWorkflow(schedule.workflowId)
      if (!workflow || workflow.userId !== schedule.userId) throw new Error('Its workflow was deleted.')
      const principal = await activeOwner({ accounts, personal }, schedule.userId)
      const checked = runnableWorkflow(workflow, tools)
      if (!checked.ok) throw new Error(reasonAsSentence(checked.error))
      const { prompt, inputs } = scheduledRunInputs(checked.workflow, schedule)
      return jobs.startWorkflowJob({ principal, workflowId: workflow.id, version: workflow.version, definition: checked.workflow, prompt, inputs, startedVia: 'schedule', jobId })
    },
    findRun: jobId => jobs.workflowRuns.get(jobId),
    notifyFailure: async (schedule, jobId, message) => {
      const { locale } = await personal.preferences(schedule.userId)
      const title = localize(locale ?? 'en', schedule.label ? { key: 'notes.scheduleNamedDidNotStart', params: { name: schedule.label } } : { key: 'notes.scheduleDidNotStart' })
      await stores.jobs.notifications.add({ userId: schedule.userId, jobId, threadId: `workflow:${schedule.workflowId}`, kind: 'job-error', title, body: message.slice(0, 300) })
    },
    tickMs: config.workflows.scheduleTickMs,
    graceMs: config.workflows.scheduleGraceSeconds * 1000,
    minIntervalSeconds: config.workflows.scheduleMinIntervalSeconds,
    perUser: config.workflows.schedulesPerUser,
    logger,
  })

  // Called through web_fetch's guard: public addresses, or the networks the operator allows it.
  const failureWebhooks = new FailureWebhooks({
    settings: stores.settings,
    secretBox,
    guard: { allowed: allowedNetworksOf(config.tools.web) },
    userAgent: 'or3-chat failure webhook',
  })
  const failureHandlers = new WorkflowFailureHandlers({
    webhooks: failureWebhooks,
    loadWorkflow: id => stores.workflows.getWorkflow(id),
    tools,
    // The job while it is kept, else the run history (as a schedule's findRun reads it).
    runExists: async id => (await jobs.workflowRuns.get(id)) !== null,
    startRun: async ({ userId, workflow, definition, prompt, inputs, jobId, failureOf }) => {
      const principal = await activeOwner({ accounts, personal }, userId)
      const checked = runInputsOf(definition, { prompt, ...(definition.inputs?.length ? { inputs } : {}) })
      await jobs.startWorkflowJob({ principal, workflowId: workflow.id, version: workflow.version, definition, prompt: checked.prompt, inputs: checked.inputs, startedVia: 'failure', failureOf, jobId })
    },
    // A refusal answers 4xx (limits, inputs, a model's key); a start rate, a store or anything unforeseen may pass.
    isPassing: (error) => {
      const answer = httpAnswerFor(error)
      return !answer || answer.statusCode === 429 || answer.statusCode >= 500 || answer.retryAfterSeconds !== undefined
    },
    notifications: { list: userId => stores.jobs.notifications.list(userId, { limit: 100 }), add: note => stores.jobs.notifications.add(note) },
  })
  jobs.workflowRuns.beforeEndKept(job => failureHandlers.afterRun(job))
  return { schedules, failureHandlers, failureWebhooks }
}
