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
 * promise hooks for every promise of the process, a cost only worth paying for traces. The SDK
 * itself (telemetry-sdk.ts, some 100 ms of module loading) is loaded only then, too.
 */
import { consola } from 'consola'
import { failSpan, jobOfContext, startSpan } from '../tracing'
import type { StoreCallWatcher } from '../metrics/instrumented-store'

/** Where traces go: the OTLP endpoint variables, as OpenTelemetry's conventions name them. */
export function otlpTracesEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined
}

/** The process's tracing, started by `startTelemetry`. */
export interface Telemetry {
  /** Whether spans are recorded and exported. */
  readonly exporting: boolean
  /** Resolves once spans are recorded (at once when they are not: nothing to wait for). */
  readonly ready: Promise<void>
  /** Sends the spans not yet sent and stops (idempotent). */
  close(): Promise<void>
}

/**
 * When `exportTraces` is on and an OTLP endpoint is set in `env`, loads the SDK and installs it with
 * the async context (telemetry-sdk.ts); `ready` resolves once spans are recorded (the server holds
 * requests until then, so no job's span is lost to the moment it takes). `service` names the app
 * in the traces unless `OTEL_SERVICE_NAME` does.
 */
export function startTelemetry(options: { exportTraces: boolean, env: NodeJS.ProcessEnv, service: string }): Telemetry {
  if (!options.exportTraces || !otlpTracesEndpoint(options.env)) return { exporting: false, ready: Promise.resolve(), close: async () => {} }
  const installed = import('./telemetry-sdk').then(sdk => sdk.installTracing(options.env.OTEL_SERVICE_NAME || options.service))
  let closing: Promise<void> | undefined
  return {
    exporting: true,
    // A SDK that cannot load (a broken install) leaves traces off, said once, rather than requests held.
    ready: installed.then(() => {}, error => consola.withTag('tracing').error('Traces are not exported: the OpenTelemetry SDK could not load.', error)),
    close: () => (closing ??= installed.then(tracing => tracing.close(), () => {})),
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
