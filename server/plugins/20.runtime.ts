import { consola } from 'consola'
import { AccountService } from '../lib/auth/accounts'
import { BackgroundJobManager } from '../lib/jobs/manager'
import { JobLiveHub } from '../lib/jobs/live-hub'
import { StreamSlots } from '../lib/http/stream-slots'
import { setServerRuntime } from '../lib/runtime'
import { createSecretBox } from '../lib/security/secret-box'
import { serverSecret } from '../lib/security/session-secret'
import { closeStores, openStores } from '../lib/stores'
import { writeJobIntoThread } from '../lib/threads/write-back'
import { deleteUserData } from '../lib/auth/delete-user-data'
import { loadMcpConfigFile } from '../lib/tools/mcp/config'
import { McpServers } from '../lib/tools/mcp/servers'
import { DynamicToolsDirectory } from '../lib/tools/dynamic/directory'
import { deferServerToolsReady } from '../lib/tools/registry'
import { join, resolve } from 'node:path'

const logger = consola.withTag('jobs')

/**
 * Starts the runtime: opens the stores, resumes jobs a previous process left running, runs the
 * sweeper, and on shutdown stops every run at its checkpoint before the stores close.
 */
export default defineNitroPlugin((nitroApp) => {
  const config = useServerConfig()
  const stores = openStores(config)
  const { sseBatching } = config.backgroundJobs
  const hub = new JobLiveHub({ batchingEnabled: sseBatching.enabled, batchIntervalMs: sseBatching.intervalMs, batchSize: sseBatching.batchSize, adaptive: sseBatching.adaptive })
  const { auth, limits } = config
  // Accounts come first: the job manager asks them for each role's limits and counts usage in their store.
  let accounts: AccountService | undefined
  const jobs = new BackgroundJobManager({
    store: stores.jobs,
    hub,
    config,
    secretBox: createSecretBox(serverSecret(config), 'job-api-key'),
    logger,
    // An answer that belongs to a thread of its user is written into its assistant message when it ends.
    onJobFinished: async (job) => {
      await writeJobIntoThread(stores.threads, job)
    },
    roleLimits: { forRole: role => accounts!.limits.forRole(role) },
    usage: stores.accounts,
    roleOf: userId => accounts!.roleOf(userId),
    limiterFor: stores.limiterFor,
  })
  accounts = new AccountService(stores.accounts, { hash: hashPassword, verify: verifyPassword }, {
    signInAttemptsPerIpPerMinute: auth.signInAttemptsPerIpPerMinute,
    signInFailuresPerAccount: auth.signInFailuresPerAccount,
    sessionsPerIpPerMinute: auth.sessionsPerIpPerMinute,
    limiterFor: stores.limiterFor,
    tokensPerUser: auth.tokensPerUser,
    inviteTtlMs: Math.round(auth.inviteTtlHours * 3_600_000),
    onAccountDeleted: userId => deleteUserData({ jobs, threads: stores.threads, workflows: stores.workflows }, userId),
    roleLimits: limits.roles,
  })
  // MCP servers connect in the background: start-up does not wait for them. A config file that
  // cannot be used stops start-up here, naming the server and field.
  const mcp = config.mcp.configFile
    ? new McpServers(loadMcpConfigFile(config.mcp.configFile), { logger: consola.withTag('mcp'), connectTimeoutMs: config.mcp.connectTimeoutMs })
    : undefined
  mcp?.start()
  // The dynamic tools directory: loaded before tools are listed or offered, then watched.
  const dynamicTools = config.tools.dynamic.enabled
    ? new DynamicToolsDirectory(resolve(config.tools.dynamic.dir || join(config.dataDir, 'tools')), consola.withTag('tools'))
    : undefined
  if (dynamicTools) deferServerToolsReady(dynamicTools.start().catch(error => consola.withTag('tools').error(`The dynamic tools directory ${dynamicTools.dir} could not be watched`, error)))
  setServerRuntime({ jobs, threads: stores.threads, workflows: stores.workflows, accounts, streams: new StreamSlots(config.backgroundJobs.streams), mcp, dynamicTools })

  jobs.startSweeper()
  jobs.recoverInterruptedJobs()
    .then(count => count > 0 && logger.info(`Resumed ${count} job(s) interrupted by the last shutdown.`))
    .catch(error => logger.error('Could not resume interrupted jobs', error))

  // The HTTP server waits for open connections before running `close`; live job streams never
  // end on their own, so stop the jobs (ending their streams) as soon as the signal arrives.
  let stopping: Promise<void> | undefined
  const stop = () => (stopping ??= jobs.shutdown().then(() => hub.close()).then(() => Promise.all([mcp?.close(), dynamicTools?.close()])).then(() => {}))
  const onSignal = () => void stop()
  process.once('SIGTERM', onSignal)
  process.once('SIGINT', onSignal)

  nitroApp.hooks.hook('close', async () => {
    process.off('SIGTERM', onSignal)
    process.off('SIGINT', onSignal)
    await stop()
    await closeStores(stores)
    setServerRuntime(undefined)
  })
})
