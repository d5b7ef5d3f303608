/**
 * Daily budgets: the tokens and credits each principal may use per UTC day (its role's
 * `dailyTokens` / `dailyCost`, 0 for none), counted from the usage every job reports when it
 * ends (the usage ledger in the account store, shared by every instance). A start with nothing
 * left is refused with 402; a running job gets what was left at its start as its allowance
 * (run/budget-meter.ts), and stops when it has used it, keeping its text.
 */
import type { DailyUsage, RoleLimits } from '../../../../shared/types/limits'

/** Where usage is kept (the account store implements it). */
export interface UsageLedger {
  /** Adds to `userId`'s usage of `day`. */
  addUsage(userId: string, day: string, spent: SpentBudget): Promise<void>
  getUsage(userId: string, day: string): Promise<DailyUsage | null>
}

/** What a job used: tokens (prompt + completion) and credits. */
export interface SpentBudget {
  tokens: number
  cost: number
}

/** What a job may still use: `Infinity` where the role has no budget. */
export interface Allowance {
  tokens: number
  cost: number
}

/** The UTC day of `now`, as the ledger keys it (`YYYY-MM-DD`). */
export function utcDay(now: number): string {
  return new Date(now).toISOString().slice(0, 10)
}

/** The next UTC midnight after `now`, when budgets start again. */
export function nextUtcMidnight(now: number): number {
  const date = new Date(now)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1)
}

/** Raised when a principal's daily budget is used up; answered 402 with `Retry-After` until midnight UTC. */
export class BudgetExceededError extends Error {
  override name = 'BudgetExceededError'
  constructor(readonly budget: 'tokens' | 'cost', readonly limit: number, readonly resetsAt: number, now: number) {
    super(budgetMessage(budget, limit, resetsAt))
    this.retryAfterSeconds = Math.max(1, Math.ceil((resetsAt - now) / 1000))
  }

  readonly retryAfterSeconds: number

  static isInstance(error: unknown): error is BudgetExceededError {
    return error instanceof Error && error.name === 'BudgetExceededError'
  }
}

/** Words for a used-up budget, shared by the 402 answer and the error of a job stopped by it. */
export function budgetMessage(budget: 'tokens' | 'cost', limit: number | undefined, resetsAt: number): string {
  const unit = budget === 'tokens' ? 'tokens' : 'credits'
  const what = limit === undefined ? `daily budget of ${unit}` : `daily budget of ${limit.toLocaleString('en')} ${unit}`
  return `You have used your ${what}. It starts again at ${new Date(resetsAt).toISOString().slice(11, 16)} UTC; an admin can raise it.`
}

/** Reads and records principals' daily usage against their budgets. */
export class DailyBudgets {
  constructor(private readonly ledger: UsageLedger, private readonly now: () => number = Date.now) {}

  /** What `userId` may still use today under `limits`; throws `BudgetExceededError` when a budget is used up. */
  async allowance(userId: string, limits: Pick<RoleLimits, 'dailyTokens' | 'dailyCost'>): Promise<Allowance> {
    if (limits.dailyTokens <= 0 && limits.dailyCost <= 0) return { tokens: Infinity, cost: Infinity }
    const now = this.now()
    const used = await this.ledger.getUsage(userId, utcDay(now))
    const tokens = limits.dailyTokens > 0 ? limits.dailyTokens - (used?.tokens ?? 0) : Infinity
    const cost = limits.dailyCost > 0 ? limits.dailyCost - (used?.cost ?? 0) : Infinity
    if (tokens <= 0) throw new BudgetExceededError('tokens', limits.dailyTokens, nextUtcMidnight(now), now)
    if (cost <= 0) throw new BudgetExceededError('cost', limits.dailyCost, nextUtcMidnight(now), now)
    return { tokens, cost }
  }

  /** Adds what a job used to today's usage of `userId` (nothing to add: no write). */
  async record(userId: string, spent: SpentBudget): Promise<void> {
    if (spent.tokens <= 0 && spent.cost <= 0) return
    await this.ledger.addUsage(userId, utcDay(this.now()), spent)
  }
}
