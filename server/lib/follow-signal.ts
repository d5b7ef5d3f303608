/**
 * A controller of one's own that also follows a caller's signal: aborting it stops only the work
 * under it (a round past its time, a step past its text limit), while the caller's abort still
 * reaches that work with the caller's reason.
 */

/** An AbortController that aborts with `parent`'s reason when `parent` aborts; `dispose` stops following it. */
export function followSignal(parent: AbortSignal | undefined): { controller: AbortController, dispose: () => void } {
  const controller = new AbortController()
  const onAbort = () => controller.abort(parent?.reason)
  if (parent?.aborted) onAbort()
  else parent?.addEventListener('abort', onAbort, { once: true })
  return { controller, dispose: () => parent?.removeEventListener('abort', onAbort) }
}
