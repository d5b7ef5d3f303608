/**
 * Each principal's usage per UTC day (tokens, credits, jobs), which daily budgets are checked
 * against. Kept by the account store's backend (memory, sqlite, Convex); the account store
 * contract pins it.
 */
import type { DailyUsage, ModelSpend, ModelUsage } from '../../../../shared/types/limits'

/** What a job used, with each model's share (a workflow's agents may use several). */
export interface LedgerSpend {
  tokens: number
  cost: number
  byModel?: readonly ModelSpend[]
}

/** Which model rows to read: one principal's or everyone's, over the UTC days `from`…`to` (both included). */
export interface ModelUsageQuery {
  userId?: string
  from: string
  to: string
}

export interface UsageLedger {
  /**
   * Adds a job's usage to `userId`'s total of `day` (UTC, `YYYY-MM-DD`) and counts the job, and
   * each model's share to that model's row of the day; all in one transaction.
   */
  addUsage(userId: string, day: string, spent: LedgerSpend): Promise<void>
  /** The model rows of `query`, newest day first and most tokens first within a day, at most `limit`. */
  listModelUsage(query: ModelUsageQuery, limit: number): Promise<ModelUsage[]>
  getUsage(userId: string, day: string): Promise<DailyUsage | null>
  /** Everyone's usage of `day`, most tokens first, at most `limit`. */
  listUsage(day: string, limit: number): Promise<DailyUsage[]>
  /** Forgets a principal's usage, by day and by model (its account was deleted). */
  deleteUsage(userId: string): Promise<void>
}
