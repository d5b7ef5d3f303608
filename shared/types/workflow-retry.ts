/** Why a workflow step may be tried again: an upstream 5xx or lost connection, a rate limit, a timeout, the step's own failure (a tool's error, a child workflow's). Never a refusal or an invalid input. */
export const RETRYABLE_STEP_ERRORS = ['upstream', 'rate-limit', 'timeout', 'step'] as const

export type RetryableStepError = typeof RETRYABLE_STEP_ERRORS[number]
