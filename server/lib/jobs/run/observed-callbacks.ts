/**
 * A run's model requests reported for monitoring: to the metrics (job-observer.ts) how long each
 * took to its first text, how fast it wrote after that, what it used, that it ended (and with which
 * upstream error), by model; to tracing a span per request (`chat {model}`, GenAI conventions),
 * a child of the job's span. Wraps the loop callbacks like the budget's metering (budget-meter.ts),
 * outside it, so the time counts from when the request goes out.
 */
import type { Span } from '@opentelemetry/api'
import type { ToolLoopCallbacks } from '../../agent/tool-loop-types'
import type { JobObserver } from '../job-observer'
import type { Role } from '../../../../shared/types/account'
import { failSpan, startSpan } from '../../tracing'

/** `callbacks` with each request of `model` (for a user of `role`) reported to `observer` and traced. */
export function observedCallbacks(observer: JobObserver, { model, role }: { model: string, role: Role }, callbacks: ToolLoopCallbacks): ToolLoopCallbacks {
  /** When the request under way went out; undefined once its first text came (or between requests). */
  let sentAt: number | undefined
  /** When the request under way sent its first text, and when its last. */
  let firstTextAt: number | undefined
  let lastTextAt: number | undefined
  /** The request under way's span. */
  let span: Span | undefined
  const text = () => {
    lastTextAt = performance.now()
    if (sentAt === undefined) return
    observer.firstToken(model, lastTextAt - sentAt)
    firstTextAt = lastTextAt
    sentAt = undefined
  }
  return {
    ...callbacks,
    beforeModelRequest: async (event) => {
      await callbacks.beforeModelRequest?.(event)
      sentAt = performance.now()
      firstTextAt = lastTextAt = undefined
      span?.end()
      span = startSpan(`chat ${model}`, {
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openrouter',
        'gen_ai.request.model': model,
        'or3.model_round': event.round,
      })
    },
    afterModelRequest: (event) => {
      sentAt = undefined
      observer.modelRequestEnded(model, event.error)
      if (span) {
        if (event.error) failSpan(span, event.error)
        span.end()
        span = undefined
      }
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
      observer.modelUsage(model, usage, role)
      span?.setAttributes({ 'gen_ai.usage.input_tokens': usage.promptTokens, 'gen_ai.usage.output_tokens': usage.completionTokens })
      // Writing speed: the completion's tokens over the time from its first text to its last.
      if (firstTextAt !== undefined && lastTextAt !== undefined && lastTextAt > firstTextAt) observer.outputSpeed(model, usage.completionTokens / ((lastTextAt - firstTextAt) / 1000))
      callbacks.onUsage?.(usage, info)
    },
  }
}
