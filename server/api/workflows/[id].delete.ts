/** Deletes a saved workflow (runs already started finish). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  await useWorkflowStore().deleteWorkflow(workflow.id)
  return { deleted: true }
})
