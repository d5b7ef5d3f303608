/**
 * "Run now": starts a run of the workflow with the schedule's prompt or inputs, at once, as its
 * owner; 202 `{ jobId, runPath }`. The schedule's next run stays as it was. 404 for another
 * workflow's schedule; the run form's refusals otherwise (limits, inputs that no longer fit).
 */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const job = await useWorkflows().schedules.runNow(workflow.id, getRouterParam(event, 'scheduleId') ?? '')
  setResponseStatus(event, 202)
  return { jobId: job.id, runPath: `/workflows/runs/${job.id}` }
})
