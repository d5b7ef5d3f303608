import { consola } from 'consola'
import { AccountService } from '../lib/auth/accounts'
import { BackgroundJobManager } from '../lib/jobs/manager'
import { JobLiveHub } from '../lib/jobs/live-hub'
import { StreamSlots } from '../lib/http/stream-slots'
import { BodyBudget } from '../lib/http/body-budget'
import { setServerRuntime } from '../lib/runtime'
import { createSecretBox } from '../lib/security/secret-box'
import { serverSecret } from '../lib/security/session-secret'
import { closeStores, openStores } from '../lib/stores'
import { writeJobIntoThread } from '../lib/threads/write-back'
import { ThreadTitles } from '../lib/threads/titles'
import { deleteUserData } from '../lib/auth/delete-user-data'
import { loadMcpConfigFile } from '../lib/tools/mcp/config'
import { McpServerCatalog } from '../lib/tools/mcp/admin-servers'
import { McpServers } from '../lib/tools/mcp/servers'
import { McpAuthorizations } from '../lib/tools/mcp/oauth/authorizations'
import { McpCredentialConsents } from '../lib/tools/mcp/consents'
import { DynamicToolsDirectory } from '../lib/tools/dynamic/directory'
import { deferServerToolsReady, onServerToolsChanged } from '../lib/tools/registry'
import { ToolChangeFeed } from '../lib/tools/tool-changes'
import { ToolSources } from '../lib/tools/tool-sources'
import { loadToolPolicyFile, ToolPolicy } from '../lib/tools/policy/tool-policy'
import { CredentialVault, loadCredentialsFile } from '../lib/tools/credentials/vault'
import { listServerTools } from '../lib/tools/registry'
import { join, resolve } from 'node:path'

