import type { WebPush } from '../lib/jobs/web-push'
import type { H3Event } from 'h3'
import type { AccountService } from '../lib/auth/accounts'
import type { PersonalSettings } from '../lib/threads/personal-settings'
import type { Memories } from '../lib/tools/memory/memories'
import type { KnowledgeBases } from '../lib/knowledge/knowledge-bases'
import type { DataBackups } from '../lib/stores/sqlite/backup'
import type { ShareLinks } from '../lib/threads/share-links'
import type { AnswerFeedback } from '../lib/threads/feedback'
import type { BackgroundJobManager } from '../lib/jobs/manager'
import type { JobListener } from '../lib/jobs/live-hub'
import { startedServerRuntime } from '../lib/runtime/current'
import type { ToolSources } from '../lib/tools/tool-sources'
import type { LiveEventStreams } from '../lib/http/live-events'
import type { ThreadStore } from '../lib/stores/threads/thread-store'
import type { WorkflowStore } from '../lib/stores/workflows/workflow-store'
import type { WorkflowWebhooks } from '../lib/workflows/webhooks'
import type { FailureWebhooks } from '../lib/workflows/failure-webhooks'
import { workflowExamples } from '../lib/workflows/examples'
import type { WorkflowSchedules } from '../lib/workflows/schedules'
import type { WorkflowToolLookup } from '../lib/workflows/validate'
import type { AppMetrics } from '../lib/metrics/app-metrics'
import type { StatusHistory } from '../lib/metrics/status-history'
import { isBearerToken } from '../lib/security/bearer-token'

const useServerRuntime = startedServerRuntime

/** A person's own preferences, chat presets and folders (`settings`), share links (`shares`), ratings of answers (`feedback`), all their data as a zip (`archive`), the devices they get pushes on (`push`), what the assistant remembers about them (`memory`) and their knowledge bases and those shared with their groups (`knowledge`). */
export function usePersonal(): { settings: PersonalSettings, shares: ShareLinks, feedback: AnswerFeedback, archive: (userId: string) => ReadableStream<Uint8Array>, push: WebPush, memory: Memories, knowledge: KnowledgeBases } {
  const { personal, shares, feedback, archive, webPush, memories, knowledge } = useServerRuntime()
  return { settings: personal, shares, feedback, archive, push: webPush, memory: memories, knowledge }
}

/** The job runtime of this server process (start, abort, the live hub, the job store). */
export function useBackgroundJobs(): BackgroundJobManager {
  return useServerRuntime().jobs
}

/** Where threads and messages are kept (the same backend as jobs). */
export function useThreadStore(): ThreadStore {
  return useServerRuntime().threads
}

/** Saved workflows (with their versions), their inbound webhooks and schedules, the examples shipped with the app, and the tools a workflow is checked against. */
export function useWorkflows(): { saved: WorkflowStore, webhooks: WorkflowWebhooks, failureWebhooks: FailureWebhooks, schedules: WorkflowSchedules, examples: typeof workflowExamples, tools: WorkflowToolLookup } {
  const { workflows, workflowWebhooks, workflowFailureWebhooks, workflowSchedules, runTools } = useServerRuntime()
  return { saved: workflows, webhooks: workflowWebhooks, failureWebhooks: workflowFailureWebhooks, schedules: workflowSchedules, examples: workflowExamples, tools: runTools }
}

/**
 * The seed's `registerJobStream`: attaches `listener` to a job's live events (deltas, tool calls,
 * status). Returns an idempotent disposer, or undefined when the job is not live in this process.
 */
export function registerJobStream(jobId: string, listener: JobListener): (() => void) | undefined {
  return useBackgroundJobs().hub.subscribe(jobId, listener)?.dispose
}

/**
 * The server's monitoring, for a request that may read it: as the Prometheus `scraper` (404 when
 * NUXT_METRICS_ENABLED is off; then the operator's scrape token as a bearer token, or an admin),
 * or as an `admin` (the Status page, whether or not `/metrics` is served). 401 / 403 otherwise.
 */
export async function useMonitoring(event: H3Event, as: 'scraper' | 'admin'): Promise<{ metrics: AppMetrics, status: StatusHistory }> {
  const { metrics, status } = useServerRuntime()
  if (as === 'admin') {
    await requireSessionUser(event, { role: 'admin' })
    return { metrics, status }
  }
  if (!useServerConfig(event).metrics.enabled) throw createError({ statusCode: 404, statusMessage: 'Metrics are off; set NUXT_METRICS_ENABLED=true to serve them.' })
  if (!isBearerToken(getRequestHeader(event, 'authorization'), useServerConfig(event).metrics.token)) await requireSessionUser(event, { role: 'admin' })
  return { metrics, status }
}

/** Backups of the data directory made while the server runs (Admin → Backups); 409 with what to do instead when the data is in Convex. */
export function useDataBackups(): DataBackups {
  const { backups } = useServerRuntime()
  if (!backups) throw createError({ statusCode: 409, statusMessage: 'Not here', message: 'This server keeps its data in Convex: back it up with `npx convex export` (see the README, "Backups, restores and upgrades").' })
  return backups
}

/** Accounts: sign-up and sign-in, sessions' validity, API tokens, invites and what an admin may change. */
export function useAccounts(): AccountService {
  return useServerRuntime().accounts
}

/** Tool sources: the tool catalog as the UI lists it, MCP servers as an admin manages them, and the feed of tool changes (served by `serveToolChanges`). */
export function useToolSources(): ToolSources {
  return useServerRuntime().tools
}

/**
 * Browsers' live connections: `open` serves the one connection a browser keeps (`GET /api/events`:
 * every job its tabs watch and the tools' changes), `change` says which jobs it carries (404 for
 * another person's or a closed one), `serveToolChanges` the older tools-only feed; each counted as
 * one stream against the caps.
 */
export function useLiveEvents(): LiveEventStreams {
  return useServerRuntime().liveEvents
}
