/** Removes the workflow's webhook: its URL stops working at once. */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  await useWorkflows().webhooks.remove(workflow.id)
  return { deleted: true }
})
