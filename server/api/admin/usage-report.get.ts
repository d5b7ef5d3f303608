import type { UsageReport } from '~~/shared/types/limits'

const GROUPINGS = ['person', 'group', 'model'] as const

/**
 * Everyone's usage over a span of UTC days (`?from=&to=`, default the last 30; at most 92) by
 * `?by=person|group|model`, most tokens first; `?format=csv` downloads it as a CSV file. Admins only.
 */
export default defineEventHandler(async (event): Promise<UsageReport | string> => {
  await requireSessionUser(event, { role: 'admin' })
  const query = getQuery(event)
  const by = GROUPINGS.find(grouping => grouping === (query.by ?? 'person'))
  if (!by) throw createError({ statusCode: 400, statusMessage: 'Bad request', message: 'by must be person, group or model.' })
  const { usage } = useAccounts()
  const report = await usage.report(by, query)
  if (query.format !== 'csv') return report
  setResponseHeaders(event, {
    'Content-Type': 'text/csv; charset=utf-8',
    'Content-Disposition': `attachment; filename="usage-by-${by}-${report.from}-to-${report.to}.csv"`,
    'Cache-Control': 'private, no-store',
  })
  return usage.csv(report)
})
