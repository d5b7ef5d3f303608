/**
 * Daily budgets held live. The ledger (budget.ts) counts what ended runs used; this counts, per
 * user, what the runs of this process are using now and what their model requests hold reserved.
 * Before a model request goes out it reserves an estimate (its prompt plus its `max_tokens`, or the
 * role's output cap) against what is left; when it ends its reported usage replaces the estimate.
 * A start is admitted with its first request already reserved, so starts made at the same moment
 * cannot all take the same remainder: the budget is passed by at most one request.
 *
 * A request that finds the rest of the budget held by requests under way waits for one of them to
 * end (parallel workflow agents take turns) rather than fail; one that finds the budget spent is
 * refused. Reservations are this process's: instances sharing a store each count their own runs
 * live and everyone's ended ones through the ledger.
 */
import type { Allowance, SpentBudget } from './budget'
import type { ChatMessage } from '../../openrouter/types'
import type { ModelSpend } from '../../../../shared/types/limits'

/** Models one run's usage names at most (the rest count together). */
const MAX_MODELS = 20
/** Characters of a model id kept in the usage ledger. */
const MAX_MODEL_ID = 200

const CHARS_PER_TOKEN = 4
/** What a request with no `max_tokens` and a role with no output cap is expected to write. */
export const DEFAULT_OUTPUT_ESTIMATE = 1_024

/** Tokens a request is expected to use: its prompt's text (4 characters a token) and what it may write. */
export function estimateRequestTokens(request: { messages: readonly ChatMessage[], max_tokens?: unknown }, outputEstimate: number): number {
  let chars = 0
  for (const message of request.messages) {
    const content = (message as { content?: unknown }).content
    if (typeof content === 'string') chars += content.length
    else if (Array.isArray(content)) for (const part of content) if (typeof part?.text === 'string') chars += part.text.length
    for (const call of (message as { tool_calls?: Array<{ function?: { arguments?: string } }> }).tool_calls ?? []) chars += call.function?.arguments?.length ?? 0
  }
  const output = typeof request.max_tokens === 'number' && request.max_tokens > 0 ? request.max_tokens : outputEstimate
  return Math.ceil(chars / CHARS_PER_TOKEN) + output
}

/** One model request's spending: its reservation, its streamed text as an estimate, then its reported usage. */
export class RequestSpend {
  private streamedChars = 0
  private reported: SpentBudget | undefined

  /** `model`: the model asked, for usage by model. */
  constructor(readonly reservedTokens = 0, readonly model = 'unknown') {}

  /** Text the request streamed (counted until its usage is reported). */
  addText(chars: number): void {
    this.streamedChars += chars
  }

  /** The usage the upstream reported for the request; replaces the estimate. */
  addUsage(usage: { totalTokens: number, cost: number }): void {
    this.reported = { tokens: (this.reported?.tokens ?? 0) + usage.totalTokens, cost: (this.reported?.cost ?? 0) + usage.cost }
  }

  /** What the request has used: its reported usage, or the estimate of its text so far. */
  spent(): SpentBudget {
    return this.reported ?? { tokens: Math.ceil(this.streamedChars / CHARS_PER_TOKEN), cost: 0 }
  }

  /** Tokens it keeps from others: its reservation until its usage is known, or more if it streamed more. */
  held(): number {
    return this.reported ? this.reported.tokens : Math.max(this.reservedTokens, this.spent().tokens)
  }
}

/** Why a request was not given a reservation. */
export type BudgetRefusal = 'tokens' | 'cost'

/** One user's budget in this process: the ledger's count and the live runs on top of it. */
class UserBudget {
  readonly runs = new Set<RunBudget>()
  private waiters: Array<() => void> = []

  constructor(public limit: Allowance, public day: string, public counted: SpentBudget) {}

  /** What the runs under way have used (`held`: with their reservations). */
  private live(held: boolean): SpentBudget {
    let tokens = 0
    let cost = 0
    for (const run of this.runs) {
      const spent = run.spent()
      tokens += held ? run.held() : spent.tokens
      cost += spent.cost
    }
    return { tokens, cost }
  }

