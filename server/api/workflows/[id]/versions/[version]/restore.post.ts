import { z } from 'zod'

const versionSchema = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER)

/**
 * Restores a saved version as the workflow's next version (nothing is lost: the versions in
 * between stay). Checked again like a save: tools, models or limits may have changed since.
 */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const version = versionSchema.safeParse(getRouterParam(event, 'version'))
  if (!version.success) throw createError({ statusCode: 400, statusMessage: 'A version is a whole number from 1, as GET /api/workflows/:id/versions lists them.' })
  const store = useWorkflows().saved
  const found = await store.getWorkflowVersion(workflow.id, version.data)
  if (!found) throw createError({ statusCode: 404, statusMessage: `Version ${version.data} of this workflow is not kept; GET /api/workflows/${workflow.id}/versions lists those that are.` })
  const definition = await requireValidWorkflow(event, found.definition)
  await store.updateWorkflow(workflow.id, definition, { by: workflow.userId, note: `Restored version ${version.data}` })
  return store.getWorkflow(workflow.id)
})
