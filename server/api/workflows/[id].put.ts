/** Replaces a workflow's definition (`{ definition }`). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwnedWorkflow(event, getRouterParam(event, 'id'))
  const body = await readBody<{ definition?: unknown }>(event).catch(() => undefined)
  const definition = requireValidWorkflow(body?.definition)
  await useWorkflowStore().updateWorkflow(workflow.id, definition)
  return useWorkflowStore().getWorkflow(workflow.id)
})
