/** Provisioning over SCIM (auth/scim/), when the operator set its token: what it needs of the runtime. */
import type { ServerConfig } from '../config/server-config'
import type { AccountService } from '../auth/accounts'
import { MAX_LISTED_ACCOUNTS } from '../auth/accounts'
import { ScimProvisioning } from '../auth/scim/scim-provisioning'
import type { BackgroundJobManager } from '../jobs/manager'
import type { AppStores } from '../stores'

export function scimProvisioning(config: ServerConfig, stores: Pick<AppStores, 'accounts' | 'settings' | 'jobs'>, accounts: AccountService, jobs: Pick<BackgroundJobManager, 'abortJob'>): ScimProvisioning | null {
  if (!config.auth.scimToken) return null
  return new ScimProvisioning({
    accounts,
    accountStore: stores.accounts,
    settings: stores.settings,
    // A deactivated person's answers and workflow runs stop with their sessions.
    stopJobs: async (userId) => {
      for (const job of await stores.jobs.listJobs({ userId, status: 'streaming', limit: 1_000 })) await jobs.abortJob(job.id)
    },
    role: config.auth.scimRole,
    maxAccounts: MAX_LISTED_ACCOUNTS,
    ...(config.auth.breakGlassAdmin ? { breakGlassAdmin: config.auth.breakGlassAdmin } : {}),
  })
}
