/**
 * Product feature flags. Each flag is the build-time default of the matching
 * `runtimeConfig` switch in nuxt.config.ts, so a deployment can still flip it with a
 * `NUXT_*` environment variable without a rebuild.
 */
export interface Or3FeatureFlag {
  /** Whether the feature is on by default. */
  enabled: boolean
  /** What the feature does, for people reading or generating configuration docs. */
  description: string
}

export interface Or3Config {
  features: {
    backgroundJobs: Or3FeatureFlag
    backgroundToolExecution: Or3FeatureFlag
    toolDiscovery: Or3FeatureFlag
    workflows: Or3FeatureFlag
    sseBatching: Or3FeatureFlag
    offlineDemoModel: Or3FeatureFlag
    metrics: Or3FeatureFlag
    tracing: Or3FeatureFlag
  }
}

/** Typed identity helper so editors check and complete the config. */
export function defineOr3Config(config: Or3Config): Or3Config {
  return config
}

export default defineOr3Config({
  features: {
    backgroundJobs: {
      enabled: true,
      description: 'Run chat answers as server-side jobs that outlive the browser tab and can be watched from any tab.',
    },
    backgroundToolExecution: {
      enabled: true,
      description: 'Let background jobs execute server tools in a multi-round loop with the model.',
    },
    toolDiscovery: {
      enabled: true,
      description: 'Register every tool file under server/tools/** at start-up, without touching core code.',
    },
    workflows: {
      enabled: true,
      description: 'Run multi-node agent pipelines from the UI as durable background jobs.',
    },
    sseBatching: {
      enabled: true,
      description: 'Batch streamed text deltas before broadcasting them to live viewers over SSE.',
    },
    offlineDemoModel: {
      enabled: true,
      description: 'Offer a built-in demo model that answers (and calls tools) without an API key or network.',
    },
    metrics: {
      enabled: false,
      description: 'Serve Prometheus metrics at /metrics (to a bearer token or an admin): jobs, tool calls, viewers, the store, MCP servers, the process.',
    },
    tracing: {
      enabled: true,
      description: 'Send OpenTelemetry traces (a span per job, model request, tool call and store call) over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.',
    },
  },
})
