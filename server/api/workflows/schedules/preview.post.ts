import { workflowScheduleTimesSchema } from '../../../../shared/schemas/workflow-schedule'

/**
 * The next five times a schedule would run: `{cron, timezone}` or `{everyMinutes}` (counted from
 * now); `{ times }` in ms, for the schedule form to show in the person's time zone while they
 * write it. 400 saying why for times that cannot be used (as when the schedule is saved).
 */
export default defineEventHandler(async (event) => {
  await requireSessionUser(event)
  const body = await readJsonBody(event, workflowScheduleTimesSchema)
  return { times: useWorkflows().schedules.preview(body) }
})
