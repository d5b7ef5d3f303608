import { join } from 'node:path'
import { consola } from 'consola'
import { BackgroundJobManager } from '../lib/background-jobs/job-manager'
import { JobLiveHub } from '../lib/background-jobs/live-hub'
import { createMemoryJobProvider } from '../utils/background-jobs/providers/memory'
import { createSqliteJobProvider } from '../utils/background-jobs/providers/sqlite'
import { createConvexJobProvider } from '../utils/background-jobs/providers/convex'
import { ConvexHttpClient } from 'convex/browser'
import type { BackgroundJobProvider } from '../utils/background-jobs/providers/provider'
import type { ServerConfig } from '../lib/config/server-config'
import { messageUpdateFromJob } from '../lib/threads/thread-history'
import { createMemoryThreadStore } from '../utils/threads/memory'
import { createSqliteThreadStore } from '../utils/threads/sqlite'
import { createConvexThreadStore } from '../utils/threads/convex'
import type { ThreadStore } from '../utils/threads/types'
import { createMemoryWorkflowStore } from '../utils/workflows/memory'
import { createSqliteWorkflowStore } from '../utils/workflows/sqlite'
import { createConvexWorkflowStore } from '../utils/workflows/convex'
import type { WorkflowStore } from '../utils/workflows/types'

const logger = consola.withTag('jobs')

/** The job store and the thread store, on the same backend. */
function createStores(config: ServerConfig): { provider: BackgroundJobProvider, threads: ThreadStore, workflows: WorkflowStore } {
  switch (config.backgroundJobs.storageProvider) {
    case 'sqlite': {
      const path = join(config.dataDir, 'or3.sqlite')
      return { provider: createSqliteJobProvider({ path }), threads: createSqliteThreadStore({ path }), workflows: createSqliteWorkflowStore({ path }) }
    }
    case 'memory':
      return { provider: createMemoryJobProvider(), threads: createMemoryThreadStore(), workflows: createMemoryWorkflowStore() }
    case 'convex': {
      const client = new ConvexHttpClient(config.convex.url)
      const secret = config.convex.serverSecret
      return { provider: createConvexJobProvider({ client, secret, leaseMs: config.convex.leaseMs }), threads: createConvexThreadStore({ client, secret }), workflows: createConvexWorkflowStore({ client, secret }) }
    }
  }
}

/**
 * Starts the job runtime: opens the store, resumes jobs a previous process left running, runs the
 * sweeper, and on shutdown stops every run at its checkpoint before the store closes.
 */
export default defineNitroPlugin((nitroApp) => {
  const config = useServerConfig()
  const { provider, threads, workflows } = createStores(config)
  const { sseBatching } = config.backgroundJobs
  const hub = new JobLiveHub({ batchingEnabled: sseBatching.enabled, batchIntervalMs: sseBatching.intervalMs, batchSize: sseBatching.batchSize })
  const manager = new BackgroundJobManager({
    provider,
    hub,
    config,
    secretBox: useApiKeyBox(),
    logger,
    // An answer that belongs to a thread is written into its assistant message when it ends.
    onJobFinished: async (job) => {
      const message = await threads.getMessage(job.messageId)
      if (message && message.threadId === job.threadId) await threads.updateMessage(message.id, { ...messageUpdateFromJob(job), jobId: job.id })
    },
  })
  setBackgroundJobManager(manager)
  setThreadStore(threads)
  setWorkflowStore(workflows)

  manager.startSweeper()
  manager.recoverInterruptedJobs()
    .then(count => count > 0 && logger.info(`Resumed ${count} job(s) interrupted by the last shutdown.`))
    .catch(error => logger.error('Could not resume interrupted jobs', error))

  // The HTTP server waits for open connections before running `close`; live job streams never
  // end on their own, so stop the jobs (ending their streams) as soon as the signal arrives.
  let stopping: Promise<void> | undefined
  const stop = () => (stopping ??= manager.shutdown().then(() => hub.close()))
  const onSignal = () => void stop()
  process.once('SIGTERM', onSignal)
  process.once('SIGINT', onSignal)

  nitroApp.hooks.hook('close', async () => {
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
    await stop()
    await provider.close()
    await threads.close()
    await workflows.close()
    setBackgroundJobManager(undefined)
    setThreadStore(undefined)
    setWorkflowStore(undefined)
  })
})
