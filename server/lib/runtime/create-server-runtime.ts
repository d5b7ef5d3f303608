/**
 * Builds every service of one server process from its validated config, in plain TypeScript:
 * the stores, tool sources (policy, credentials, MCP servers, the dynamic tools directory), the
 * accounts, the job manager and what follows a job (its thread's answer and title), and the caps
 * of streams and bodies. Each service is made after everything it needs, so nothing refers ahead;
 * what a later service adds to an earlier one (a finished job's follow-up, an account's deletion
 * steps) is registered as a listener before `start`.
 *
 * The Nitro plugin (server/plugins/20.runtime.ts) only calls this, installs the result, and ties
 * `stop` and `close` to the process's signals and Nitro's `close` hook; a unit test builds it with
 * the memory stores.
 */
import { join, resolve } from 'node:path'
import { consola } from 'consola'
import type { ServerConfig } from '../config/server-config'
import { loadCredentialsFile, CredentialVault } from '../tools/credentials/vault'
import { DynamicToolsDirectory } from '../tools/dynamic/directory'
import { McpServerCatalog } from '../tools/mcp/admin-servers'
import { loadMcpConfigFile } from '../tools/mcp/config'
import { McpCredentialConsents } from '../tools/mcp/consents'
import { McpServers } from '../tools/mcp/servers'
import { McpApps } from '../tools/mcp/app-calls'
import { WorkflowSteers } from '../jobs/workflow-steers'
import { loadToolPolicyFile, ToolPolicy } from '../tools/policy/tool-policy'
import { deferServerToolsReady, listServerTools, onServerToolsChanged, registerServerTool } from '../tools/registry'
import { processTools } from '../tools/run-tools'
import { Subagents } from '../jobs/subagents'
import { ToolChangeFeed } from '../tools/tool-changes'
import { LiveEventStreams } from '../http/live-events'
import { ToolSources } from '../tools/tool-sources'
import { registerWorkbenchTools } from '../tools/workbench'
import { Workspaces } from '../tools/workspace/workspaces'
import { RefusalError } from '../domain-error'
import { pushingNotes, WebPush } from '../jobs/web-push'
import { RUN_OUTPUTS_FOLDER, type OutputFileAccess } from '../workflows/output-files'
import { UserTools } from '../tools/user-tools/user-tools'
import { registerMemory, withMemoryGate } from '../tools/memory/memory-tools'
import { withKnowledgeGate } from '../knowledge/knowledge-tool'
import { createKnowledge } from './knowledge'
import { scimProvisioning } from './scim'
import { createSecretBox } from '../security/secret-box'
import { allowedNetworksOf } from '../tools/web/web-tools'
import { serverSecret } from '../security/session-secret'
import { openStores } from '../stores'
import { BackgroundJobManager } from '../jobs/manager'
import { JobLiveHub } from '../jobs/live-hub'
import { ThreadTitles } from '../threads/titles'
import { writeJobIntoThread } from '../threads/write-back'
import { answerContextOf, createMessageQueue } from './message-queue'
import { voiceServices } from '../voice/voice-services'
import { registerImages } from './images'
import { AccountService, type PasswordHasher } from '../auth/accounts'
import { OidcSignIn } from '../auth/oidc/oidc-sign-in'
import { loadOidcProviders } from '../auth/oidc/provider-config'
import { deleteUserData } from '../auth/delete-user-data'
import { PersonalArchives } from '../auth/personal-archive'
import { DataBackups } from '../stores/sqlite/backup'
import { BACKUPS_DIR } from '../stores/sqlite/database'
import packageJson from '../../../package.json'
import { WorkflowWebhooks } from '../workflows/webhooks'
import { createWorkflowAutomation } from './workflow-automation'
import { PersonalSettings } from '../threads/personal-settings'
import { ShareLinks } from '../threads/share-links'
import { AnswerFeedback } from '../threads/feedback'
import { BodyBudget } from '../http/body-budget'
import { StreamSlots } from '../http/stream-slots'
import { AppMetrics } from '../metrics/app-metrics'
import { isCataloguedModel } from '../models/model-catalog'
import { StatusHistory } from '../metrics/status-history'
import { allWatchers, watchStores } from '../metrics/instrumented-store'
import { startTelemetry, traceJobStoreCalls } from './telemetry'
import type { ServerRuntime } from './current'

