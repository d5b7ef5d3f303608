/**
 * Usage as people read it: a person's own today (UTC) against their role's limits, with when it
 * resets, and by day and model over a span of days; everyone's on a day for the admin, most
 * tokens first, with their names, and over a span of days by person, group or model.
 */
import type { SessionPrincipal } from '../../../shared/types/account'
import { USAGE_REPORT_MAX_DAYS, type ModelUsage, type MyUsage, type MyUsageHistory, type UsageReport, type UsageReportRow, type UserUsageRow } from '../../../shared/types/limits'
import { RefusalError } from '../domain-error'
import type { AccountStore } from '../stores/accounts/account-store'
import type { UsageLedger } from '../stores/usage/usage-ledger'
import type { RoleLimitPolicy } from './role-limits'

/** Most rows an admin's usage listing returns. */
const MAX_LISTED_ROWS = 1_000
/** Model rows a report reads at most (a person's history: one person's days × models). */
const MAX_REPORT_ROWS = 20_000
const MAX_HISTORY_ROWS = 5_000
const DAY_MS = 86_400_000

/** Daily usage reports. */
export class UsageReports {
  constructor(
    private readonly stores: { accounts: AccountStore, usage: UsageLedger },
    private readonly limits: Pick<RoleLimitPolicy, 'forRole'>,
    /** The names of an account's groups (none for a guest). */
    private readonly groupsOf: (userId: string) => Promise<string[]> = async () => [],
  ) {}

  /** `principal`'s usage today (UTC) against its role's limits. */
  async today(principal: SessionPrincipal, now = Date.now()): Promise<MyUsage> {
    const day = new Date(now).toISOString().slice(0, 10)
    const [used, limits] = await Promise.all([this.stores.usage.getUsage(principal.id, day), this.limits.forRole(principal.role, principal.id)])
    const date = new Date(now)
    return { day, tokens: used?.tokens ?? 0, cost: used?.cost ?? 0, jobs: used?.jobs ?? 0, limits, resetsAt: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1) }
  }

  /** Everyone's usage on `day` (UTC), most tokens first, with their names (guests as "Guest"). */
  async on(day: string, limit = MAX_LISTED_ROWS): Promise<UserUsageRow[]> {
    const rows = await this.stores.usage.listUsage(day, limit)
    return Promise.all(rows.map(async (row) => {
      const account = await this.stores.accounts.getAccount(row.userId)
      return { ...row, name: account?.name ?? 'Guest', role: account?.role ?? 'guest' }
    }))
  }

  /** `userId`'s usage by day and model over the UTC days asked (`usageSpan`: 400 for a bad span), newest first. */
  async history(userId: string, span: { from?: unknown, to?: unknown }): Promise<MyUsageHistory> {
    const { from, to } = usageSpan(span)
    const rows = await this.stores.usage.listModelUsage({ userId, from, to }, MAX_HISTORY_ROWS)
    return { from, to, rows: rows.map(({ userId: _user, ...row }) => row) }
  }

  /**
   * Everyone's usage over the UTC days `from`…`to` by person, group (a person in two groups counts
   * in both; one in none under "no group") or model, most tokens first.
   */
  async report(by: UsageReport['by'], span: { from?: unknown, to?: unknown }): Promise<UsageReport> {
    const { from, to } = usageSpan(span)
    const rows = await this.stores.usage.listModelUsage({ from, to }, MAX_REPORT_ROWS)
    const people = [...new Set(rows.map(row => row.userId))]
    const who = new Map(await Promise.all(people.map(async (id) => {
      const [account, groups] = await Promise.all([this.stores.accounts.getAccount(id), by === 'group' ? this.groupsOf(id) : Promise.resolve([])])
      return [id, { name: account?.name ?? 'Guest', groups: groups.length > 0 ? groups : [NO_GROUP] }] as const
    })))
    const totals = new Map<string, UsageReportRow & { seen: Set<string> }>()
    const add = (key: string, label: string, row: ModelUsage) => {
      const total = totals.get(key) ?? { key, label, tokens: 0, cost: 0, jobs: 0, people: 0, seen: new Set<string>() }
      total.tokens += row.tokens
      total.cost += row.cost
      total.jobs += row.jobs
      total.seen.add(row.userId)
      totals.set(key, total)
    }
    for (const row of rows) {
      const person = who.get(row.userId)!
      if (by === 'model') add(row.model, row.model, row)
      else if (by === 'person') add(row.userId, person.name, row)
      else for (const group of person.groups) add(group, group, row)
    }
    const listed = [...totals.values()].sort((a, b) => b.tokens - a.tokens || a.label.localeCompare(b.label))
    return {
      from,
      to,
      by,
      rows: listed.slice(0, MAX_LISTED_ROWS).map(({ seen, ...row }) => ({ ...row, people: seen.size })),
      truncated: rows.length >= MAX_REPORT_ROWS || listed.length > MAX_LISTED_ROWS,
    }
  }

  /** `report` as a CSV file. */
  csv(report: UsageReport): string {
    return usageReportCsv(report)
  }
}

/** A span of UTC days a person asked for: `from` and `to` (`YYYY-MM-DD`), by default the last 30 days to today. */
export function usageSpan(query: { from?: unknown, to?: unknown }, now = Date.now()): { from: string, to: string } {
  const today = new Date(now).toISOString().slice(0, 10)
  const dayOf = (value: unknown, fallback: string, name: string): string => {
    if (value === undefined || value === '') return fallback
    if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value) || Number.isNaN(Date.parse(`${value}T00:00:00Z`)) || new Date(`${value}T00:00:00Z`).toISOString().slice(0, 10) !== value) {
      throw new RefusalError(`${name} must be a UTC day such as ${today}.`, 400)
    }
    return value
  }
  const to = dayOf(query.to, today, 'to')
  const from = dayOf(query.from, new Date(Date.parse(`${to}T00:00:00Z`) - 29 * DAY_MS).toISOString().slice(0, 10), 'from')
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1
  if (days < 1) throw new RefusalError('from must be on or before to.', 400)
  if (days > USAGE_REPORT_MAX_DAYS) throw new RefusalError(`A usage report covers at most ${USAGE_REPORT_MAX_DAYS} days; this asks for ${days}.`, 400)
  return { from, to }
}

/** A cell of a CSV file: quoted when it must be, and text a spreadsheet would run as a formula (`=`, `+`, `-`, `@`) kept as text. */
function csvCell(value: string | number): string {
  if (typeof value === 'number') return String(value)
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value
  return /[",\n\r]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text
}

/** A usage report as a CSV file (a header line, then one line per row). */
export function usageReportCsv(report: UsageReport): string {
  const header = [report.by, 'tokens', 'credits', 'jobs', 'people', 'from', 'to']
  const lines = report.rows.map(row => [row.label, row.tokens, Number(row.cost.toFixed(6)), row.jobs, row.people, report.from, report.to].map(csvCell).join(','))
  return `${[header.join(','), ...lines].join('\r\n')}\r\n`
}

/** The row of people in no group. */
export const NO_GROUP = '(no group)'
