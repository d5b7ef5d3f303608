export type DeadlineOutcome<T> =
  | { status: 'fulfilled', value: T }
  | { status: 'rejected', error: unknown }
  | { status: 'timeout' }
  | { status: 'aborted' }

/**
 * Runs `task` with its own AbortSignal, settling at the first of: the task finishing, `timeoutMs`
 * elapsing, or the caller's `signal` aborting. On timeout or abort the task's signal is aborted so a
 * cooperative task stops its work; the timer and listener are always removed.
 */
export function runWithDeadline<T>(
  task: (signal: AbortSignal) => T | Promise<T>,
  options: { timeoutMs: number, signal?: AbortSignal },
): Promise<DeadlineOutcome<Awaited<T>>> {
  const { timeoutMs, signal: callerSignal } = options
  if (callerSignal?.aborted) return Promise.resolve({ status: 'aborted' })

  const controller = new AbortController()
  return new Promise((resolve) => {
    let settled = false
    const settle = (outcome: DeadlineOutcome<Awaited<T>>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      callerSignal?.removeEventListener('abort', onCallerAbort)
      resolve(outcome)
    }
    const onCallerAbort = () => {
      controller.abort(callerSignal?.reason)
      settle({ status: 'aborted' })
    }
    const timer = setTimeout(() => {
      controller.abort(new DOMException(`Timed out after ${timeoutMs} ms`, 'TimeoutError'))
      settle({ status: 'timeout' })
    }, timeoutMs)
    callerSignal?.addEventListener('abort', onCallerAbort, { once: true })

    // Promise.resolve().then() turns a synchronous throw into a rejection.
    Promise.resolve()
      .then(() => task(controller.signal))
      .then(
        value => settle({ status: 'fulfilled', value: value as Awaited<T> }),
        error => settle({ status: 'rejected', error }),
      )
  })
}
