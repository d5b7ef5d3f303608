/** Deletes a saved workflow, its versions, its webhook, its schedules and its kept runs (runs under way finish, and are kept until the retention). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  await useWorkflows().saved.deleteWorkflow(workflow.id)
  await useWorkflows().webhooks.remove(workflow.id)
  await useWorkflows().failureWebhooks.remove(workflow.id)
  await useWorkflows().schedules.removeAllOf(workflow.id)
  await useBackgroundJobs().workflowRuns.deleteOfWorkflow(workflow.id)
  return { deleted: true }
})
