/**
 * A run's model requests reported for monitoring (job-observer.ts): how long each took to its first
 * text, what it used, that it ended, by model. Wraps the loop callbacks like the budget's metering
 * (budget-meter.ts), outside it, so the time counts from when the request goes out.
 */
import type { ToolLoopCallbacks } from '../../agent/tool-loop-types'
import type { JobObserver } from '../job-observer'

/** `callbacks` with each request of `model` reported to `observer`. */
export function observedCallbacks(observer: JobObserver, model: string, callbacks: ToolLoopCallbacks): ToolLoopCallbacks {
  /** When the request under way went out; undefined once its first text came (or between requests). */
  let sentAt: number | undefined
  const text = () => {
    if (sentAt === undefined) return
    observer.firstToken(model, performance.now() - sentAt)
    sentAt = undefined
  }
  return {
    ...callbacks,
    beforeModelRequest: async (event) => {
      await callbacks.beforeModelRequest?.(event)
      sentAt = performance.now()
    },
    afterModelRequest: (event) => {
      sentAt = undefined
      observer.modelRequestEnded(model)
      callbacks.afterModelRequest?.(event)
    },
    onTextDelta: (delta, info) => {
      text()
      callbacks.onTextDelta?.(delta, info)
    },
    onReasoningDelta: (delta, info) => {
      text()
      callbacks.onReasoningDelta?.(delta, info)
    },
    onUsage: (usage, info) => {
      observer.modelUsage(model, usage)
      callbacks.onUsage?.(usage, info)
    },
  }
}
