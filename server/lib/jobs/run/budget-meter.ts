/**
 * A run's model requests metered against its user's daily budget (admission/budget-pool.ts): each
 * request reserves before it goes out, counts its streamed text as it comes (4 characters a token)
 * and settles with the usage the upstream reports when it ends. A request the budget refuses is
 * not sent; the run stops as over budget, keeping its text. A run passes its budget by at most one
 * request (its prompt is only known when that request ends).
 */
import { budgetMessage, nextUtcMidnight } from '../admission/budget'
import type { BudgetRefusal, RequestSpend, RunBudget } from '../admission/budget-pool'
import type { ToolLoopCallbacks } from '../../agent/tool-loop-types'
import type { JobError } from '../../../../shared/types/job'

/**
 * `callbacks` with the budget's metering added: the request is reserved before it goes out (a
 * refusal calls `onRefused`, which must stop the loop), text and usage count against it, and its
 * reservation is settled when it ends. Without a budget, `callbacks` as they are.
 */
export function meteredCallbacks(budget: RunBudget | undefined, callbacks: ToolLoopCallbacks, onRefused: (budget: BudgetRefusal) => void, signal?: AbortSignal): ToolLoopCallbacks {
  if (!budget) return callbacks
  let current: RequestSpend | undefined
  return {
    ...callbacks,
    beforeModelRequest: async (event) => {
      const reserved = await budget.reserve(event.request, signal)
      if (typeof reserved === 'string') onRefused(reserved)
      else current = reserved
      await callbacks.beforeModelRequest?.(event)
    },
    afterModelRequest: (event) => {
      if (current) budget.finish(current)
      current = undefined
      callbacks.afterModelRequest?.(event)
    },
    onTextDelta: (text, info) => {
      current?.addText(text.length)
      callbacks.onTextDelta?.(text, info)
    },
    onReasoningDelta: (text, info) => {
      current?.addText(text.length)
      callbacks.onReasoningDelta?.(text, info)
    },
    onUsage: (usage, info) => {
      current?.addUsage(usage)
      callbacks.onUsage?.(usage, info)
    },
  }
}

/** The error of a run stopped by its budget: what was used, when it starts again; the text so far is kept. */
export function overBudgetError(budget: BudgetRefusal, now = Date.now()): JobError {
  return {
    kind: 'over-budget',
    message: `${budgetMessage(budget, undefined, nextUtcMidnight(now))} The answer stopped here; the text so far is kept.`,
    hint: 'Wait for the budget to start again, or ask an admin to raise your role\'s daily budget (Admin → Limits).',
  }
}
