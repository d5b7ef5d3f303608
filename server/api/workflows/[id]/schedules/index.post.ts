import { workflowScheduleInputSchema } from '../../../../../shared/schemas/workflow-schedule'

/**
 * Makes a schedule for the workflow: `{cron, timezone}` or `{everyMinutes}`, what each run is given
 * (`inputs` or `prompt`, checked like the run form's: 400 naming the input), `missed`, `overlap`,
 * `enabled`, `label`. 201 with it and when it runs next; 400 for times that cannot be used (a bad
 * expression or time zone, runs closer than the server allows); 409 past 5 a workflow or the
 * per-user limit. Its runs are the workflow owner's.
 */
export default defineEventHandler(async (event) => {
  const workflow = await requireOwned(event, 'workflow', getRouterParam(event, 'id'))
  const body = await readJsonBody(event, workflowScheduleInputSchema)
  setResponseStatus(event, 201)
  return useWorkflows().schedules.create(workflow.id, workflow.userId, body)
})
