/** Removes a schedule (its runs so far stay in the run history). */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  if (!await useWorkflows().schedules.remove(workflow.id, getRouterParam(event, 'scheduleId') ?? '')) throw createError({ statusCode: 404, statusMessage: 'No such schedule', message: 'This workflow has no such schedule.' })
  return { deleted: true }
})
