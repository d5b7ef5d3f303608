/** The workflow's schedules, oldest first: when each runs next, and how its last occurrence went. */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  return { schedules: await useWorkflows().schedules.list(workflow.id) }
})
