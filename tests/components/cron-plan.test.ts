import { describe, expect, it } from 'vitest'
import { cronOf, readCron } from '../../app/utils/cron-plan'

describe('the schedule form\'s cron choices', () => {
  it.each([
    [{ kind: 'daily' as const, time: '07:30', weekday: 1, monthDay: 1 }, '30 7 * * *'],
    [{ kind: 'weekdays' as const, time: '08:00', weekday: 1, monthDay: 1 }, '0 8 * * 1-5'],
    [{ kind: 'weekly' as const, time: '18:05', weekday: 5, monthDay: 1 }, '5 18 * * 5'],
    [{ kind: 'monthly' as const, time: '00:00', weekday: 1, monthDay: 15 }, '0 0 15 * *'],
  ])('writes %o as "%s" and reads it back', (plan, cron) => {
    expect(cronOf(plan)).toBe(cron)
    expect(readCron(cron)).toEqual(plan)
  })

  it.each(['*/5 * * * *', '0 8 * * 1,3', '0 8 31 * *', '0 25 * * *', '0 8 1 * 1', '@daily', `${'1 '.repeat(5_000)}`])('keeps "%s" as a custom expression', (cron) => {
    expect(readCron(cron).kind).toBe('custom')
  })
})
