import { z } from 'zod'

const versionSchema = z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER)

/** One saved version of a workflow, with its definition (404 when it is not kept). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const version = versionSchema.safeParse(getRouterParam(event, 'version'))
  if (!version.success) throw createError({ statusCode: 400, statusMessage: 'A version is a whole number from 1, as GET /api/workflows/:id/versions lists them.' })
  const found = await useWorkflows().saved.getWorkflowVersion(workflow.id, version.data)
  if (!found) throw createError({ statusCode: 404, statusMessage: `Version ${version.data} of this workflow is not kept; GET /api/workflows/${workflow.id}/versions lists those that are.` })
  return found
})
