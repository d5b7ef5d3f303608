import { runInputsOf } from '../lib/workflows/run-inputs'
import { resumeStateFrom } from '../lib/workflows/resume-from'
import type { H3Event } from 'h3'
import { workflowKnowledgeBases, workflowToolDenials } from '../lib/workflows/tool-access'
import { assertModelsAllowed } from '../lib/models/model-access'
import { jobPrincipal } from '../lib/http/job-principal'
import { workflowModels } from '../lib/workflows/model-calls'
import { assertWorkflowWithinLimits } from '../lib/workflows/step-budget'
import { throwHttpError } from '../lib/http/domain-errors'
import { userApiKeyOf } from '../lib/http/user-api-key'
import type { StartWorkflowJobInput } from '../lib/jobs/manager'
import { validateWorkflowWithTools, type WorkflowValidation } from '../lib/workflows/validate'
import type { BackgroundJob, PublicJob } from '../../shared/types/job'
import type { SavedWorkflow, WorkflowDefinition } from '../../shared/types/workflow'
import type { SessionPrincipal } from '../../shared/types/account'

function invalidWorkflow(problems: Extract<WorkflowValidation, { ok: false }>['problems']) {
  return createError({ statusCode: 400, statusMessage: `Invalid workflow: ${problems.map(problem => problem.message).join(' ')}`, data: { problems } })
}

/**
 * The definition from a request body, or a 400 that lists each problem with its node; then, for
 * the request's user, 403 for a model their role may not use and 400 when one run could make more
 * model calls, or more steps, than their role allows (so a workflow is refused when saved, not only when run).
 */
export async function requireValidWorkflow(event: H3Event, raw: unknown): Promise<WorkflowDefinition> {
  const result = validateWorkflowWithTools(raw, useWorkflows().tools)
  if (!result.ok) throw invalidWorkflow(result.problems)
  const user = await requireSessionUser(event)
  const denied = workflowToolDenials(result.workflow, await useToolSources().policy.accessFor({ userId: user.id, role: user.role, name: user.role === 'guest' ? undefined : user.name }))
  if (denied.length > 0) throw invalidWorkflow(denied)
  // An agent step searches knowledge bases its owner may read (each search checks again).
  for (const { nodeId, baseId } of workflowKnowledgeBases(result.workflow)) {
    try {
      await usePersonal().knowledge.open(user.id, baseId)
    } catch (error) {
      throw invalidWorkflow([{ nodeId, message: `Node "${nodeId}" searches the knowledge base “${baseId}”: ${(error as Error).message}` }])
    }
  }
  // A failure handler is another workflow of the same person.
  const handlerId = result.workflow.onFailure?.workflowId
  if (handlerId) {
    const handler = await useWorkflows().saved.getWorkflow(handlerId)
    if (!handler || handler.userId !== user.id) throw invalidWorkflow([{ message: `onFailure: there is no workflow “${handlerId}” of yours to run when a run fails; choose one of your workflows.` }])
  }
  const limits = await useAccounts().limits.forRole(user.role, user.id)
  try {
    assertModelsAllowed(limits.models, user.role, workflowModels(result.workflow))
    assertWorkflowWithinLimits(result.workflow, limits)
  } catch (error) {
    throwHttpError(event, error)
  }
  return result.workflow
}

/**
 * The seed's `executeWorkflowInBackground`: starts a workflow run as a background job of type
 * `workflow` and returns the job at once; its `workflowState` is persisted on every node
 * transition and it resumes after a restart. Throws the job manager's start errors.
 */
export function executeWorkflowInBackground(input: StartWorkflowJobInput): Promise<BackgroundJob> {
  return useBackgroundJobs().startWorkflowJob(input)
}

/**
 * Runs a saved workflow for the request's user with what the request gave (a prompt, or its named
 * inputs, checked against what it declares), checked again against today's tools; 4xx when it
 * cannot start. `rerunOf`: the run it runs again ("Run again", recorded with it). With `resumeFrom`, the new run keeps the steps of that run before `nodeId` and runs
 * the rest (`workflow` is then the definition that run ran).
 */
export async function startWorkflowRun(event: H3Event, workflow: SavedWorkflow, given: { prompt?: string, inputs?: Record<string, unknown>, rerunOf?: string, resumeFrom?: { run: Pick<PublicJob, 'id' | 'workflowState' | 'status'>, nodeId: string }, byWebhook?: SessionPrincipal, jobId?: string }): Promise<BackgroundJob> {
  if (!useServerConfig(event).workflows.enabled) throw createError({ statusCode: 400, statusMessage: 'Workflows are switched off on this server (NUXT_WORKFLOWS_ENABLED=false).' })
  // Tools may have been removed since it was saved: check again before running (admission
  // checks the models and the cost bound again, for the role the user has now).
  const definition = validateWorkflowWithTools(workflow.definition, useWorkflows().tools)
  if (!definition.ok) throw invalidWorkflow(definition.problems)
  // A webhook's run is its owner's; any other is the request's user's.
  const user = given.byWebhook ?? await requireSessionUser(event)
  try {
    const { prompt, inputs } = runInputsOf(definition.workflow, given)
    const resume = given.resumeFrom ? { jobId: given.resumeFrom.run.id, nodeId: given.resumeFrom.nodeId, state: resumeStateFrom(definition.workflow, given.resumeFrom.run.workflowState, given.resumeFrom.run.status, given.resumeFrom.nodeId) } : undefined
    // How it started, for the run history: a script with an API token, a resumed run, "Run again", or the run form.
    const startedVia = given.byWebhook ? 'webhook' : getRequestHeader(event, 'authorization')?.startsWith('Bearer ') ? 'api' : resume ? 'resume' : given.rerunOf ? 'again' : 'form'
    const principal = jobPrincipal(event, useServerConfig(event), user, workflow.userId)
    // A webhook's caller is a machine: the run's notifications are in its owner's saved language.
    if (given.byWebhook) principal.locale = (await usePersonal().settings.preferences(workflow.userId)).locale ?? 'en'
    return await executeWorkflowInBackground({
      principal,
      workflowId: workflow.id,
      version: workflow.version,
      definition: definition.workflow,
      prompt,
      inputs,
      startedVia,
      ...(given.rerunOf ? { rerunOf: given.rerunOf } : {}),
      ...(resume ? { resume } : {}),
      ...(given.jobId ? { jobId: given.jobId } : {}),
      userApiKey: userApiKeyOf(event),
    })
  } catch (error) {
    throwHttpError(event, error)
  }
}
