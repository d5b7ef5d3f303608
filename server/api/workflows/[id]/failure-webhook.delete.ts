/** Stops calling a URL when a run of the workflow fails. */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  await useWorkflows().failureWebhooks.remove(workflow.id)
  return { deleted: true }
})
