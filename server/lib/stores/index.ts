/**
 * The one place stores are chosen: jobs, threads, saved workflows and accounts on the same backend
 * (`backgroundJobs.storageProvider`): one sqlite file, process memory (tests), or Convex.
 */
import type { KnowledgeStore } from './knowledge/knowledge-store'
import { createMemoryKnowledgeStore } from './knowledge/memory'
import { createSqliteKnowledgeStore } from './knowledge/sqlite'
import { createConvexKnowledgeStore } from './knowledge/convex'
import { join } from 'node:path'
import type { ServerConfig } from '../config/server-config'
import { createConvexJobStore } from './jobs/convex'
import { createConvexHttpClient } from './convex/http-client'
import { DATABASE_FILE, openSqliteDatabase } from './sqlite/database'
import { SqliteSpace } from './sqlite/space'
import type { JobStore } from './jobs/job-store'
import { createMemoryJobStore } from './jobs/memory'
import { createSqliteJobStore } from './jobs/sqlite'
import { createConvexThreadStore } from './threads/convex'
import { createMemoryThreadStore } from './threads/memory'
import { createSqliteThreadStore } from './threads/sqlite'
import type { ThreadStore } from './threads/thread-store'
import { createConvexWorkflowStore } from './workflows/convex'
import { createMemoryWorkflowStore } from './workflows/memory'
import { createSqliteWorkflowStore } from './workflows/sqlite'
import type { WorkflowStore } from './workflows/workflow-store'
import type { WorkflowRunStore } from './workflows/run-store'
import { createConvexWorkflowRunStore } from './workflows/runs-convex'
import { createMemoryWorkflowRunStore } from './workflows/runs-memory'
import { createSqliteWorkflowRunStore } from './workflows/runs-sqlite'
import { withThreadQuota, withWorkflowQuota } from './quotas'
import type { WorkspaceStore } from './workspaces/workspace-store'
import { createMemoryWorkspaceStore } from './workspaces/memory'
import { createSqliteWorkspaceStore } from './workspaces/sqlite'
import { createConvexWorkspaceStore } from './workspaces/convex'
import type { AccountBackend, AccountStore, ApiTokenStore, IdentityStore } from './accounts/account-store'
import type { SettingsStore } from './settings/settings-store'
import type { UsageLedger } from './usage/usage-ledger'
import { createConvexAccountBackend } from './accounts/convex'
import { createMemoryAccountBackend } from './accounts/memory'
import { createSqliteAccountBackend } from './accounts/sqlite'
import { withAccountCache } from './accounts/cached'
import { withBusyRetry } from './sqlite/busy'
import { convexLimiters } from './rate-limits/convex'
import { memoryLimiters, type LimiterFactory } from './rate-limits/limiters'

/** How long an instance remembers an account lookup on Convex (see accounts/cached.ts). */
const CONVEX_ACCOUNT_CACHE_MS = 2_000

/** Every store of the app. */
export interface AppStores {
  jobs: JobStore
  threads: ThreadStore
  workflows: WorkflowStore
  /** Workflow runs, kept for days after their jobs' live state is gone. */
  workflowRuns: WorkflowRunStore
  /** The files of conversations' and workflow runs' workspaces. */
  workspaces: WorkspaceStore
  /** Accounts and invites. */
  accounts: AccountStore
  /** People's API tokens. */
  tokens: ApiTokenStore
  /** Which identity provider's person signs in to which account. */
  identities: IdentityStore
  /** Small shared values (the admin's settings, people's sealed credentials and grants) and locks. */
  settings: SettingsStore
  /** Each principal's daily usage, for budgets. */
  usage: UsageLedger
  /** Knowledge bases, their documents and passages. */
  knowledge: KnowledgeStore
  /** Where rate-limit counters live: shared by every instance on Convex, else this process's memory. */
  limiterFor: LimiterFactory
  /** With sqlite: the file's free pages, given back in small steps (Convex frees its own). */
  space?: SqliteSpace
  /** Closes every store. */
  close: () => Promise<void>
}

/** Opens the stores the config asks for, with the per-user quotas of `limits` applied. */
export function openStores(config: ServerConfig): AppStores {
  const { accounts, ...stores } = openBackend(config)
  return {
    ...stores,
    threads: withThreadQuota(stores.threads, config.limits),
    workflows: withWorkflowQuota(stores.workflows, config.limits),
    ...accountStoresOf(accounts),
    close: async () => {
      await Promise.all([stores.jobs.close(), stores.threads.close(), stores.workflows.close(), stores.workflowRuns.close(), stores.workspaces.close(), stores.knowledge.close(), accounts.close()])
      stores.space?.close()
    },
  }
}

/** The five stores one account backend keeps (the same tables, or deployment), each handed to the services that need it. */
export function accountStoresOf(backend: AccountBackend): Pick<AppStores, 'accounts' | 'tokens' | 'identities' | 'settings' | 'usage'> {
  return { accounts: backend, tokens: backend, identities: backend, settings: backend, usage: backend }
}

type Backend = Omit<AppStores, 'accounts' | 'tokens' | 'identities' | 'settings' | 'usage' | 'close'> & { accounts: AccountBackend }

function openBackend(config: ServerConfig): Backend {
  switch (config.backgroundJobs.storageProvider) {
    case 'sqlite': {
      const path = join(config.dataDir, DATABASE_FILE)
      // Another process holding the file's write lock is waited out between requests, not inside them.
      return { jobs: withBusyRetry(createSqliteJobStore({ path })), threads: withBusyRetry(createSqliteThreadStore({ path })), workflows: withBusyRetry(createSqliteWorkflowStore({ path })), workflowRuns: withBusyRetry(createSqliteWorkflowRunStore({ path })), workspaces: withBusyRetry(createSqliteWorkspaceStore({ path })), knowledge: withBusyRetry(createSqliteKnowledgeStore({ path })), accounts: withBusyRetry(createSqliteAccountBackend({ path })), limiterFor: memoryLimiters, space: new SqliteSpace(openSqliteDatabase(path)) }
    }
    case 'memory':
      return { jobs: createMemoryJobStore(), threads: createMemoryThreadStore(), workflows: createMemoryWorkflowStore(), workflowRuns: createMemoryWorkflowRunStore(), workspaces: createMemoryWorkspaceStore(), knowledge: createMemoryKnowledgeStore(), accounts: createMemoryAccountBackend(), limiterFor: memoryLimiters }
    case 'convex': {
      const client = createConvexHttpClient({ url: config.convex.url, timeoutMs: config.convex.requestTimeoutMs })
      const secret = config.convex.serverSecret
      return { jobs: createConvexJobStore({ client, secret, leaseMs: config.convex.leaseMs, pulseMs: config.convex.pulseMs }), threads: createConvexThreadStore({ client, secret }), workflows: createConvexWorkflowStore({ client, secret }), workflowRuns: createConvexWorkflowRunStore({ client, secret }), workspaces: createConvexWorkspaceStore({ client, secret }), knowledge: createConvexKnowledgeStore({ client, secret }), accounts: withAccountCache(createConvexAccountBackend({ client, secret }), CONVEX_ACCOUNT_CACHE_MS), limiterFor: convexLimiters(client, secret) }
    }
  }
}
