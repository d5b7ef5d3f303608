/**
 * Daily budgets: the tokens and credits each principal may use per UTC day (its role's
 * `dailyTokens` / `dailyCost`, 0 for none), counted from the usage every job reports when it
 * ends (the usage ledger in the account store, shared by every instance) and, while jobs run,
 * from what they use and reserve (budget-pool.ts). A start with nothing left is refused with 402;
 * one whose rest is held by answers under way gets 429 until they end. A running job stops when
 * its user's budget is used up, keeping its text.
 */
import { BudgetPools, DEFAULT_OUTPUT_ESTIMATE, RunBudget } from './budget-pool'
import type { ModelSpend, RoleLimits } from '../../../../shared/types/limits'
import { DomainError, type HttpAnswer } from '../../domain-error'
import type { UsageLedger as StoredUsageLedger } from '../../stores/usage/usage-ledger'

/** Where usage is kept (the account store implements it). */
export type UsageLedger = Pick<StoredUsageLedger, 'addUsage' | 'getUsage'>

/** What a job used: tokens (prompt + completion) and credits. */
export interface SpentBudget {
  tokens: number
  cost: number
  /** Each model's share, for usage by model (the ledger's rows per model). */
  byModel?: readonly ModelSpend[]
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
export class BudgetExceededError extends DomainError {
  override name = 'BudgetExceededError'
  constructor(readonly budget: 'tokens' | 'cost', readonly limit: number, readonly resetsAt: number, now: number) {
    super(budgetMessage(budget, limit, resetsAt))
    this.retryAfterSeconds = Math.max(1, Math.ceil((resetsAt - now) / 1000))
  }

  readonly retryAfterSeconds: number

  httpAnswer(): HttpAnswer {
    const i18n = { key: this.budget === 'tokens' ? 'budget.exceededTokens' : 'budget.exceededCredits', params: { limit: this.limit, time: new Date(this.resetsAt).toISOString().slice(11, 16) } }
    return { statusCode: 402, statusMessage: 'Daily budget used up', message: this.message, i18n, data: { budget: this.budget, limit: this.limit, resetsAt: this.resetsAt }, retryAfterSeconds: this.retryAfterSeconds, refusedBy: `daily_budget_${this.budget}` }
  }

  static isInstance(error: unknown): error is BudgetExceededError {
    return error instanceof Error && error.name === 'BudgetExceededError'
  }
}

/** Raised when what is left of a principal's budget is held by their answers under way; answered 429 until one ends. */
export class BudgetHeldError extends DomainError {
  override name = 'BudgetHeldError'
  readonly retryAfterSeconds = 5
  constructor(readonly budget: 'tokens' | 'cost', readonly limit: number) {
    const unit = budget === 'tokens' ? 'tokens' : 'credits'
    super(`Your answers in progress may use the rest of your daily budget of ${limit.toLocaleString('en')} ${unit}. Try again when one of them ends.`)
  }

  httpAnswer(): HttpAnswer {
    const i18n = { key: this.budget === 'tokens' ? 'budget.heldTokens' : 'budget.heldCredits', params: { limit: this.limit } }
    return { statusCode: 429, statusMessage: 'Budget held by answers in progress', message: this.message, i18n, data: { budget: this.budget, limit: this.limit }, retryAfterSeconds: this.retryAfterSeconds, refusedBy: `budget_held_${this.budget}` }
  }

