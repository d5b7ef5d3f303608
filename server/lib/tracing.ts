/**
 * Traces, through the OpenTelemetry API only: every floor makes its spans here, and they cost
 * nothing until the runtime starts the SDK (runtime/telemetry.ts, when `OTEL_EXPORTER_OTLP_ENDPOINT`
 * is set). A job's run happens inside its job context (`inJobContext`): with traces on, its id and
 * its user's id are on the context, so every span made during the run (model rounds, tool calls,
 * store calls) carries them. (Log lines carry them through the run's own logger: logs.ts.)
 *
 * Span names and attributes follow OpenTelemetry's GenAI conventions where they apply
 * (`chat {model}`, `execute_tool {tool}`, `gen_ai.*`); the app's own are `or3.*`.
 */
import { context, createContextKey, propagation, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api'

/** The tracer's name (the instrumentation scope of every span the app makes). */
export const TRACER_NAME = 'or3-chat'
/** The span attribute that carries a job's id (on every span made during its run). */
export const JOB_ID_ATTRIBUTE = 'or3.job.id'
/** The span attribute that carries the id (never the name) of the job's user. */
export const USER_ID_ATTRIBUTE = 'enduser.id'

const JOB_KEY = createContextKey('or3.job')

/** Whose run a context belongs to. */
export interface JobContextIds {
  jobId: string
  userId: string
}

/** The app's tracer. */
export function tracer() {
  return trace.getTracer(TRACER_NAME)
}

/** The job (and its user) whose run `ctx` (default: the active context) belongs to. */
export function jobOfContext(ctx: Context = context.active()): JobContextIds | undefined {
  return ctx.getValue(JOB_KEY) as JobContextIds | undefined
}

/** The active span's trace and span ids, when a span is being recorded. */
export function activeTraceIds(): { traceId: string, spanId: string } | undefined {
  const span = trace.getActiveSpan()
  if (!span?.isRecording()) return undefined
  const { traceId, spanId } = span.spanContext()
  return { traceId, spanId }
}

/**
 * Runs `run` inside a new root span `name` that is the context of everything it does, with `ids`
 * on the context; the span ends when `run` settles, its status from `outcome` of the result.
 */
export function inJobContext<T>(name: string, ids: JobContextIds, attributes: Attributes, run: () => Promise<T>, outcome: (result: T) => { error?: string }): Promise<T> {
  const parent = context.active().setValue(JOB_KEY, ids)
  return tracer().startActiveSpan(name, { root: true, attributes: { ...attributes, [JOB_ID_ATTRIBUTE]: ids.jobId, [USER_ID_ATTRIBUTE]: ids.userId } }, parent, async (span) => {
    try {
      const result = await run()
      const { error } = outcome(result)
      if (error) failSpan(span, error)
      return result
    } catch (error) {
      failSpan(span, error instanceof Error ? error.name : 'error', error)
      throw error
    } finally {
      span.end()
    }
  })
}

/** Runs `run` inside a new active span (a child of the active one); a throw marks it failed. */
export function inSpan<T>(name: string, attributes: Attributes, run: (span: Span) => Promise<T>): Promise<T> {
  return tracer().startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await run(span)
    } catch (error) {
      failSpan(span, error instanceof Error ? error.name : 'error', error)
      throw error
    } finally {
      span.end()
    }
  })
}

/** Starts a span (a child of the active one) that the caller ends: for work that starts and ends in callbacks. */
export function startSpan(name: string, attributes: Attributes): Span {
  return tracer().startSpan(name, { attributes })
}

/** Marks `span` failed with `errorType` (the `error.type` attribute), recording `error` when there is one. */
export function failSpan(span: Span, errorType: string, error?: unknown): void {
  span.setAttribute('error.type', errorType)
  if (error instanceof Error) span.recordException(error)
  span.setStatus({ code: SpanStatusCode.ERROR, message: errorType })
}

/** `headers` with the active trace's context added (W3C `traceparent`), for a request to another service. */
export function withTraceHeaders(headers: HeadersInit | undefined): HeadersInit | undefined {
  const carrier: Record<string, string> = {}
  propagation.inject(context.active(), carrier)
  if (Object.keys(carrier).length === 0) return headers
  const merged = new Headers(headers)
  for (const [name, value] of Object.entries(carrier)) merged.set(name, value)
  return merged
}
