/**
 * One run's spending against the allowance it started with (admission/budget.ts). The upstream
 * reports real usage at the end of each model request; between reports the streamed text is
 * counted as an estimate (4 characters a token), so a long answer stops while it streams rather
 * than after. A run can pass its allowance by at most one request's prompt, which is only known
 * when that request ends.
 */
import { budgetMessage, nextUtcMidnight, type Allowance, type SpentBudget } from '../admission/budget'
import type { Usage } from '../../../../shared/types/chat'
import type { JobError } from '../../../../shared/types/job'

const CHARS_PER_TOKEN = 4

/** Counts what a run has used. */
export class BudgetMeter {
  private reportedTokens = 0
  private reportedCost = 0
  private streamedChars = 0

  constructor(readonly allowance: Allowance = { tokens: Infinity, cost: Infinity }) {}

  /** A model request's real usage (replaces the estimate of its streamed text). */
  addUsage(usage: Pick<Usage, 'totalTokens' | 'cost'>): void {
    this.reportedTokens += usage.totalTokens
    this.reportedCost += usage.cost
    this.streamedChars = 0
  }

  /** Text streamed by the request under way. */
  addText(chars: number): void {
    this.streamedChars += chars
  }

  /** What the run has used so far (reported usage plus the estimate of the request under way). */
  spent(): SpentBudget {
    return { tokens: this.reportedTokens + Math.ceil(this.streamedChars / CHARS_PER_TOKEN), cost: this.reportedCost }
  }

  /** Which budget the run has used up, if any. */
  exceeded(): 'tokens' | 'cost' | undefined {
    const spent = this.spent()
    if (spent.tokens >= this.allowance.tokens) return 'tokens'
    if (spent.cost >= this.allowance.cost) return 'cost'
    return undefined
  }
}

/** The error of a run stopped by its budget: what was used, when it starts again; the text so far is kept. */
export function overBudgetError(budget: 'tokens' | 'cost', now = Date.now()): JobError {
  return {
    kind: 'over-budget',
    message: `${budgetMessage(budget, undefined, nextUtcMidnight(now))} The answer stopped here; the text so far is kept.`,
    hint: 'Wait for the budget to start again, or ask an admin to raise your role\'s daily budget (Admin → Limits).',
  }
}
