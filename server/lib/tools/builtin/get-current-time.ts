import { z } from 'zod'
import { defineServerTool } from '../define-tool'

/** The instant described in one IANA time zone, in forms both a model and a person can use. */
export interface TimeInZone {
  timezone: string
  iso: string
  local: string
  utcOffset: string
  unixMs: number
}

function resolveTimeZone(timeZone: string): string {
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone
  } catch {
    throw new Error(`Unknown time zone "${timeZone}". Use an IANA name such as "Asia/Tokyo", "America/New_York" or "UTC".`)
  }
}

/** Describes `date` in `timeZone` (which must be valid) with an ISO 8601 timestamp carrying the zone's offset. */
export function describeTimeInZone(date: Date, timeZone: string): TimeInZone {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric', month: '2-digit', day: '2-digit',
    hour: '2-digit', minute: '2-digit', second: '2-digit', hourCycle: 'h23',
    timeZoneName: 'longOffset',
  }).formatToParts(date)
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find(p => p.type === type)?.value ?? ''
  // longOffset gives "GMT+09:00", or plain "GMT" for a zero offset.
  const utcOffset = part('timeZoneName').replace('GMT', '') || '+00:00'
  return {
    timezone: timeZone,
    iso: `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}${utcOffset}`,
    local: new Intl.DateTimeFormat('en-US', { timeZone, dateStyle: 'full', timeStyle: 'long' }).format(date),
    utcOffset,
    unixMs: date.getTime(),
  }
}

export default defineServerTool({
  name: 'get_current_time',
  description: 'Get the current date and time in a time zone. Returns an ISO 8601 timestamp with the UTC offset and a readable local form.',
  parameters: z.object({
    timezone: z.string().trim().min(1).max(64).optional()
      .describe('IANA time zone, e.g. "Asia/Tokyo" or "America/New_York". Defaults to UTC.'),
  }),
  runtime: 'hybrid',
  idempotent: true,
  handler: ({ timezone }) => describeTimeInZone(new Date(), resolveTimeZone(timezone ?? 'UTC')),
})
