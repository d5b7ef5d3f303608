import { describe, expect, it } from 'vitest'
import { scheduleTimes, ScheduleTimesError } from '../../../server/lib/workflows/schedule-times'

const iso = (ms: number | null) => ms === null ? null : new Date(ms).toISOString()
const at = (text: string) => Date.parse(text)

/** The next `count` occurrences after `from`. */
function occurrences(times: ReturnType<typeof scheduleTimes>, from: string, count: number): Array<string | null> {
  const found: Array<string | null> = []
  let after = at(from)
  for (let index = 0; index < count; index++) {
    const next = times.nextAfter(after)
    found.push(iso(next))
    if (next === null) break
    after = next
  }
  return found
}

describe('schedule times', () => {
  it('reads a cron expression in its time zone', () => {
    const weekdays = scheduleTimes({ cron: '0 8 * * 1-5', timezone: 'America/New_York' }, at('2026-11-20T00:00:00Z'), 60)
    // Friday 20 November 2026 08:00 EST is 13:00 UTC; then Monday.
    expect(occurrences(weekdays, '2026-11-20T00:00:00Z', 2)).toEqual(['2026-11-20T13:00:00.000Z', '2026-11-23T13:00:00.000Z'])
    expect(iso(weekdays.lastBy(at('2026-11-22T12:00:00Z')))).toBe('2026-11-20T13:00:00.000Z')
    expect(iso(scheduleTimes({ cron: '0 8 * * *', timezone: 'UTC' }, 0, 60).nextAfter(at('2026-11-25T08:00:00Z')))).toBe('2026-11-26T08:00:00.000Z')
  })

  it('runs a daily time once across a daylight-saving change, in the skipped hour too', () => {
    const nightly = scheduleTimes({ cron: '30 2 * * *', timezone: 'Europe/Berlin' }, at('2026-03-27T00:00:00Z'), 60)
    // 29 March 2026: 02:00 → 03:00 in Berlin, so 02:30 does not exist that day; it runs once, an hour on.
    expect(occurrences(nightly, '2026-03-27T12:00:00Z', 3)).toEqual(['2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z'])
    // 25 October 2026: 03:00 → 02:00, so 02:30 comes twice (00:30 and 01:30 UTC); it runs once, at the first.
    expect(occurrences(nightly, '2026-10-24T12:00:00Z', 2)).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z'])
  })

  it('counts every N minutes from when the schedule was made', () => {
    const made = at('2026-11-25T10:00:20Z')
    const every = scheduleTimes({ everyMinutes: 15 }, made, 60)
    expect(occurrences(every, '2026-11-25T10:00:20Z', 2)).toEqual(['2026-11-25T10:15:20.000Z', '2026-11-25T10:30:20.000Z'])
    expect(every.lastBy(made + 10_000)).toBeNull()
    expect(iso(every.lastBy(at('2026-11-25T11:01:00Z')))).toBe('2026-11-25T11:00:20.000Z')
    expect(iso(every.lastBy(at('2026-11-25T11:00:19Z')))).toBe('2026-11-25T10:45:20.000Z')
  })

  it.each([
    ['a field out of range', { cron: '61 * * * *' }, /cannot be used: .*minute/],
    ['an unknown time zone', { cron: '0 8 * * *', timezone: 'Mars/Olympus_Mons' }, /"Mars\/Olympus_Mons" is not a time zone/],
    ['an expression that never runs', { cron: '0 0 31 2 *' }, /never runs/],
    ['runs closer than the minimum', { cron: '*/10 * * * * *' }, /every 10 seconds at times, more often than this server allows: at most one run every 60 seconds/],
    ['minutes closer than the minimum', { everyMinutes: 1 }, /at most one run every 120 seconds/, 120],
  ])('refuses %s, saying why', (_label, schedule, message, minimum = 60) => {
    expect(() => scheduleTimes(schedule, at('2026-11-25T00:00:00Z'), minimum)).toThrow(ScheduleTimesError)
    expect(() => scheduleTimes(schedule, at('2026-11-25T00:00:00Z'), minimum)).toThrow(message)
  })
})
