/** A workflow's saved versions, newest first (number, time, who, note; without their definitions). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  return { current: workflow.version, versions: await useWorkflows().saved.listWorkflowVersions(workflow.id) }
})
