/**
 * What a person sets for a workflow schedule: a cron expression in a time zone, or every N
 * minutes; what each run is given (the workflow's named inputs, or a prompt); what happens to an
 * occurrence missed while the server was down, and to one that comes while the last run still runs.
 */
import { z } from 'zod'
import { MAX_INPUT_LONG_TEXT_CHARS } from './workflow'

export const MAX_SCHEDULES_PER_WORKFLOW = 5

const times = {
  /** Five fields (minute hour day month weekday), or six with seconds first; croner's syntax (`L`, `#`, `W`, names). */
  cron: z.string().trim().min(9).max(120).optional(),
  /** An IANA time zone the cron expression is read in (default UTC). */
  timezone: z.string().trim().min(1).max(64).default('UTC'),
  /** Every N minutes from when it was made (instead of `cron`). */
  everyMinutes: z.number().int().min(1).max(525_600).optional(),
}
const eitherCronOrEvery = (schedule: { cron?: string, everyMinutes?: number }, context: z.RefinementCtx) => {
  if (Boolean(schedule.cron) === Boolean(schedule.everyMinutes)) context.addIssue({ code: 'custom', path: ['cron'], message: 'give either cron (a cron expression) or everyMinutes' })
}

/** When a schedule runs, alone (its preview). */
export const workflowScheduleTimesSchema = z.object(times).strict().superRefine(eitherCronOrEvery)

export const workflowScheduleInputSchema = z.object({
  ...times,
  /** The workflow's named inputs for each run (text, numbers, yes/no). */
  inputs: z.record(z.string().max(40), z.union([z.string().max(MAX_INPUT_LONG_TEXT_CHARS), z.number().finite(), z.boolean()])).refine(inputs => Object.keys(inputs).length <= 20, 'at most 20 inputs').optional(),
  /** The prompt of each run, for a workflow without named inputs. */
  prompt: z.string().max(MAX_INPUT_LONG_TEXT_CHARS).optional(),
  /** An occurrence missed while the server was down: run it once when the server is back, or skip it. */
  missed: z.enum(['run-once', 'skip']).default('run-once'),
  /** Start a run while the schedule's last run is still going (off: that occurrence is skipped). */
  overlap: z.boolean().default(false),
  enabled: z.boolean().default(true),
  /** What the schedule is for, shown in its list. */
  label: z.string().trim().max(80).optional(),
}).strict().superRefine(eitherCronOrEvery)

export type WorkflowScheduleInput = z.infer<typeof workflowScheduleInputSchema>
