/** The admin's Status page (GET /api/admin/status): the last hour of one server process, and today's model use. */
import type { JobsHealth, HealthReport } from './health'

/** What jobs' model requests and tool calls came to: since the process started, or between two samples. */
export interface ActivityCounts {
  modelRequests: number
  upstreamErrors: number
  toolCalls: number
  toolFailures: number
  tokens: number
  cost: number
}

/** One sample of the process's main figures; its counts are what changed since the sample before. */
export interface StatusSample extends ActivityCounts {
  at: number
  running: number
  waiting: number
  queued: number
  viewers: number
  storeOk: boolean
  storeLatencyMs: number
  /** The event loop's 99th-percentile delay since the sample before. */
  eventLoopDelayMs: number
  /** Share of the time since the sample before that the event loop was busy (0 to 1). */
  eventLoopUtilization: number
  rssBytes: number
  heapUsedBytes: number
}

/** What one model was used for, as the upstream reported it. */
export interface ModelUse {
  model: string
  requests: number
  promptTokens: number
  completionTokens: number
  cost: number
}

/** The page's whole view. */
export interface ServerStatus {
  at: number
  intervalMs: number
  /** Oldest first, the last hour at most. */
  samples: StatusSample[]
  jobs: JobsHealth['jobs']
  store: JobsHealth['store']
  mcpServers: HealthReport['tools']['mcpServers']
  viewers: number
  /** Model use since `since`: midnight UTC, or when this process started if later. */
  today: { since: number, models: ModelUse[] }
}