  /** What is left once what is used is counted; `held` counts reservations as used. */
  left(held: boolean): Allowance {
    const live = this.live(held)
    return { tokens: this.limit.tokens - this.counted.tokens - live.tokens, cost: this.limit.cost - this.counted.cost - live.cost }
  }

  /** The budget that is used up (reservations not counted), if one is. */
  exceeded(): BudgetRefusal | undefined {
    const left = this.left(false)
    if (left.tokens <= 0) return 'tokens'
    if (left.cost <= 0) return 'cost'
    return undefined
  }

  /** Resolves when a request ends or a run leaves (what is held may have shrunk). */
  changed(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        signal?.removeEventListener('abort', done)
        this.waiters = this.waiters.filter(waiter => waiter !== done)
        resolve()
      }
      this.waiters.push(done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }

  notify(): void {
    for (const waiter of [...this.waiters]) waiter()
  }
}

/**
 * One run's spending: its model requests, each reserved against its user's budget before it goes
 * out. A run without a budget (none set) reserves nothing and is never refused.
 */
export class RunBudget {
  private settled: SpentBudget = { tokens: 0, cost: 0 }
  /** What each model's requests that ended used. */
  private readonly settledByModel = new Map<string, SpentBudget>()
  private readonly open = new Set<RequestSpend>()
  private prepaid: RequestSpend | undefined
  private closed = false

  /** @internal Made by `BudgetPools`. */
  constructor(private readonly account: UserBudget | undefined, private readonly outputEstimate: number, private readonly onClose: (run: RunBudget) => void = () => {}) {}

  /** @internal Holds a start's first request before the run exists. */
  prepay(tokens: number): void {
    this.prepaid = new RequestSpend(tokens)
    this.open.add(this.prepaid)
  }

  /**
   * Reserves the next model request (`request`: what is sent). Resolves its spending, or a refusal
   * when the budget is used up; while the rest is only held by requests under way, waits for one
   * to end (or `signal`: then `undefined`).
   */
  async reserve(request: { messages: readonly ChatMessage[], max_tokens?: unknown, model?: unknown }, signal?: AbortSignal): Promise<RequestSpend | BudgetRefusal | undefined> {
    const wanted = estimateRequestTokens(request, this.outputEstimate)
    const model = typeof request.model === 'string' && request.model ? request.model.slice(0, MAX_MODEL_ID) : 'unknown'
    if (this.prepaid) this.release(this.prepaid)
    if (!this.account) return this.track(new RequestSpend(wanted, model))
    while (!signal?.aborted) {
      const used = this.account.exceeded()
      if (used) return used
      const left = this.account.left(true)
      if (left.tokens > 0 && left.cost > 0) return this.track(new RequestSpend(Math.min(wanted, left.tokens), model))
      await this.account.changed(signal)
    }
    return undefined
  }

  /** A request ended: its usage (or estimate) counts as the run's, its reservation is freed. */
  finish(request: RequestSpend): void {
    if (!this.open.delete(request)) return
    const spent = request.spent()
    this.settled = { tokens: this.settled.tokens + spent.tokens, cost: this.settled.cost + spent.cost }
    const model = this.settledByModel.get(request.model) ?? { tokens: 0, cost: 0 }
    this.settledByModel.set(request.model, { tokens: model.tokens + spent.tokens, cost: model.cost + spent.cost })
    this.account?.notify()
  }

  /**
   * What the run has used, with each model's share (requests under way counted with their
   * estimate); a run of more than `MAX_MODELS` models keeps the largest and counts the rest as one.
   */
  spentWithModels(): SpentBudget & { byModel: ModelSpend[] } {
    const byModel = new Map(this.settledByModel)
    for (const request of this.open) {
      if (request === this.prepaid) continue
      const spent = request.spent()
      const model = byModel.get(request.model) ?? { tokens: 0, cost: 0 }
      byModel.set(request.model, { tokens: model.tokens + spent.tokens, cost: model.cost + spent.cost })
    }
    const shares = [...byModel].map(([model, spent]) => ({ model, ...spent })).filter(share => share.tokens > 0 || share.cost > 0).sort((a, b) => b.tokens - a.tokens)
    const kept = shares.slice(0, MAX_MODELS)
    const rest = shares.slice(MAX_MODELS)
    if (rest.length > 0) kept.push({ model: 'other models', tokens: rest.reduce((sum, share) => sum + share.tokens, 0), cost: rest.reduce((sum, share) => sum + share.cost, 0) })
    return { ...this.spent(), byModel: kept }
  }

