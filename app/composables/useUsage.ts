import { ref } from 'vue'
import type { MyUsageHistory, UsageReport } from '../../shared/types/limits'

/** A span of UTC days (`YYYY-MM-DD`); either end may be left out (the server's default: the last 30 days). */
export interface UsageSpan {
  from?: string
  to?: string
}

/** The session user's usage by day and model (Settings → Usage). */
export function useMyUsageHistory() {
  const history = ref<MyUsageHistory>()

  async function refresh(span: UsageSpan = {}): Promise<void> {
    history.value = await $fetch<MyUsageHistory>('/api/me/usage', { query: span })
  }

  return { history, refresh }
}

/** Everyone's usage over a span by person, group or model (Admin → Usage), and its CSV address. */
export function useUsageReport() {
  const report = ref<UsageReport>()

  async function refresh(by: UsageReport['by'], span: UsageSpan = {}): Promise<void> {
    report.value = await $fetch<UsageReport>('/api/admin/usage-report', { query: { by, ...span } })
  }

  /** Where the same report downloads as a CSV file. */
  function csvUrl(by: UsageReport['by'], span: UsageSpan = {}): string {
    const query = new URLSearchParams({ by, format: 'csv' })
    if (span.from) query.set('from', span.from)
    if (span.to) query.set('to', span.to)
    return `/api/admin/usage-report?${query}`
  }

  return { report, refresh, csvUrl }
}
