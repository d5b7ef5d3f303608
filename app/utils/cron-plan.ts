/**
 * A cron expression as the schedule form's plain choices: every day, Monday to Friday, one day a
 * week or one day a month, at a time; anything else is a custom expression, edited as text.
 */
import { formatDate } from './i18n'

/** The days of the week in cron's order (0 is Sunday), named in the person's language. */
export function weekdayNames(): string[] {
  // 7 January 2024 was a Sunday.
  return Array.from({ length: 7 }, (_, day) => formatDate(Date.UTC(2024, 0, 7 + day), { weekday: 'long', timeZone: 'UTC' }))
}

export interface CronPlan {
  kind: 'daily' | 'weekdays' | 'weekly' | 'monthly' | 'custom'
  /** "HH:MM". */
  time: string
  weekday: number
  monthDay: number
}

/** The cron expression of a plan (a custom one has none of its own: the text is kept as written). */
export function cronOf(plan: CronPlan): string {
  const [hours, minutes] = (/^(\d{1,2}):(\d{2})$/.exec(plan.time) ?? [, '8', '00']).slice(1).map(Number)
  const at = `${minutes} ${hours}`
  switch (plan.kind) {
    case 'weekdays': return `${at} * * 1-5`
    case 'weekly': return `${at} * * ${plan.weekday}`
    case 'monthly': return `${at} ${plan.monthDay} * *`
    default: return `${at} * * *`
  }
}

/** The plan an expression is, or a custom one. */
export function readCron(cron: string): CronPlan {
  const plan: CronPlan = { kind: 'custom', time: '08:00', weekday: 1, monthDay: 1 }
  const fields = /^(\d{1,2}) (\d{1,2}) (\*|\d{1,2}) \* (\*|1-5|[0-6])$/.exec(cron.trim())
  if (!fields) return plan
  const [, minute, hour, day, weekday] = fields
  if (Number(minute) > 59 || Number(hour) > 23) return plan
  plan.time = `${hour!.padStart(2, '0')}:${minute!.padStart(2, '0')}`
  if (day !== '*') {
    if (weekday !== '*' || Number(day) < 1 || Number(day) > 28) return plan
    return { ...plan, kind: 'monthly', monthDay: Number(day) }
  }
  if (weekday === '*') return { ...plan, kind: 'daily' }
  if (weekday === '1-5') return { ...plan, kind: 'weekdays' }
  return { ...plan, kind: 'weekly', weekday: Number(weekday) }
}
