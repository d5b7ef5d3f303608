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

const logger = consola.withTag('jobs')

function createProvider(config: ServerConfig): BackgroundJobProvider {
  switch (config.backgroundJobs.storageProvider) {
    case 'sqlite':
      return createSqliteJobProvider({ path: join(config.dataDir, 'or3.sqlite') })
    case 'memory':
      return createMemoryJobProvider()
    case 'convex':
      return createConvexJobProvider({ client: new ConvexHttpClient(config.convex.url), secret: config.convex.serverSecret, leaseMs: config.convex.leaseMs })
  }
}

/**
 * Starts the job runtime: opens the store, resumes jobs a previous process left running, runs the
 * sweeper, and on shutdown stops every run at its checkpoint before the store closes.
 */
export default defineNitroPlugin((nitroApp) => {
  const config = useServerConfig()
  const provider = createProvider(config)
  const { sseBatching } = config.backgroundJobs
  const hub = new JobLiveHub({ batchingEnabled: sseBatching.enabled, batchIntervalMs: sseBatching.intervalMs, batchSize: sseBatching.batchSize })
  const manager = new BackgroundJobManager({ provider, hub, config, secretBox: useApiKeyBox(), logger })
  setBackgroundJobManager(manager)

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
    setBackgroundJobManager(undefined)
  })
})
