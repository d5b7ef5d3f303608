/**
 * The tries of one step under its retry policy (retry-policy.ts): each try runs under the step's
 * own timeout; a failure another try may cure is followed, after the policy's wait, by the next
 * try, until the policy's tries are used up. Before each wait the failed tries and when the next
 * is due (`retryAt`) are handed to the run to store, so a restart resumes the count and waits out
 * the rest of the same wait: it neither shortens nor repeats it.
 */
import type { WorkflowNodeState } from '../../../shared/types/workflow'
import type { WorkflowNode } from '../../../shared/schemas/workflow'
import { followSignal } from '../follow-signal'
import { sumUsage } from '../openrouter/usage'
import type { Usage } from '../openrouter/types'
import { tooLongStepError, type StepOutcome, type WorkflowRunLimits } from './run-contract'
import { retryDelayMs, retryPolicyOf, stepTimedOut, waitUntil, worthRetrying, type RetryPolicy } from './retry-policy'
import { TemplateTooLargeError } from './templates'

/** What the tries of a step need from its run. */
export interface StepAttemptOptions {
  node: WorkflowNode
  /** The step as it stood when an earlier process stopped (its failed tries and their use count). */
  before?: WorkflowNodeState
  /** The run's stop: no further try or wait after it. */
  runSignal: AbortSignal
  waitUntil: ((at: number, signal: AbortSignal) => Promise<void>) | undefined
  /** When the step's next try is due, as the run holds it. */
  retryAt: () => number | undefined
  /** One try of the step's work. */
  work: (signal: AbortSignal) => Promise<StepOutcome>
  /** A try's outcome held to the run's text limits. */
  checked: (outcome: StepOutcome) => StepOutcome
  /** The wait for a try is over. */
  waited: () => void
  /** A try failed and another follows: keep this on the step (resolves once stored). */
  failedTry: (retry: Pick<WorkflowNodeState, 'attempts' | 'retryAt' | 'error' | 'usage'>) => Promise<unknown>
  random?: () => number
}

/** Tries the step until it succeeds, fails for good, or the run stops; every try's use counted. */
export async function attemptStep(options: StepAttemptOptions): Promise<StepOutcome> {
  const { before, runSignal } = options
  const policy = retryPolicyOf(options.node)
  let failed = before?.attempts ?? 0
  // Every try's model use counts: a retried step paid for each (those before a restart too).
  const used: Array<Usage | undefined> = [failed > 0 ? before?.usage : undefined]
  while (true) {
    const due = options.retryAt()
    if (due !== undefined) {
      await (options.waitUntil ?? waitUntil)(due, runSignal)
      if (runSignal.aborted) return { error: 'stopped', kind: 'stopped', usage: sumUsage(used) }
      options.waited()
    }
    const tried = await tryWithTimeout(options.work, policy, runSignal)
    used.push(tried.usage)
    const outcome = options.checked({ ...tried, usage: sumUsage(used) })
    if (!('error' in outcome) || runSignal.aborted) return outcome
    failed++
    if (failed >= policy.attempts || !worthRetrying(policy, outcome)) return outcome
    await options.failedTry({ attempts: failed, retryAt: Date.now() + retryDelayMs(policy, failed, options.random), error: outcome.error, usage: outcome.usage })
  }
}

/** One try, stopped when it passes the policy's timeout (a stop of the run is the run's, not a timeout). */
async function tryWithTimeout(work: (signal: AbortSignal) => Promise<StepOutcome>, policy: RetryPolicy, runSignal: AbortSignal): Promise<StepOutcome> {
  const { controller, dispose } = followSignal(runSignal)
  let timedOut = false
  const timer = policy.timeoutMs === undefined
    ? undefined
    : setTimeout(() => {
        timedOut = true
        controller.abort('step-timeout')
      }, policy.timeoutMs)
  try {
    const outcome = await work(controller.signal).catch((error): StepOutcome => ({ error: error instanceof Error ? error.message : String(error), kind: error instanceof TemplateTooLargeError ? 'too-long' : 'step' }))
    return timedOut && 'error' in outcome && !runSignal.aborted ? { ...stepTimedOut(policy.timeoutMs!), ...(outcome.usage ? { usage: outcome.usage } : {}) } : outcome
  } finally {
    clearTimeout(timer)
    dispose()
  }
}

/**
 * A try's outcome, or the error of text over the step's limit or (`produced`: what the run's steps
 * made so far, for a step whose text counts to the run) the run's. Another try would make it again.
 */
export function heldToLimits(outcome: StepOutcome, limits: WorkflowRunLimits, produced: number | undefined): StepOutcome {
  if ('error' in outcome) return outcome
  if (outcome.output.length > limits.stepChars) return { error: tooLongStepError(outcome.output.length, limits, 'step'), kind: 'too-long', usage: outcome.usage }
  if (produced !== undefined && produced + outcome.output.length > limits.runChars) return { error: tooLongStepError(produced + outcome.output.length, limits, 'run'), kind: 'too-long', usage: outcome.usage }
  return outcome
}