const logger = consola.withTag('jobs')
const mcpLogger = consola.withTag('mcp')
/** How often each instance reads the admin's MCP servers again, for changes made on another instance. */
const MCP_SYNC_INTERVAL_MS = 15_000

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
  // Who may use which tools: a policy file that cannot be used stops start-up here, naming the rule and field.
  const toolPolicy = new ToolPolicy(stores.accounts, config.tools.policyFile ? loadToolPolicyFile(config.tools.policyFile) : [], config.tools.policyFile || null)
  // Tool credentials: the operator's server-wide file and each user's own, sealed in the store.
  const credentials = new CredentialVault({
    settings: stores.accounts,
    secretBox: createSecretBox(serverSecret(config), 'tool-credentials'),
    serverWide: config.tools.credentialsFile ? loadCredentialsFile(config.tools.credentialsFile) : {},
    needs: () => listServerTools().flatMap(tool => tool.requiresCredentials.map(need => ({ tool: tool.name, need }))),
  })
  // Open pages hear when the tools change: any registration, an MCP server going down or back, a tool file that broke.
  const toolChanges = new ToolChangeFeed()
  const stopFollowingRegistry = onServerToolsChanged(toolChanges.notify)
  // MCP servers (the operator's and the admin's); placeholders the server-wide credentials fill make one shared connection, others one per person.
  // People's OAuth authorisations with MCP servers configured with `oauth`, sealed per person and server.
  const authorizations = new McpAuthorizations({
    store: stores.accounts,
    secretBox: createSecretBox(serverSecret(config), 'mcp-oauth-grants'),
    servers: () => mcp.oauthServers(),
    onChange: (userId, server) => mcp.authorizationChanged(userId, server),
    logger: mcpLogger,
  })
  const consents = new McpCredentialConsents(stores.accounts)
  const mcp: McpServers = new McpServers({ logger: mcpLogger, connectTimeoutMs: config.mcp.connectTimeoutMs, onStateChange: toolChanges.notify, serverCredentials: credentials.serverWide(), userConnectionIdleMs: config.mcp.userConnectionIdleMs, authorizations, consents })
  // A conversation's first answer is followed by a short title its model writes, counted against
  // the person's daily budget like their answers (the job manager keeps the budgets).
  const titles = new ThreadTitles({
    threads: stores.threads,
    config,
    budget: { allowance: userId => jobs.remainingBudget(userId), record: (userId, spent) => jobs.recordUsage(userId, spent) },
    logger: consola.withTag('threads'),
  })
  const jobs = new BackgroundJobManager({
    store: stores.jobs,
    hub,
    config,
    secretBox: createSecretBox(serverSecret(config), 'job-api-key'),
    logger,
    // An answer that belongs to a thread of its user is written into its assistant message when it ends.
    readAttachment: attachmentId => stores.threads.readAttachment(attachmentId),
    onJobFinished: async (job, endpoint) => {
      if (await writeJobIntoThread(stores.threads, job) && endpoint) titles.after(job, endpoint)
    },
    roleLimits: { forRole: role => accounts!.limits.forRole(role) },
    usage: stores.accounts,
    roleOf: userId => accounts!.roleOf(userId),
    limiterFor: stores.limiterFor,
    toolAccess: async (userId) => {
      // A server that connects per person lists its tools through this person's connection the first time.
      await mcp.discoverFor(userId, await credentials.forUser(userId))
      return toolPolicy.accessFor(await accounts!.policyPrincipal(userId))
    },
    credentialsFor: userId => credentials.forUser(userId),
  })
  accounts = new AccountService(stores.accounts, { hash: hashPassword, verify: verifyPassword }, {
    signInAttemptsPerIpPerMinute: auth.signInAttemptsPerIpPerMinute,
    signInFailuresPerAccount: auth.signInFailuresPerAccount,
    sessionsPerIpPerMinute: auth.sessionsPerIpPerMinute,
    signupsPerIpPerHour: auth.signupsPerIpPerHour,
    limiterFor: stores.limiterFor,
    tokensPerUser: auth.tokensPerUser,
    inviteTtlMs: Math.round(auth.inviteTtlHours * 3_600_000),
    onAccountDeleted: async (userId) => {
      await deleteUserData({ jobs, threads: stores.threads, workflows: stores.workflows }, userId)
      await credentials.deleteUser(userId)
      await authorizations.deleteUser(userId)
      await consents.deleteUser(userId)
    },
    roleLimits: limits.roles,
  })
  // MCP servers connect in the background: start-up does not wait for them. A config file that
  // cannot be used stops start-up here, naming the server and field.
  const mcpCatalog = new McpServerCatalog({
    servers: mcp,
    fileServers: config.mcp.configFile ? loadMcpConfigFile(config.mcp.configFile) : [],
    configFile: config.mcp.configFile || null,
    settings: stores.accounts,
    secretBox: createSecretBox(serverSecret(config), 'mcp-server-secrets'),
    commandsAllowed: config.mcp.adminCommands,
    logger: mcpLogger,
    syncIntervalMs: MCP_SYNC_INTERVAL_MS,
  })
  mcpCatalog.start().catch(error => mcpLogger.error('Could not start the MCP servers', error))
  // The dynamic tools directory: loaded before tools are listed or offered, then watched.
  const dynamicTools = config.tools.dynamic.enabled
    ? new DynamicToolsDirectory(resolve(config.tools.dynamic.dir || join(config.dataDir, 'tools')), consola.withTag('tools'))
    : undefined
  if (dynamicTools) {
    dynamicTools.onChange(toolChanges.notify)
    deferServerToolsReady(dynamicTools.start().catch(error => consola.withTag('tools').error(`The dynamic tools directory ${dynamicTools.dir} could not be watched`, error)))
  }
  const streams = new StreamSlots(config.backgroundJobs.streams)
  const tools = new ToolSources({ mcp, mcpCatalog, dynamicTools, changes: toolChanges, slots: streams, policy: toolPolicy, credentials, authorizations, consents })
  const bodies = new BodyBudget({ perClientBytes: config.limits.bodyBytesInFlightPerIp, totalBytes: config.limits.bodyBytesInFlight })
  setServerRuntime({ jobs, threads: stores.threads, workflows: stores.workflows, accounts, streams, bodies, tools })

  // Until the first account exists, how to create it from another machine (first-run.ts).
  if (!config.siteUrl) {
    accounts.needsSetup().then((needed) => {
      if (needed) consola.withTag('auth').info(`No accounts yet. Create the admin account at http://localhost:${process.env.PORT ?? 3000} on this machine, or from elsewhere with the setup code ${accounts!.firstRun.setupCode} (it changes on every start; set NUXT_SITE_URL to create it through your site instead).`)
    }).catch(() => {})
  }
  jobs.startSweeper()
  jobs.recoverInterruptedJobs()
    .then(count => count > 0 && logger.info(`Resumed ${count} job(s) interrupted by the last shutdown.`))
    .catch(error => logger.error('Could not resume interrupted jobs', error))

  // The HTTP server waits for open connections before running `close`; live job streams never
  // end on their own, so stop the jobs (ending their streams) as soon as the signal arrives.
  let stopping: Promise<void> | undefined
  const stop = () => {
    if (stopping) return stopping
    // The open pages' tool-change streams end at once (like job streams); tool sources close once
    // the jobs that might be calling them have stopped at their checkpoints.
    stopFollowingRegistry()
    toolChanges.close()
    mcpCatalog.close()
    stopping = jobs.shutdown().then(() => Promise.all([hub.close(), titles.close()])).then(() => Promise.all([mcp.close(), dynamicTools?.close()])).then(() => {})
    return stopping
  }
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
