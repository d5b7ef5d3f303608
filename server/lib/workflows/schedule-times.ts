/**
 * When a workflow schedule runs: a cron expression read in its time zone (croner: five or six
 * fields, `L`, `#`, `W` and names; across a daylight-saving change an occurrence in the skipped
 * hour runs once, shifted, and one in the repeated hour runs once), or every N minutes counted
 * from when the schedule was made. Pure: no timers.
 */
import { Cron } from 'croner'
import type { WorkflowScheduleInput } from '../../../shared/types/workflow-schedule'

/** The times of one schedule. */
export interface ScheduleTimes {
  /** The first occurrence strictly after `after` (ms), or null when there is none. */
  nextAfter(after: number): number | null
  /** The last occurrence at or before `now`, or null when there is none (one missed while the server was down). */
  lastBy(now: number): number | null
}

/** Why a schedule's times cannot be used (answered 400). */
export class ScheduleTimesError extends Error {
  override name = 'ScheduleTimesError'
}

/** Whether `zone` is an IANA time zone this runtime knows. */
function knownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
    return true
  } catch {
    return false
  }
}

/**
 * The times of `schedule` (made at `createdAt`, for `everyMinutes`); throws `ScheduleTimesError`
 * for an expression or time zone that cannot be used, one that never runs, or one whose runs
 * come closer together than `minIntervalSeconds`.
 */
export function scheduleTimes(schedule: Partial<Pick<WorkflowScheduleInput, 'cron' | 'timezone' | 'everyMinutes'>>, createdAt: number, minIntervalSeconds: number): ScheduleTimes {
  if (schedule.everyMinutes) {
    const every = schedule.everyMinutes * 60_000
    if (every < minIntervalSeconds * 1000) throw new ScheduleTimesError(`every ${schedule.everyMinutes} minute(s) is more often than this server allows: at most one run every ${minIntervalSeconds} seconds.`)
    return {
      nextAfter: after => createdAt + (Math.floor(Math.max(0, after - createdAt) / every) + 1) * every,
      lastBy: now => now < createdAt + every ? null : createdAt + Math.floor((now - createdAt) / every) * every,
    }
  }
  const zone = schedule.timezone ?? 'UTC'
  if (!knownTimeZone(zone)) throw new ScheduleTimesError(`"${zone}" is not a time zone; use an IANA name such as Europe/Berlin or America/New_York.`)
  let cron: Cron
  try {
    cron = new Cron(schedule.cron ?? '', { timezone: zone, paused: true })
  } catch (error) {
    throw new ScheduleTimesError(`the cron expression cannot be used: ${(error as Error).message.replace(/^CronPattern: /, '')}. Write five fields (minute hour day month weekday), e.g. "0 8 * * 1-5" for 08:00 on weekdays.`)
  }
  const nextAfter = (after: number) => cron.nextRun(new Date(after))?.getTime() ?? null
  const first = nextAfter(createdAt)
  if (first === null) throw new ScheduleTimesError('the cron expression never runs (no date matches it).')
  // The closest runs of an expression are among its next few (an hourly gap inside a daily pattern too).
  const gaps: number[] = []
  for (let at = first, index = 0; index < 24; index++) {
    const next = nextAfter(at)
    if (next === null) break
    gaps.push(next - at)
    at = next
  }
  const closest = Math.min(Number.POSITIVE_INFINITY, ...gaps)
  if (closest < minIntervalSeconds * 1000) throw new ScheduleTimesError(`it runs every ${Math.round(closest / 1000)} seconds at times, more often than this server allows: at most one run every ${minIntervalSeconds} seconds.`)
  return { nextAfter, lastBy: now => cron.previousRuns(1, new Date(now + 1))[0]?.getTime() ?? null }
}
