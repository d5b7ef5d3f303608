/**
 * Each principal's usage per UTC day (tokens, credits, jobs), which daily budgets are checked
 * against. Kept by the account store's backend (memory, sqlite, Convex); the account store
 * contract pins it.
 */
import type { DailyUsage } from '../../../../shared/types/limits'

export interface UsageLedger {
  /** Adds a job's usage to `userId`'s total of `day` (UTC, `YYYY-MM-DD`) and counts the job; atomic per row. */
  addUsage(userId: string, day: string, spent: { tokens: number, cost: number }): Promise<void>
  getUsage(userId: string, day: string): Promise<DailyUsage | null>
  /** Everyone's usage of `day`, most tokens first, at most `limit`. */
  listUsage(day: string, limit: number): Promise<DailyUsage[]>
  /** Forgets a principal's usage (its account was deleted). */
  deleteUsage(userId: string): Promise<void>
}
