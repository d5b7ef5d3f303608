/**
 * This process's runtime: the job manager, the stores and the accounts, built by createServerRuntime at
 * start-up. One place holds it; server/utils/runtime.ts is how routes reach it.
 */
import { DomainError, type HttpAnswer } from '../domain-error'
import type { MessageQueue } from '../threads/message-queue'
import type { ThreadAnswerContext } from '../threads/send-message'
import type { ChatThread } from '../../../shared/types/thread'
import type { Transcriptions } from '../voice/transcriptions'
import type { Speech } from '../voice/speech'
import type { McpApps } from '../tools/mcp/app-calls'
import type { WorkflowSteers } from '../jobs/workflow-steers'
import type { WebPush } from '../jobs/web-push'
import type { ScimProvisioning } from '../auth/scim/scim-provisioning'
import type { AccountService } from '../auth/accounts'
import type { OidcSignIn } from '../auth/oidc/oidc-sign-in'
import type { PersonalSettings } from '../threads/personal-settings'
import type { Memories } from '../tools/memory/memories'
import type { KnowledgeBases } from '../knowledge/knowledge-bases'
import type { DataBackups } from '../stores/sqlite/backup'
import type { ShareLinks } from '../threads/share-links'
import type { AnswerFeedback } from '../threads/feedback'
import type { BodyBudget } from '../http/body-budget'
import type { StreamSlots } from '../http/stream-slots'
import type { ToolSources } from '../tools/tool-sources'
import type { BackgroundJobManager } from '../jobs/manager'
import type { ThreadStore } from '../stores/threads/thread-store'
import type { WorkflowStore } from '../stores/workflows/workflow-store'
import type { WorkflowWebhooks } from '../workflows/webhooks'
import type { FailureWebhooks } from '../workflows/failure-webhooks'
import type { WorkflowSchedules } from '../workflows/schedules'
import type { RunTools } from '../tools/run-tools'
import type { AppMetrics } from '../metrics/app-metrics'
import type { StatusHistory } from '../metrics/status-history'
import type { LiveEventStreams } from '../http/live-events'

/** The services createServerRuntime builds (server/plugins/20.runtime.ts starts it and closes it on shutdown). */
export interface ServerRuntime {
  jobs: BackgroundJobManager
  threads: ThreadStore
  /** What a conversation's answers are asked with now: its owner's instructions, memories, groups' instructions, its knowledge. */
  answerContext: (thread: ChatThread) => Promise<ThreadAnswerContext>
  /** Conversations' message queues (what is sent while an answer runs). */
  messageQueue: MessageQueue
  /** Dictation made into text by the operator's speech-to-text endpoint. */
  transcriptions: Transcriptions
  /** Read aloud by the operator's text-to-speech endpoint. */
  speech: Speech
  /** Messages to workflows' running agent steps. */
  workflowSteers: WorkflowSteers
  /** MCP Apps: a tool's interactive page, and the calls it makes back. */
  mcpApps: McpApps
  workflows: WorkflowStore
  /** Workflows' inbound webhooks. */
  workflowWebhooks: WorkflowWebhooks
  /** Workflows' failure webhooks (called when a run fails). */
  workflowFailureWebhooks: FailureWebhooks
  /** Web Push to people's devices (refusing with 404 when `NUXT_PUSH_ENABLED` is off). */
  webPush: WebPush
  /** Workflows' schedules, and the ticker that starts their runs. */
  workflowSchedules: WorkflowSchedules
  /** The tool registry runs read (what a workflow is checked against when saved or started). */
  runTools: RunTools
  /** Accounts, sessions' validity, API tokens, invites. */
  accounts: AccountService
  /** Provisioning over SCIM; null when the operator set no token. */
  scim: ScimProvisioning | null
  /** Sign-in through the operator's OpenID Connect providers. */
  oidc: OidcSignIn
  /** People's preferences, chat presets and folders. */
  personal: PersonalSettings
  /** What the model remembers about each person who turned memory on. */
  memories: Memories
  /** Knowledge bases: people's and groups' documents, searched in the conversations they are attached to. */
  knowledge: KnowledgeBases
  /** Conversations shared as read-only snapshots. */
  shares: ShareLinks
  /** 👍 / 👎 on answers and the admin's report. */
  feedback: AnswerFeedback
  /** Backups of the data directory made while the server runs (null: the data is in Convex). */
  backups: DataBackups | null
  /** "Export my data": a person's data as a zip stream. */
  archive: (userId: string) => ReadableStream<Uint8Array>
  /** Open job streams, counted against their caps. */
  streams: StreamSlots
  /** Browsers' shared live connections (`GET /api/events`). */
  liveEvents: LiveEventStreams
  /** Request bodies being read, counted per client address and for the server. */
  bodies: BodyBudget
  /** MCP servers (the operator's and the admin's), the dynamic tools directory, and tool-change events. */
  tools: ToolSources
  /** Prometheus metrics (served at `/metrics` only when `NUXT_METRICS_ENABLED` is on). */
  metrics: AppMetrics
  /** The last hour of the main figures, for the admin's Status page. */
  status: StatusHistory
}

let runtime: ServerRuntime | undefined

/** Installs (or, with undefined, removes) this process's runtime; only server/plugins/20.runtime.ts calls it. */
export function setServerRuntime(next: ServerRuntime | undefined): void {
  runtime = next
}

/** The runtime, or undefined while the server is starting or stopping. */
export function currentServerRuntime(): ServerRuntime | undefined {
  return runtime
}

/** A request that came before the runtime was built (or after it was closed): 503, try again. */
export class ServerStartingError extends DomainError {
  override name = 'ServerStartingError'
  constructor() {
    super('The server is starting; try again in a moment.')
  }

  httpAnswer(): HttpAnswer {
    return { statusCode: 503, statusMessage: this.message, message: this.message }
  }
}

/** The runtime, for a request; a `ServerStartingError` (503) while there is none. */
export function startedServerRuntime(): ServerRuntime {
  if (!runtime) throw new ServerStartingError()
  return runtime
}
