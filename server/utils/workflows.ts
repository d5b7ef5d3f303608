import type { H3Event } from 'h3'
import { assertModelsAllowed, workflowModels } from '../lib/auth/model-access'
import { countJobStart } from '../lib/http/count-job-start'
import { throwHttpError } from '../lib/http/domain-errors'
import { userApiKeyOf } from '../lib/http/user-api-key'
import type { StartWorkflowJobInput } from '../lib/jobs/manager'
import { WORKFLOW_EXAMPLES } from '../lib/workflows/examples'
import { validateWorkflowWithRegistry, type WorkflowValidation } from '../lib/workflows/validate'
import type { BackgroundJob } from '../../shared/types/job'
import type { SavedWorkflow, WorkflowDefinition } from '../../shared/types/workflow'

/** Validates a definition against this server's tools: `{ ok, workflow }` or `{ ok: false, problems }` by node. */
export function validateWorkflowDefinition(raw: unknown): WorkflowValidation {
  return validateWorkflowWithRegistry(raw)
}

/** The definition from a request body, or a 400 that lists each problem with its node. */
export function requireValidWorkflow(raw: unknown): WorkflowDefinition {
  const result = validateWorkflowWithRegistry(raw)
  if (!result.ok) {
    throw createError({ statusCode: 400, statusMessage: `Invalid workflow: ${result.problems.map(problem => problem.message).join(' ')}`, data: { problems: result.problems } })
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

/** Runs a saved workflow for the request's user (checked again against today's tools); 4xx when it cannot start. */
export async function startWorkflowRun(event: H3Event, workflow: SavedWorkflow, prompt: string): Promise<BackgroundJob> {
  if (!useServerConfig(event).workflows.enabled) throw createError({ statusCode: 400, statusMessage: 'Workflows are switched off on this server (NUXT_WORKFLOWS_ENABLED=false).' })
  // Tools may have been removed since it was saved: check again before running.
  const definition = requireValidWorkflow(workflow.definition)
  const user = await requireSessionUser(event)
  try {
    assertModelsAllowed(useServerConfig(event).auth.models, user.role, workflowModels(definition))
    await countJobStart(event, useBackgroundJobs(), useServerConfig(event), workflow.userId)
    return await executeWorkflowInBackground({ userId: workflow.userId, workflowId: workflow.id, definition, prompt, userApiKey: userApiKeyOf(event) })
  } catch (error) {
    throwHttpError(event, error)
  }
}

/** The workflows shipped with the app, to install from the workflows page. */
export function listWorkflowExamples() {
  return Object.entries(WORKFLOW_EXAMPLES).map(([key, definition]) => ({ key, name: definition.name, description: definition.description, definition }))
}
