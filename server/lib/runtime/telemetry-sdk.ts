/**
 * The OpenTelemetry SDK, loaded by telemetry.ts only when traces go somewhere: the async context
 * (once per process), a tracer provider batching spans to the OTLP/HTTP exporter (which reads the
 * standard `OTEL_EXPORTER_OTLP_*` and `OTEL_BSP_*` variables itself), the job's ids copied onto
 * every span made during its run, and the W3C propagator that writes `traceparent` into MCP requests.
 */
import { context, propagation, type Context } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions'
import { jobOfContext, JOB_ID_ATTRIBUTE, USER_ID_ATTRIBUTE } from '../tracing'

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

/** Installs the async context (once per process) and a provider exporting spans as `service`; `close` sends what is left and stops. */
export function installTracing(service: string): { close: () => Promise<void> } {
  if (!contextManager) {
    contextManager = new AsyncLocalStorageContextManager().enable()
    context.setGlobalContextManager(contextManager)
  }
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }).merge(detectResources({ detectors: [envDetector] })),
    spanProcessors: [new JobIdsOnSpans(), new BatchSpanProcessor(new OTLPTraceExporter())],
  })
  // The context manager is the one above; the propagator writes W3C `traceparent` into MCP requests.
  provider.register({ contextManager: null, propagator: null })
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  return { close: () => provider.shutdown().catch(() => {}) }
}
