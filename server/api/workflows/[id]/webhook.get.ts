/** Whether the workflow has a webhook, and whether its bodies must be signed (never its secrets). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  return useWorkflows().webhooks.status(workflow.id)
})
