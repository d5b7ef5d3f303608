import type { H3Event } from 'h3'
import { validateWorkflow, type WorkflowValidation } from '../../lib/workflows/validate-workflow'
import type { SavedWorkflow, WorkflowStore } from './types'

let store: WorkflowStore | undefined

/** Installs the process's workflow store (server/plugins/30.background-jobs.ts does this). */
export function setWorkflowStore(next: WorkflowStore | undefined): void {
  store = next
}

/** Where saved workflows are kept. */
export function useWorkflowStore(): WorkflowStore {
  if (!store) throw createError({ statusCode: 503, statusMessage: 'The workflow store is starting; try again in a moment.' })
  return store
}

/** Validates a definition against this server's tools. */
export function validateWorkflowDefinition(raw: unknown): WorkflowValidation {
  return validateWorkflow(raw, (name) => {
    const tool = getServerTool(name)
    return Boolean(tool && tool.enabled && tool.runtime !== 'client')
  })
}

/** The definition from a request body, or a 400 that lists each problem with its node. */
export function requireValidWorkflow(raw: unknown) {
  const result = validateWorkflowDefinition(raw)
  if (!result.ok) {
    throw createError({ statusCode: 400, statusMessage: `Invalid workflow: ${result.problems.map(problem => problem.message).join(' ')}`, data: { problems: result.problems } })
  }
  return result.workflow
}

const WORKFLOW_ID = /^[\w-]{1,100}$/

/** The workflow if the session user owns it; otherwise the same 404 as an unknown id. */
export async function requireOwnedWorkflow(event: H3Event, workflowId: string | undefined): Promise<SavedWorkflow> {
  const user = await requireSessionUser(event)
  const workflow = workflowId && WORKFLOW_ID.test(workflowId) ? await useWorkflowStore().getWorkflow(workflowId) : null
  if (!workflow || workflow.userId !== user.id) throw createError({ statusCode: 404, statusMessage: 'No such workflow. It may have been deleted, or it belongs to another session.' })
  return workflow
}