  static isInstance(error: unknown): error is BudgetHeldError {
    return error instanceof Error && error.name === 'BudgetHeldError'
  }
}

/** Words for a used-up budget, shared by the 402 answer and the error of a job stopped by it. */
export function budgetMessage(budget: 'tokens' | 'cost', limit: number | undefined, resetsAt: number): string {
  const unit = budget === 'tokens' ? 'tokens' : 'credits'
  const what = limit === undefined ? `daily budget of ${unit}` : `daily budget of ${limit.toLocaleString('en')} ${unit}`
  return `You have used your ${what}. It starts again at ${new Date(resetsAt).toISOString().slice(11, 16)} UTC; an admin can raise it.`
}

/** The parts of a role's limits a budget reads. */
export type BudgetLimits = Pick<RoleLimits, 'dailyTokens' | 'dailyCost' | 'maxOutputTokens'>

/** What a run is expected to write per request when its request names no `max_tokens`: the role's cap, or a default. */
export function outputEstimateOf(limits: Pick<RoleLimits, 'maxOutputTokens'>): number {
  return limits.maxOutputTokens > 0 ? limits.maxOutputTokens : DEFAULT_OUTPUT_ESTIMATE
}

/** A role's daily limits as amounts (`Infinity`: no budget). */
function limitOf(limits: BudgetLimits): Allowance {
  return { tokens: limits.dailyTokens > 0 ? limits.dailyTokens : Infinity, cost: limits.dailyCost > 0 ? limits.dailyCost : Infinity }
}

/** Reads and records principals' daily usage, and holds the live budgets of their runs. */
export class DailyBudgets {
  readonly pools = new BudgetPools()

  constructor(private readonly ledger: UsageLedger, private readonly now: () => number = Date.now) {}

  /**
   * The budget of a start by `userId` under `limits`, its first request (about `estimate` tokens)
   * reserved. Throws `BudgetExceededError` when a budget is used up, `BudgetHeldError` when the
   * rest is held by the user's answers under way.
   */
  async admit(userId: string, limits: BudgetLimits, estimate: number): Promise<RunBudget> {
    const now = this.now()
    const opened = this.pools.open(userId, { ...await this.counted(userId, limits, now), outputEstimate: outputEstimateOf(limits), prepay: estimate })
    if (opened instanceof RunBudget) return opened
    const budget = opened === 'held' ? (limits.dailyTokens > 0 ? 'tokens' : 'cost') : opened
    const limit = budget === 'tokens' ? limits.dailyTokens : limits.dailyCost
    if (opened === 'held') throw new BudgetHeldError(budget, limit)
    throw new BudgetExceededError(budget, limit, nextUtcMidnight(now), now)
  }

  /**
   * The budget of a run resumed after a restart: never refused here; with nothing left, its first
   * request is. When the ledger cannot be read, nothing is taken to be left (the run keeps its text
   * and stops as over budget rather than spend what may not be there).
   */
  async resume(userId: string, limits: BudgetLimits): Promise<RunBudget> {
    const now = this.now()
    const counted = await this.counted(userId, limits, now).catch(() => {
      const limit = limitOf(limits)
      return { limit, day: utcDay(now), used: { tokens: Number.isFinite(limit.tokens) ? limit.tokens : 0, cost: Number.isFinite(limit.cost) ? limit.cost : 0 } }
    })
    return this.pools.open(userId, { ...counted, outputEstimate: outputEstimateOf(limits) }) as RunBudget
  }

  /** What `userId` may still use today under `limits`, their runs' reservations counted as used (`Infinity`: no budget). */
  async left(userId: string, limits: BudgetLimits): Promise<Allowance> {
    const { limit, used } = await this.counted(userId, limits, this.now())
    return this.pools.left(userId, limit, used)
  }

  /** The limit of `limits` and what the ledger counts of today. */
  private async counted(userId: string, limits: BudgetLimits, now: number): Promise<{ limit: Allowance, day: string, used: SpentBudget }> {
    const limit = limitOf(limits)
    const day = utcDay(now)
    if (limit.tokens === Infinity && limit.cost === Infinity) return { limit, day, used: { tokens: 0, cost: 0 } }
    const used = await this.ledger.getUsage(userId, day)
    return { limit, day, used: { tokens: used?.tokens ?? 0, cost: used?.cost ?? 0 } }
  }

  /** Adds what a job used to today's usage of `userId` (nothing to add: no write). */
  async record(userId: string, spent: SpentBudget): Promise<void> {
    if (spent.tokens <= 0 && spent.cost <= 0) return
    await this.ledger.addUsage(userId, utcDay(this.now()), spent)
  }
}