  /** What the run has used so far (reported usage plus the estimate of requests under way). */
  spent(): SpentBudget {
    let { tokens, cost } = this.settled
    for (const request of this.open) {
      const spent = request.spent()
      tokens += spent.tokens
      cost += spent.cost
    }
    return { tokens, cost }
  }

  /** Tokens the run keeps from others: what it used, and its requests' reservations. */
  held(): number {
    let tokens = this.settled.tokens
    for (const request of this.open) tokens += request.held()
    return tokens
  }

  /** Which of its user's budgets is used up (by this run and the user's others), if any. */
  exceeded(): BudgetRefusal | undefined {
    return this.account?.exceeded()
  }

  /** The run ended and what it used was recorded: it leaves the live count. Idempotent. */
  close(): void {
    if (this.closed) return
    this.closed = true
    for (const request of [...this.open]) this.finish(request)
    this.onClose(this)
  }

  private track(request: RequestSpend): RequestSpend {
    this.open.add(request)
    return request
  }

  private release(request: RequestSpend): void {
    this.open.delete(request)
    if (request === this.prepaid) this.prepaid = undefined
  }
}

/** The live budgets of every user with a run in this process (a user's entry goes when their last run ends). */
export class BudgetPools {
  private readonly users = new Map<string, UserBudget>()

  /**
   * A budget for a run of `userId`, counting from `used` (the ledger's count of `day`). With
   * `prepay` (tokens), the run's first request is reserved now; returns the refusal instead when
   * nothing is left (`'held'`: what is left is held by requests under way).
   */
  open(userId: string, budget: { limit: Allowance, day: string, used: SpentBudget, outputEstimate: number, prepay?: number }): RunBudget | BudgetRefusal | 'held' {
    if (budget.limit.tokens === Infinity && budget.limit.cost === Infinity) return new RunBudget(undefined, budget.outputEstimate)
    const account = this.account(userId, budget)
    const run = new RunBudget(account, budget.outputEstimate, (ended) => {
      // What it used is in the ledger now; counted here until the next read, so the rest stay exact.
      const spent = ended.spent()
      account.counted = { tokens: account.counted.tokens + spent.tokens, cost: account.counted.cost + spent.cost }
      account.runs.delete(ended)
      account.notify()
      if (account.runs.size === 0) this.users.delete(userId)
    })
    if (budget.prepay !== undefined) {
      const refusal = account.exceeded()
      const left = account.left(true)
      if (refusal || left.tokens <= 0 || left.cost <= 0) {
        if (account.runs.size === 0) this.users.delete(userId)
        return refusal ?? 'held'
      }
      run.prepay(Math.min(budget.prepay, left.tokens))
    }
    account.runs.add(run)
    return run
  }

  /** What `userId` has left now under `limit`, reservations of their runs under way counted as used. */
  left(userId: string, limit: Allowance, used: SpentBudget): Allowance {
    const account = this.users.get(userId)
    if (!account) return { tokens: limit.tokens - used.tokens, cost: limit.cost - used.cost }
    account.limit = limit
    return account.left(true)
  }

  /** Users with a run holding budget here (for tests and health). */
  get size(): number {
    return this.users.size
  }

  private account(userId: string, budget: { limit: Allowance, day: string, used: SpentBudget }): UserBudget {
    let account = this.users.get(userId)
    if (!account) {
      account = new UserBudget(budget.limit, budget.day, budget.used)
      this.users.set(userId, account)
      return account
    }
    account.limit = budget.limit
    // A new day starts from the ledger; within one, the ledger only grows (another instance's runs)
    // and what this process added may not have reached a read yet: the larger count holds.
    account.counted = account.day === budget.day
      ? { tokens: Math.max(account.counted.tokens, budget.used.tokens), cost: Math.max(account.counted.cost, budget.used.cost) }
      : budget.used
    account.day = budget.day
    return account
  }
}