/** How often each instance reads the admin's MCP servers again, for changes made on another instance. */
const MCP_SYNC_INTERVAL_MS = 15_000

/** What the process gives the runtime besides its config. */
export interface ServerRuntimeOptions {
  /** How passwords are hashed and checked (nuxt-auth-utils' scrypt in the app). */
  passwords: PasswordHasher
  /** The port people open on this machine, for the first-run hint (default: 3000). */
  port?: string
  /** The process's environment, for OpenTelemetry's `OTEL_*` variables (default: none, so no traces leave). */
  env?: NodeJS.ProcessEnv
}

/** A built runtime: its services, and its lifecycle. */
export interface StartableServerRuntime extends ServerRuntime {
  /** Starts the background work: MCP servers, the tools directory, the sweeper, resuming interrupted jobs. */
  start(): void
  /** Resolves once spans are recorded, when traces are exported (at once otherwise): requests wait for it. */
  readonly tracingReady: Promise<void>
  /** Stops every run at its checkpoint and every tool source (idempotent; the stores stay open). */
  stop(): Promise<void>
  /** `stop`, then closes the stores. */
  close(): Promise<void>
}

/** Builds the runtime of one server process (see the file comment). Throws on a policy, credentials or MCP file that cannot be used. */
export function createServerRuntime(config: ServerConfig, options: ServerRuntimeOptions): StartableServerRuntime {
  // Made here, not at module load: a consola logger copies its reporters when made, and the log
  // format (runtime/logs.ts) is set by then.
  const jobsLogger = consola.withTag('jobs')
  const mcpLogger = consola.withTag('mcp')
  const toolsLogger = consola.withTag('tools')
  // Metrics hear from runs as they go, time every store call, and read the services' reports at
  // each scrape and each Status sample (below); `/metrics` serves them only when they are on.
  const metrics = new AppMetrics({ isCatalogued: model => isCataloguedModel(config, model) })
  // Traces (when an OTLP endpoint is set) have a span for each store call of a job's run.
  const telemetry = startTelemetry({ exportTraces: config.tracing.enabled, env: options.env ?? {}, service: 'or3-chat' })
  const stores = watchStores(openStores(config), telemetry.exporting ? allWatchers([metrics.storeCallWatcher, traceJobStoreCalls]) : metrics.storeCallWatcher)
  const secret = serverSecret(config)
  // Web Push: every note the job store keeps also goes to its person's devices (web-push.ts).
  const webPush = new WebPush({ enabled: config.push.enabled, settings: stores.settings, secretBox: createSecretBox(secret, 'web-push'), guard: { allowed: allowedNetworksOf(config.tools.web) }, subject: config.push.subject || (config.siteUrl.startsWith('https://') ? config.siteUrl : 'mailto:push@localhost'), logger: jobsLogger })
  if (config.push.enabled) stores.jobs = pushingNotes(stores.jobs, webPush, jobsLogger)

  // Tools: who may use which (a policy file that cannot be used stops start-up here, naming the rule and field),
  // credentials (the operator's file, an admin's for everyone or a group, each user's own, sealed), the feed of tool changes.
  const toolPolicy = new ToolPolicy(stores.settings, config.tools.policyFile ? loadToolPolicyFile(config.tools.policyFile) : [], config.tools.policyFile || null)
  const credentials = new CredentialVault({
    settings: stores.settings,
    secretBox: createSecretBox(secret, 'tool-credentials'),
    serverWide: config.tools.credentialsFile ? loadCredentialsFile(config.tools.credentialsFile) : {},
    needs: () => listServerTools().flatMap(tool => tool.requiresCredentials.map(need => ({ tool: tool.name, need }))),
    groupsOf: async userId => (await accounts.groups.groupsOf(userId)).map(group => group.name),
  })
  const toolChanges = new ToolChangeFeed()
  const stopFollowingRegistry = onServerToolsChanged(toolChanges.notify)
  const workspaces = new Workspaces(stores.workspaces, config.tools.workspace)
  const userTools = new UserTools(stores.settings)

  // MCP servers (the operator's and the admin's), with people's OAuth grants and consents.
  const consents = new McpCredentialConsents(stores.settings)
  const mcp = new McpServers({
    logger: mcpLogger,
    connectTimeoutMs: config.mcp.connectTimeoutMs,
    onStateChange: toolChanges.notify,
    serverCredentials: credentials.serverWide(),
    userConnectionIdleMs: config.mcp.userConnectionIdleMs,
    oauth: { store: stores.settings, secretBox: createSecretBox(secret, 'mcp-oauth-grants'), logger: mcpLogger },
    consents,
    onCallEnded: metrics.mcpCallEnded,
  })
  // Made by the set from `oauth` above, so always there.
  const authorizations = mcp.authorizations!
  const mcpCatalog = new McpServerCatalog({
    servers: mcp,
    fileServers: config.mcp.configFile ? loadMcpConfigFile(config.mcp.configFile) : [],
    configFile: config.mcp.configFile || null,
    settings: stores.settings,
    secretBox: createSecretBox(secret, 'mcp-server-secrets'),
    commandsAllowed: config.mcp.adminCommands,
    logger: mcpLogger,
    syncIntervalMs: MCP_SYNC_INTERVAL_MS,
  })
  const dynamicTools = config.tools.dynamic.enabled
    ? new DynamicToolsDirectory(resolve(config.tools.dynamic.dir || join(config.dataDir, 'tools')), toolsLogger)
    : undefined
  dynamicTools?.onChange(toolChanges.notify)

  // Accounts: each role's limits, which the job manager asks on every start.
  const { auth } = config
  const accounts = new AccountService(stores, options.passwords, {
    signInAttemptsPerIpPerMinute: auth.signInAttemptsPerIpPerMinute, signInFailuresPerAccount: auth.signInFailuresPerAccount,
    sessionsPerIpPerMinute: auth.sessionsPerIpPerMinute,
    signupsPerIpPerHour: auth.signupsPerIpPerHour,
    limiterFor: stores.limiterFor,
    tokensPerUser: auth.tokensPerUser,
    inviteTtlMs: Math.round(auth.inviteTtlHours * 3_600_000),
    roleLimits: config.limits.roles,
    passwords: auth.passwords, ldap: auth.ldap,
    breakGlassAdmin: auth.breakGlassAdmin,
    twoStepBox: createSecretBox(secret, 'two-step'),
  })
  accounts.groups.onChanged(change => credentials.groupChanged(change))
  // Sign-in through the operator's identity providers (a file that cannot be used stops start-up here, saying what to fix).
  const oidc = new OidcSignIn(loadOidcProviders(auth.oidcConfigFile, options.env ?? process.env))

  // The workbench (workspace files, run_code, people's own tools, web_fetch, web_search), registered as built-ins.
  const internetDenial = async (userId: string) => (await toolPolicy.accessFor(await accounts.policyPrincipal(userId)))({ name: 'web_fetch', source: { kind: 'builtin' }, capabilities: ['internet_access'] })
  registerWorkbenchTools(config.tools, { workspaces, userTools, limiterFor: stores.limiterFor, internetDenial })

  // Memory: what the model keeps about a person who turned it on (remember, recall, forget).
  const memories = registerMemory(stores.settings, config.tools.memory, { principalOf: userId => accounts.policyPrincipal(userId), accessFor: principal => toolPolicy.accessFor(principal) })
  // Knowledge bases: documents indexed in the background, searched by `search_knowledge` in the conversations they are attached to.
  const { knowledge, indexer: knowledgeIndexer, basesOf } = createKnowledge(config, stores, { groupsOf: async userId => (await accounts.policyPrincipal(userId)).groups ?? [], ownerLimits: async ownerId => accounts.limits.forRole((await accounts.policyPrincipal(ownerId)).role, ownerId), internetDenial, logger: consola.withTag('knowledge') })

  const workflowSteers = new WorkflowSteers(stores.threads.queue, stores.jobs)
  const { sseBatching } = config.backgroundJobs
  const hub = new JobLiveHub({ batchingEnabled: sseBatching.enabled, batchIntervalMs: sseBatching.intervalMs, batchSize: sseBatching.batchSize, adaptive: sseBatching.adaptive, observer: metrics })
  const jobs = new BackgroundJobManager({
    observer: metrics,
    tools: processTools,
    store: stores.jobs,
    hub,
    config,
    secretBox: createSecretBox(secret, 'job-api-key'),
    logger: jobsLogger,
    readAttachment: attachmentId => stores.threads.readAttachment(attachmentId),
    roleLimits: accounts.limits,
    usage: stores.usage,
    roleOf: userId => accounts.roleOf(userId),
    limiterFor: stores.limiterFor,
    toolAccess: async (userId, threadId) => {
      // A server that connects per person lists its tools through this person's connection the first time.
      await mcp.discoverFor(userId, await credentials.forUser(userId))
      const [check, memoryOn, bases] = await Promise.all([toolPolicy.accessFor(await accounts.policyPrincipal(userId)), memories.isEnabled(userId), threadId ? basesOf(userId, threadId) : []])
      return withKnowledgeGate(withMemoryGate(check, memoryOn), bases.length > 0)
    },
    credentialsFor: userId => credentials.forUser(userId),
    workflowRuns: stores.workflowRuns,
    loadWorkflow: id => stores.workflows.getWorkflow(id),
    runOutputs: (jobId, userId) => runOutputFiles(workspaces, jobId, userId),
    // Messages sent to a running answer come from its conversation's queue (created below, before any job runs); to a workflow's agent step, from its run's.
    steeringFor: (job, nodeId) => (nodeId ? workflowSteers.steeringFor(job, nodeId) : messageQueue.steeringFor(job)),
  })

  // Subagents: the `task` tool starts child jobs through this manager.
  if (config.tools.subagents.enabled) {
    const task = new Subagents({ manager: jobs, store: stores.jobs, roleOf: userId => accounts.roleOf(userId) }, config.tools.subagents).tool()
    registerServerTool(task.definition, task.handler, { ...task.options, override: true, source: { kind: 'builtin' } })
  }
  // Images: `generate_image` keeps what the operator's image model makes as the conversation's files.
  registerImages(config, stores, jobs)

  // A job of a thread is written into its assistant message when it ends; a conversation's first
  // answer is followed by a short title its model writes, counted against the person's budget.
  const titles = new ThreadTitles({
    threads: stores.threads,
    config,
    budget: { allowance: userId => jobs.remainingBudget(userId), record: (userId, spent) => jobs.recordUsage(userId, spent) },
    logger: consola.withTag('threads'),
  })
  // A workflow run's scratch files go when it ends (nothing reads them after; they would count
  // against their owner's workspace quota for ever). Before its end is kept: a crash retries it.
  // The outputs it kept as files go with the run, when it is deleted (a crash in between leaves
  // them to the account's deletion).
  jobs.workflowRuns.beforeEndKept(job => workspaces.deleteRunFiles(job.id, RUN_OUTPUTS_FOLDER))
  jobs.workflowRuns.afterRunsDeleted(async (jobIds) => {
    for (const jobId of jobIds) await workspaces.deleteRunFiles(jobId)
  })

  // Schedules and failure handlers start runs as the workflow's owner, checked like a run from the form.
  const personal = new PersonalSettings(stores.settings)
  // What a person lines up while an answer runs starts when it ends well (after its text is in the thread).
  const answerContext = answerContextOf({ accounts, personal, memories, knowledge })
  const messageQueue = createMessageQueue({ threads: stores.threads, jobs, config, accounts, answerContext, secretBox: createSecretBox(secret, 'message-queue'), logger: consola.withTag('threads') })
  jobs.runs.onJobFinished(async (job, endpoint) => {
    if (await writeJobIntoThread(stores.threads, job) && endpoint) titles.after(job, endpoint)
    await messageQueue.afterAnswer(job)
    await workflowSteers.afterRun(job)
  })
  const { schedules: workflowSchedules, failureWebhooks: workflowFailureWebhooks } = createWorkflowAutomation({ config, stores, jobs, accounts, personal, secretBox: createSecretBox(secret, 'workflow-failure-webhooks'), logger: jobsLogger, tools: processTools })

  // A deleted account's data goes first: its jobs, threads, workflows and their runs, then what it kept with tools.
  const workflowWebhooks = new WorkflowWebhooks({ settings: stores.settings, secretBox: createSecretBox(secret, 'workflow-webhooks'), limiterFor: stores.limiterFor, runsPerMinute: config.workflows.webhookRunsPerMinute })
  const hooksOfWorkflow = { remove: (workflowId: string) => Promise.all([workflowWebhooks.remove(workflowId), workflowFailureWebhooks.remove(workflowId)]).then(() => {}) }
  accounts.onAccountDeleted(userId => deleteUserData({ jobs, threads: stores.threads, workflows: stores.workflows, webhooks: hooksOfWorkflow }, userId))
  accounts.onAccountDeleted(userId => workspaces.deleteUser(userId))
  accounts.onAccountDeleted(userId => webPush.deleteUser(userId))
  accounts.onAccountDeleted(userId => userTools.deleteUser(userId))
  accounts.onAccountDeleted(userId => memories.deleteUser(userId))
  accounts.onAccountDeleted(userId => knowledge.deleteUser(userId))
  accounts.onAccountDeleted(userId => credentials.deleteUser(userId))
  accounts.onAccountDeleted(userId => workflowSchedules.removeUser(userId))
  accounts.onAccountDeleted(userId => authorizations.deleteUser(userId))
  accounts.onAccountDeleted(userId => consents.deleteUser(userId))
  const shares = new ShareLinks({
    settings: stores.settings, threads: stores.threads, secretBox: createSecretBox(secret, 'share-links'), quotas: config.limits,
    nameOf: async userId => (await personal.preferences(userId)).displayName ?? (await accounts.getAccount(userId))?.name ?? 'A guest',
  })
  accounts.onAccountDeleted(userId => shares.deleteUser(userId))
  accounts.onAccountDeleted(userId => personal.deleteUser(userId))
  const archives = new PersonalArchives({ accounts: stores.accounts, identities: stores.identities, passkeys: accounts.passkeys, threads: stores.threads, workflows: stores.workflows, workflowRuns: stores.workflowRuns, personal, workspaces, userTools, memories, knowledge, maxThreads: config.limits.threadsPerUser })

  const streams = new StreamSlots(config.backgroundJobs.streams)
  const liveEvents = new LiveEventStreams({
    jobs,
    slots: streams,
    toolChanges,
    findJob: async (userId, jobId) => {
      const job = await jobs.store.getJob(jobId)
      return job?.userId === userId ? job : null
    },
  })
  const bodies = new BodyBudget({ perClientBytes: config.limits.bodyBytesInFlightPerIp, totalBytes: config.limits.bodyBytesInFlight })
  const tools = new ToolSources({ mcp, mcpCatalog, dynamicTools, changes: toolChanges, policy: toolPolicy, credentials, authorizations, consents, workspaces, userTools })
  const metricSources = { jobs: () => jobs.health(), tools: () => tools.health(), viewers: () => hub.viewerTotal }
  metrics.readAtScrape(metricSources)
  const status = new StatusHistory({ metrics, sources: metricSources, intervalMs: config.metrics.statusSampleSeconds * 1000 })

  // Deleted rows' disk space goes back to the file system between requests (stores/sqlite/space.ts).
  let reclaimTimer: ReturnType<typeof setInterval> | undefined
  const reclaimSpace = () => stores.space?.reclaim().catch(error => jobsLogger.warn('Giving back the database file\'s free space failed', error))

  let stopping: Promise<void> | undefined
  const stop = (): Promise<void> => {
    // Open pages' tool-change streams end at once (like job streams); tool sources close once the
    // jobs that might be calling them have stopped at their checkpoints.
    stopping ??= (async () => {
      stopFollowingRegistry()
      knowledgeIndexer.close()
      clearInterval(reclaimTimer)
      liveEvents.close()
      status.close()
      toolChanges.close()
      mcpCatalog.close()
      await workflowSchedules.stop()
      await jobs.shutdown()
      await Promise.all([hub.close(), titles.close()])
      await Promise.all([mcp.close(), dynamicTools?.close()])
    })()
    return stopping
  }

  return {
    jobs,
    threads: stores.threads,
    answerContext,
    messageQueue,
    workflowSteers,
    // Dictation and read aloud through the operator's speech endpoints (none named: the browser's own).
    ...voiceServices(config, stores.limiterFor),
    // MCP Apps: a tool's page under its call, whose calls back are checked like the model's.
    mcpApps: new McpApps({ channel: name => mcp.appChannel(name), credentialsFor: userId => credentials.forUser(userId), accessFor: async userId => toolPolicy.accessFor(await accounts.policyPrincipal(userId)), limiterFor: stores.limiterFor, callsPerMinute: config.mcp.appCallsPerMinute, timeoutMs: config.mcp.connectTimeoutMs }),
    workflows: stores.workflows,
    workflowSchedules,
    runTools: processTools,
    workflowWebhooks,
    workflowFailureWebhooks,
    webPush,
    accounts,
    oidc,
    personal,
    memories,
    knowledge,
    shares,
    feedback: new AnswerFeedback(stores.threads),
    scim: scimProvisioning(config, stores, accounts, jobs),
    backups: config.backgroundJobs.storageProvider === 'sqlite'
      ? new DataBackups({ dataDir: config.dataDir, outDir: config.backups.dir || join(config.dataDir, BACKUPS_DIR), app: { name: packageJson.name, version: packageJson.version } })
      : null,
    archive: userId => archives.open(userId),
    streams,
    liveEvents,
    bodies,
    tools,
    metrics,
    status,
    start() {
      status.start()
      // MCP servers connect in the background: start-up does not wait for them.
      mcpCatalog.start().catch(error => mcpLogger.error('Could not start the MCP servers', error))
      // The dynamic tools directory is loaded before tools are listed or offered, then watched.
      if (dynamicTools) deferServerToolsReady(dynamicTools.start().catch(error => toolsLogger.error(`The dynamic tools directory ${dynamicTools.dir} could not be watched`, error)))
      if (!config.siteUrl) logSetupHint(accounts, options.port ?? '3000')
      jobs.startSweeper()
      knowledgeIndexer.nudge()
      if (stores.space) reclaimTimer = setInterval(reclaimSpace, config.backgroundJobs.reclaimSpaceIntervalMs)
      reclaimTimer?.unref()
      if (config.workflows.enabled) workflowSchedules.start()
      // Queued sends cut short are finished once the answers they follow are running again.
      const resume = () => jobs.recoverInterruptedJobs()
        .then(count => count > 0 && jobsLogger.info(`Resumed ${count} job(s) interrupted by the last shutdown.`))
        .catch(error => jobsLogger.error('Could not resume interrupted jobs', error))
        .then(() => Promise.all([messageQueue.recover(), workflowSteers.recover()]))
        .catch(error => jobsLogger.error('Could not pick up the conversations\' queues', error))
      // Resumed runs' spans are recorded too: with traces exported, they start once tracing has.
      if (telemetry.exporting) void telemetry.ready.then(resume)
      else void resume()
    },
    tracingReady: telemetry.ready,
    stop,
    async close() {
      await stop()
      await Promise.all([stores.close(), telemetry.close()])
    },
  }
}

/** Until the first account exists, how to create it from another machine (first-run.ts). */
function logSetupHint(accounts: AccountService, port: string): void {
  accounts.needsSetup().then((needed) => {
    if (needed) consola.withTag('auth').info(`No accounts yet. Create the admin account at http://localhost:${port} on this machine, or from elsewhere with the setup code ${accounts.firstRun.setupCode} (it changes on every start; set NUXT_SITE_URL to create it through your site instead).`)
  }).catch(() => {})
}

/** A workflow run's workspace as output-files.ts writes its long outputs there and reads them back (as the run's owner). */
function runOutputFiles(workspaces: Workspaces, jobId: string, userId: string): OutputFileAccess {
  const workspaceId = workspaces.forRun(jobId)
  return {
    write: (path, text) => workspaces.writeRunOutput(jobId, userId, path, text),
    // A file that is gone (the run's files were deleted) reads as none; a store that fails, fails.
    read: path => workspaces.readText(workspaceId, path).then(read => read.text, (error: unknown) => {
      if (error instanceof RefusalError && error.statusCode === 404) return null
      throw error
    }),
  }
}
