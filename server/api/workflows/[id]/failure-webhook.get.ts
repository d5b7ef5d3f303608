/** Whether the workflow calls a URL when a run fails, and which host (never the URL or its secret). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  return useWorkflows().failureWebhooks.status(workflow.id)
})
