/**
 * A step's retry policy: how many tries, how long it waits between them (fixed, or exponential
 * with jitter up to a cap), which failures another try may cure, and how long one try may take.
 * The wait is durable: the run records when the next try is due (`retryAt` on the step) before it
 * waits, so a restart waits out the rest of it, neither shortening nor repeating it.
 */
import type { WorkflowNode } from '../../../shared/schemas/workflow'
import { RETRYABLE_STEP_ERRORS } from '../../../shared/types/workflow-retry'
import type { NodeOutcome, StepErrorKind } from './run-contract'
import type { OpenRouterErrorKind } from '../openrouter/errors'
import { sleep } from '../openrouter/fetch-with-retry'
import type { ToolErrorCode } from '../tools/tool-types'

/** A step's policy with its defaults filled in. */
export interface RetryPolicy {
  /** Tries in all: 1 + `retries`. */
  attempts: number
  backoff: 'fixed' | 'exponential'
  delayMs: number
  maxDelayMs: number
  retryOn: ReadonlySet<StepErrorKind>
  /** Longest one try may take; undefined: no limit of its own. */
  timeoutMs: number | undefined
}

/** The policy of `node` (a kind without retries tries once, with no timeout of its own). */
export function retryPolicyOf(node: WorkflowNode): RetryPolicy {
  const retries = 'retries' in node ? node.retries ?? 0 : 0
  const retry = 'retry' in node ? node.retry : undefined
  const timeoutSeconds = 'timeoutSeconds' in node ? node.timeoutSeconds : undefined
  return {
    attempts: 1 + retries,
    backoff: retry?.backoff ?? 'exponential',
    delayMs: (retry?.delaySeconds ?? 1) * 1000,
    maxDelayMs: (retry?.maxDelaySeconds ?? 60) * 1000,
    retryOn: new Set(retry?.on ?? RETRYABLE_STEP_ERRORS),
    timeoutMs: timeoutSeconds === undefined ? undefined : timeoutSeconds * 1000,
  }
}

/** Whether a try that ended with `outcome` may be followed by another under `policy`. */
export function worthRetrying(policy: RetryPolicy, outcome: NodeOutcome): boolean {
  return 'error' in outcome && policy.retryOn.has(outcome.kind ?? 'step')
}

/**
 * How long to wait after the `failedAttempts`-th failed try: fixed, `delayMs` each time;
 * exponential, `delayMs × 2^(n-1)` up to `maxDelayMs`, drawn between its half and its whole.
 */
export function retryDelayMs(policy: RetryPolicy, failedAttempts: number, random: () => number = Math.random): number {
  if (policy.backoff === 'fixed') return policy.delayMs
  const full = Math.min(policy.maxDelayMs, policy.delayMs * 2 ** Math.min(failedAttempts - 1, 30))
  return Math.round(full / 2 + random() * (full / 2))
}

/** Waits until `at` or until `signal` aborts, whichever comes first (the client's `sleep`: its timer is cleared either way). */
export function waitUntil(at: number, signal: AbortSignal): Promise<void> {
  return sleep(Math.max(0, at - Date.now()), signal).catch(() => {})
}

/** The error a try reports when its own timeout stopped it. */
export function stepTimedOut(timeoutMs: number): NodeOutcome {
  const seconds = Math.round(timeoutMs / 1000)
  return { error: `this step took longer than its timeout of ${seconds.toLocaleString('en')} s and was stopped`, kind: 'timeout' }
}

/** What kind of failure a model request's error is, for retry policies. */
export function stepErrorKindOfModel(kind: OpenRouterErrorKind | undefined): StepErrorKind {
  switch (kind) {
    case 'rate_limited': return 'rate-limit'
    case 'timeout': return 'timeout'
    case 'upstream_unavailable':
    case 'stream_interrupted':
    case 'stream_error':
    case undefined: return 'upstream'
    case 'aborted': return 'stopped'
    // A bad request, a key, credits or a moderation refusal: the same request meets the same answer.
    default: return 'refused'
  }
}

/** What kind of failure a tool's error is, for retry policies. */
export function stepErrorKindOfTool(code: ToolErrorCode | undefined): StepErrorKind {
  switch (code) {
    case 'timeout': return 'timeout'
    case 'aborted': return 'stopped'
    case 'unavailable': return 'upstream'
    case 'invalid_arguments': return 'invalid'
    case 'not_registered':
    case 'disabled':
    case 'client_only':
    case 'credentials_missing': return 'refused'
    // It ran and failed, or gave back what it should not: its own failure.
    default: return 'step'
  }
}
