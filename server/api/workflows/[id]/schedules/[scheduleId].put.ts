import { workflowScheduleInputSchema } from '../../../../../shared/schemas/workflow-schedule'

/** Replaces a schedule's settings (checked as when made); its next run is counted again from now. 404 for another workflow's. */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, workflowScheduleInputSchema)
  return useWorkflows().schedules.update(workflow.id, getRouterParam(event, 'scheduleId') ?? '', body)
})
