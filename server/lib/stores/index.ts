/**
 * The one place stores are chosen: jobs, threads, saved workflows and accounts on the same backend
 * (`backgroundJobs.storageProvider`): one sqlite file, process memory (tests), or Convex.
 */
import { join } from 'node:path'
import { ConvexHttpClient } from 'convex/browser'
import type { ServerConfig } from '../config/server-config'
import { createConvexJobStore } from './jobs/convex'
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
import { withThreadQuota, withWorkflowQuota } from './quotas'
import type { AccountStore } from './accounts/account-store'
import { createConvexAccountStore } from './accounts/convex'
import { createMemoryAccountStore } from './accounts/memory'
import { createSqliteAccountStore } from './accounts/sqlite'
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
  accounts: AccountStore
  /** Where rate-limit counters live: shared by every instance on Convex, else this process's memory. */
  limiterFor: LimiterFactory
}

/** Opens the stores the config asks for, with the per-user quotas of `limits` applied. */
export function openStores(config: ServerConfig): AppStores {
  const stores = openBackend(config)
  return { ...stores, threads: withThreadQuota(stores.threads, config.limits), workflows: withWorkflowQuota(stores.workflows, config.limits) }
}

function openBackend(config: ServerConfig): AppStores {
  switch (config.backgroundJobs.storageProvider) {
    case 'sqlite': {
      const path = join(config.dataDir, 'or3.sqlite')
      // Another process holding the file's write lock is waited out between requests, not inside them.
      return { jobs: withBusyRetry(createSqliteJobStore({ path })), threads: withBusyRetry(createSqliteThreadStore({ path })), workflows: withBusyRetry(createSqliteWorkflowStore({ path })), accounts: withBusyRetry(createSqliteAccountStore({ path })), limiterFor: memoryLimiters }
    }
    case 'memory':
      return { jobs: createMemoryJobStore(), threads: createMemoryThreadStore(), workflows: createMemoryWorkflowStore(), accounts: createMemoryAccountStore(), limiterFor: memoryLimiters }
    case 'convex': {
      const client = new ConvexHttpClient(config.convex.url)
      const secret = config.convex.serverSecret
      return { jobs: createConvexJobStore({ client, secret, leaseMs: config.convex.leaseMs }), threads: createConvexThreadStore({ client, secret }), workflows: createConvexWorkflowStore({ client, secret }), accounts: withAccountCache(createConvexAccountStore({ client, secret }), CONVEX_ACCOUNT_CACHE_MS), limiterFor: convexLimiters(client, secret) }
    }
  }
}

/** Closes every store. */
export async function closeStores(stores: AppStores): Promise<void> {
  await Promise.all([stores.jobs.close(), stores.threads.close(), stores.workflows.close(), stores.accounts.close()])
}
