/**
 * Usage as people read it: a person's own today (UTC) against their role's limits, with when it
 * resets, and everyone's on a day for the admin, most tokens first, with their names.
 */
import type { SessionPrincipal } from '../../../shared/types/account'
import type { MyUsage, UserUsageRow } from '../../../shared/types/limits'
import type { AccountStore } from '../stores/accounts/account-store'
import type { UsageLedger } from '../stores/usage/usage-ledger'
import type { RoleLimitPolicy } from './role-limits'

/** Most rows an admin's usage listing returns. */
const MAX_LISTED_ROWS = 1_000

/** Daily usage reports. */
export class UsageReports {
  constructor(private readonly stores: { accounts: AccountStore, usage: UsageLedger }, private readonly limits: Pick<RoleLimitPolicy, 'forRole'>) {}

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
}
