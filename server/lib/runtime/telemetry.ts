/**
 * Traces leave the process only when the operator points them somewhere: with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` (or `…_TRACES_ENDPOINT`) set and `NUXT_TRACING_ENABLED` on, the
 * OpenTelemetry SDK starts with an OTLP/HTTP exporter (which reads the standard `OTEL_EXPORTER_OTLP_*`
 * and `OTEL_BSP_*` variables itself), batching spans and flushing them on close. Without it, the
 * API's spans cost nothing (server/lib/tracing.ts).
 *
 * Then the process keeps an async context (AsyncLocalStorage), so spans nest (a job's model
 * requests, tool calls and store calls under its span) and log lines carry the trace (logs.ts);
 * every span made during a job's run carries the job's id, which a span processor copies from the
 * context the span starts in. Without traces there is no async context: on Node 20 it turns on
 * promise hooks for every promise of the process, a cost only worth paying for traces.
 */
import { context, propagation, type Context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import { failSpan, jobOfContext, JOB_ID_ATTRIBUTE, startSpan, USER_ID_ATTRIBUTE } from '../tracing'
import type { StoreCallWatcher } from '../metrics/instrumented-store'

/** Where traces go: the OTLP endpoint variables, as OpenTelemetry's conventions name them. */
export function otlpTracesEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined
}

/** The process's tracing, started by `startTelemetry`. */
export interface Telemetry {
  /** Whether spans are recorded and exported. */
  readonly exporting: boolean
  /** Sends the spans not yet sent and stops (idempotent). */
  close(): Promise<void>
}

let contextManager: AsyncLocalStorageContextManager | undefined

/** Copies the job's ids from the context a span starts in onto the span. */
class JobIdsOnSpans implements SpanProcessor {
  onStart(span: Span, parentContext: Context): void {
    const job = jobOfContext(parentContext)
    if (job && span.attributes[JOB_ID_ATTRIBUTE] === undefined) span.setAttributes({ [JOB_ID_ATTRIBUTE]: job.jobId, [USER_ID_ATTRIBUTE]: job.userId })
  }

  onEnd(_span: ReadableSpan): void {}
  forceFlush(): Promise<void> {
    return Promise.resolve()
  }

  shutdown(): Promise<void> {
    return Promise.resolve()
  }
}

/**
 * When `exportTraces` is on and an OTLP endpoint is set in `env`, installs the async context (once
 * per process) and the SDK. `service` names the app in the traces unless `OTEL_SERVICE_NAME` does.
 */
export function startTelemetry(options: { exportTraces: boolean, env: NodeJS.ProcessEnv, service: string }): Telemetry {
  if (!options.exportTraces || !otlpTracesEndpoint(options.env)) return { exporting: false, close: async () => {} }
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable()
    context.setGlobalContextManager(contextManager)
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.env.OTEL_SERVICE_NAME || options.service }).merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new JobIdsOnSpans(), new BatchSpanProcessor(new OTLPTraceExporter())],
  })
  // The context manager is the one above; the propagator writes W3C `traceparent` into MCP requests.
  provider.register({ contextManager: null, propagator: null })
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  let closing: Promise<void> | undefined
  return {
    exporting: true,
    close: () => (closing ??= provider.shutdown().catch(() => {})),
  }
}

/** A span for each store call a job's run makes (its writes and reads), under the run's span. */
export const traceJobStoreCalls: StoreCallWatcher = (store, operation) => {
  if (!jobOfContext()) return () => {}
  const span = startSpan(`store ${store}.${operation}`, { 'db.operation.name': operation, 'or3.store': store })
  return (failed) => {
    if (failed) failSpan(span, 'store_error')
    span.end()
  }
}
