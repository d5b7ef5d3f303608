/**
 * Every setting of the server, declared once: its type and bounds, its default, and what it means.
 * From this schema come the runtime config's defaults (nuxt.config.ts: `runtimeConfig`), the
 * `ServerConfig` type the code relies on, the check at start-up (a list of what to fix, each with
 * its NUXT_* variable), and the README's configuration table (`npm run docs:config`; a test keeps
 * it in step). Feature flags (config.or3.ts) are the defaults of the `enabled` switches.
 *
 * Every setting is overridden at run time by its environment variable (`envVariableFor`): Nuxt
 * reads NUXT_* variables for every key of the runtime config, which is why each has a default.
 */
import { z } from 'zod'
import or3Config from '../../../config.or3'
import { parseOriginList } from '../../../shared/origin-list'
import { group, milliseconds, positiveInt, setting, siteUrl, trustedProxies } from './setting-types'
import { roleLimits } from './role-limit-settings'
import { toolSettings } from './tool-settings'
import { knowledgeSettings } from './knowledge-settings'
import { ldapSettings } from './ldap-settings'
import { voiceSettings } from './voice-settings'
import { imageSettings } from './image-settings'

const { features } = or3Config

/** The server's runtime configuration as the code may rely on it, after validation. */
export const serverConfigSchema = z.object({
  openrouter: group({
    apiKey: setting(z.string(), '',
      'Server-wide OpenRouter key. Empty: users bring their own key, or use the offline demo model. Never logged or stored in plain text.'),
    baseUrl: setting(z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://openrouter.ai/api/v1' }), 'https://openrouter.ai/api/v1',
      'Any OpenRouter-compatible endpoint (Ollama, vLLM, LM Studio…).'),
    appUrl: setting(z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be empty or an http(s) URL' })]), '',
      'Sent as `HTTP-Referer` so OpenRouter attributes requests to your deployment.'),
    appTitle: setting(z.string(), 'OR3 Chat',
      'Sent as `X-OpenRouter-Title`.'),
    headersTimeoutMs: setting(milliseconds, 30_000,
      "Longest wait for the upstream's response headers (then one retry)."),
    idleTimeoutMs: setting(milliseconds, 60_000,
      'Longest silence between streamed chunks; keep-alive comments count as life.'),
    retryBaseDelayMs: setting(z.number().int().nonnegative(), 1_000,
      'Delay before retrying a network error or 5xx (doubles per retry).'),
    maxRetryAfterMs: setting(z.number().int().nonnegative(), 15_000,
      "Longest `Retry-After` (429/503) worth waiting for; a longer one fails at once with the upstream's message."),
    modelsCacheTtlMs: setting(z.number().int().nonnegative(), 600_000,
      'How long the model list is cached.'),
  }),
  backgroundJobs: group({
    enabled: setting(z.boolean(), features.backgroundJobs.enabled,
      'Run answers as server-side jobs that outlive the tab.'),
    storageProvider: setting(z.enum(['sqlite', 'memory', 'convex']), 'sqlite',
      'Where job and workflow state lives: `sqlite` (a file under `.data/`), `memory` (tests), `convex`.'),
    reclaimSpaceIntervalMs: setting(z.number().int().min(1_000).max(86_400_000), 60_000,
      'With `sqlite`: how often the disk space of deleted rows (expired runs and jobs, deleted accounts) is given back, a megabyte a step between requests; the file shrinks at the checkpoint after.'),
    maxConcurrentJobs: setting(positiveInt, 20,
      'Jobs running at once on this server.'),
    jobTimeoutMs: setting(milliseconds, 300_000,
      'A job still running after this long is stopped.'),
    completedJobRetentionMs: setting(milliseconds, 300_000,
      "How long finished jobs' live state is kept for late viewers."),
    maxResumes: setting(z.number().int().min(0).max(100), 2,
      'Restarts a running job is resumed after. A job interrupted again is ended with an error saying so (and logged), so a job that crashes the server cannot crash every boot.'),
    streams: group({
      perUser: setting(positiveInt, 100,
        'Live job streams (SSE connections) one user may hold open; past it: 429 saying to close some tabs.'),
      perJob: setting(positiveInt, 25,
        'Live viewers of one job at once; past it: 429.'),
      perAddress: setting(positiveInt, 200,
        'Live streams (job streams and the tools feed) of one client address, all its users and guests together; past it: 429.'),
      max: setting(positiveInt, 10_000,
        'Live job streams open on the server; past it: 503 with `Retry-After`.'),
    }),
    toolExecution: group({
      enabled: setting(z.boolean(), features.backgroundToolExecution.enabled,
        'Let jobs execute server tools in a multi-round loop.'),
      maxRounds: setting(positiveInt, 10,
        'Tool rounds per answer; then one final answer is forced.'),
      maxToolsPerRound: setting(positiveInt, 20,
        'Tool calls executed per round; extra calls get an error result.'),
      maxOfferedTools: setting(z.number().int().min(2).max(128), 40,
        'Tools offered to a model at most (OpenRouter and models cope badly with long tool lists). Past it: the ones most relevant to the question, the ones found earlier in the answer, and `find_tools`, which searches all enabled tools and makes what it finds callable from the next step.'),
      defaultTimeoutMs: setting(milliseconds, 10_000,
        'Per-call limit for tools that set none.'),
      roundTimeoutMs: setting(milliseconds, 120_000,
        'Limit for one model round including its tools (time a call waits for a person does not count).'),
    }),
    waits: group({
      timeoutMs: setting(milliseconds, 600_000,
        'How long a job waits for a person (a browser tool, an approval, a question); then the model is told nobody answered.'),
      claimMs: setting(milliseconds, 120_000,
        'A tab that took a browser tool call and sent nothing back loses it after this long; another tab may run it.'),
      pollMs: setting(z.number().int().min(50).max(60_000), 2_000,
        'How often a waiting job looks in the store for an answer given on another instance (answers on the same instance arrive at once).'),
      maxWaitingJobs: setting(positiveInt, 200,
        'Jobs of this instance that may wait for a person at once without holding a running slot; past it a waiting job keeps its slot.'),
      maxWaitingJobsPerUser: setting(positiveInt, 10,
        'The same, per user.'),
      maxTotalMs: setting(milliseconds, 2 * 60 * 60_000,
        'Longest one run may wait for people in all (a workflow with a chain of approvals); past it, what it asks next expires at once.'),
    }),
    sseBatching: group({
      enabled: setting(z.boolean(), features.sseBatching.enabled,
        'Batch streamed text before sending it to viewers.'),
      intervalMs: setting(milliseconds, 100,
        'Longest a delta waits in a batch.'),
      batchSize: setting(positiveInt, 10,
        'Deltas per batch at most.'),
      adaptive: setting(z.boolean(), true,
        'Batch only under load: a delta goes out at once unless text went out within the current window, and the window grows from 0 (event loop under 70 % busy) to the whole interval (95 % and up). `false`: always the whole interval (fewest writes).'),
    }),
    flush: group({
      intervalMs: setting(milliseconds, 120,
        'Longest streamed text waits before it is written to the store.'),
      chunkInterval: setting(positiveInt, 3,
        'Write to the store at least every this many chunks.'),
      sizeThreshold: setting(positiveInt, 1_024,
        'Write to the store once this many bytes are pending.'),
    }),
  }),
  tools: toolSettings(),
  knowledge: knowledgeSettings(),
  voice: voiceSettings(),
  images: imageSettings(),
  mcp: group({
    configFile: setting(z.string().trim(), '',
      'A JSON or YAML file listing MCP servers (`{"mcpServers": {…}}`, see Tools → MCP servers); empty: none.'),
    connectTimeoutMs: setting(milliseconds, 30_000,
      "Longest an MCP server's handshake and first tool list may take before it counts as failed (and is retried)."),
    adminCommands: setting(z.boolean(), false,
      'Let admins add MCP servers that run a command on this machine (stdio) from the Admin page; off: admins add Streamable HTTP URLs only, commands come from the config file.'),
    userConnectionIdleMs: setting(milliseconds, 600_000,
      "How long a person's own connection to an MCP server that uses their credentials stays open unused."),
    appCallsPerMinute: setting(z.number().int().min(1).max(10_000), 60,
      'Calls one person\'s MCP App pages (a tool\'s interactive view) may make to their servers per minute, each checked by the tool policy and its approvals.'),
  }),
  workflows: group({
    enabled: setting(z.boolean(), features.workflows.enabled,
      'Offer multi-node workflows.'),
    webhookRunsPerMinute: setting(z.number().int().min(1).max(10_000), 30,
      "Runs one workflow's webhook may start per minute (counted on every instance together on Convex); past it: 429 with `Retry-After`."),
    runRetentionDays: setting(z.number().int().min(1).max(3_650), 30,
      "Days a workflow run (its inputs, every step's output, tool calls, timings and cost) is kept in its history after it ends; the job's live state goes after `…_COMPLETED_JOB_RETENTION_MS`."),
    runHistoryMbPerUser: setting(z.number().min(1).max(1_000_000), 500,
      "Most a person's kept workflow runs may take (MB); past it the oldest ended runs go first, whatever their age. Each run's size shows in the run history."),
    stepOutputInlineChars: setting(z.number().int().min(1_000).max(10_000_000), 32_000,
      "Longest step output a run keeps in its record; a longer one is kept as a file of the run's workspace (`outputs/…`, counted in the run's kept size rather than its owner's workspace quota, deleted with the run) and the record keeps its first 2,000 characters. Later steps get the whole output either way."),
    runHistoryMbPerWorkflow: setting(z.number().min(1).max(1_000_000), 100,
      'Most the kept runs of one workflow may take (MB); past it its oldest ended runs go first, so one busy workflow does not push out the history of the others.'),
    scheduleTickMs: setting(z.number().int().min(100).max(600_000), 10_000,
      'How often each instance looks for scheduled workflow runs that are due (a run starts at most this late).'),
    scheduleGraceSeconds: setting(z.number().int().min(0).max(3_600), 5,
      'An occurrence whose run has not started within one check (`…_SCHEDULE_TICK_MS`) and this many seconds of its time counts as missed: a schedule set to `skip` skips it, `run-once` runs the latest missed occurrence once.'),
    scheduleMinIntervalSeconds: setting(z.number().int().min(1).max(86_400), 60,
      'Shortest time between two runs of one workflow schedule; a schedule that would run more often is refused (400).'),
    schedulesPerUser: setting(z.number().int().min(0).max(1_000), 20,
      'Workflow schedules one user may keep (at most 5 per workflow); past it: 409.'),
  }),
  threads: group({
    generateTitles: setting(z.boolean(), true,
      "After a conversation's first answer, ask the same model for a short title (one small request; the demo model makes one from keywords). Off: the first message's words stay the title."),
  }),
  demoModel: group({
    enabled: setting(z.boolean(), features.offlineDemoModel.enabled,
      'Offer the offline demo model.'),
    tokenDelayMs: setting(z.number().int().nonnegative().max(5_000), 25,
      "Pause between the demo model's streamed tokens."),
  }),
  convex: group({
    url: setting(z.string(), '',
      'Convex deployment URL; required when the storage provider is `convex`.'),
    serverSecret: setting(z.string(), '',
      'Required with `convex` (32+ characters): the same value as `OR3_SERVER_SECRET` on the deployment. Every Convex function checks it, so the deployment URL alone gives access to nothing.'),
    leaseMs: setting(z.number().int().min(1_000).max(600_000), 30_000,
      "With `convex`: how long an instance's claim on a running job lasts without renewal; a job whose instance died is resumed elsewhere after this."),
    pulseMs: setting(z.number().int().min(50).max(5_000), 250,
      "With `convex`: how often an instance's heartbeat goes while it runs or follows jobs (one mutation carrying every job's progress, its leases and its viewers); a stop asked on another instance reaches the runner within it."),
    maxRunningJobs: setting(z.number().int().nonnegative(), 0,
      "With `convex`: jobs running at once on all instances together (0: no deployment-wide cap, each instance's `NUXT_BACKGROUND_JOBS_MAX_CONCURRENT_JOBS` only). A user's running jobs are counted across instances whatever this is."),
    requestTimeoutMs: setting(z.number().int().min(1_000).max(120_000), 10_000,
      'With `convex`: how long one call to the deployment may take before it fails (a hung connection never stalls an instance).'),
  }),
  session: group({
    password: setting(z.union([z.literal(''), z.string().min(32, 'must be at least 32 characters (or empty to generate one under the data directory)')]), '',
      "Secret (32+ characters) that seals session cookies and encrypts users' API keys while their jobs run. Empty: one is generated on first start and kept in `<data dir>/session-secret`. Set it when several instances share users."),
    name: setting(z.string().regex(/^[\w-]{1,64}$/, 'must be a cookie name: letters, digits, "_" or "-"'), 'or3-session',
      "The session cookie's name."),
    maxAge: setting(z.number().int().min(60).max(60 * 60 * 24 * 365), 60 * 60 * 24 * 14,
      'Seconds (14 days) a session lasts without a visit; a visit in its second half renews it.'),
  }),
  auth: group({
    guests: setting(z.boolean(), false,
      'Let visitors chat without an account, as guests (a sealed per-browser cookie) with the guest models. Off: every API route but `/api/auth/*` and `/api/health` answers 401 without a sign-in.'),
    signInAttemptsPerIpPerMinute: setting(positiveInt, 20,
      'Sign-in attempts one client address may make per minute; past it: 429 with `Retry-After`.'),
    signInFailuresPerAccount: setting(positiveInt, 10,
      'Failed sign-ins an account name may take in 15 minutes; then sign-in to it is refused (429 with `Retry-After`) for the rest of the window.'),
    sessionsPerIpPerMinute: setting(positiveInt, 30,
      'New guest sessions one client address may start per minute (a client that drops its cookie each time cannot mint identities).'),
    signupsPerIpPerHour: setting(positiveInt, 10,
      'Sign-up attempts one client address may make per hour (each account has its own daily budget); past it: 429 with `Retry-After`.'),
    tokensPerUser: setting(z.number().int().min(1).max(1_000), 20,
      'Personal API tokens one account may hold.'),
    inviteTtlHours: setting(z.number().positive().max(24 * 365), 24 * 7,
      'How long an invite link works (it works once).'),
    oidcConfigFile: setting(z.string().trim(), '',
      'A JSON or YAML file listing OpenID Connect identity providers (Keycloak, Entra ID, Google Workspace, Okta, Authentik, Zitadel…), each a button on the sign-in page; client secrets come from the environment variables it names. See docs/accounts.md.'),
    passwords: setting(z.boolean(), true,
      'Sign-in and sign-up with a name and password. Off: people sign in only through the identity providers; the first-run admin and the break-glass admin (`…_BREAK_GLASS_ADMIN`) still sign in with a password.'),
    breakGlassAdmin: setting(z.string().trim().max(200), '',
      'With passwords off: the name of the one admin account that may still sign in with its password, for when the identity provider is down.'),
    scimToken: setting(z.union([z.literal(''), z.string().min(32, 'must be empty (provisioning off) or at least 32 characters')]), '',
      'The bearer token an identity provider (Entra ID, Okta…) provisions people and groups with over SCIM 2.0 at `/scim/v2`; empty: provisioning is off (404). Keep it secret; it is compared as a hash and never logged. See docs/accounts.md.'),
    scimRole: setting(z.enum(['user', 'admin']), 'user',
      'The role of an account provisioned over SCIM.'),
    ldap: ldapSettings(),
  }),
  limits: group({
    jobContentChars: setting(z.number().int().min(1_000), 1_000_000,
      'Longest answer a job keeps, text and reasoning together (characters). A longer one is stopped there with a "too long" error; the text so far is kept. For a workflow run: all its steps\' text together.'),
    workflowStepChars: setting(z.number().int().min(1_000), 200_000,
      'Longest text one workflow step may produce, or one of its templates fill in to (`{{prompt}}` repeated a thousand times fails before it is built).'),
    threadsPerUser: setting(positiveInt, 1_000,
      'Conversations one user may keep; past it: 409 saying to delete some.'),
    messagesPerThread: setting(z.number().int().min(2), 1_000,
      'Messages (both sides) one conversation may hold; past it: 409 saying to start a new one.'),
    attachmentBytesPerUser: setting(z.number().int().min(0), 200 * 1024 * 1024,
      'Bytes of attached files one user may keep (200 MiB; all conversations together; deleting a conversation frees its files); past it: 409. `0`: no limit.'),
    workflowsPerUser: setting(positiveInt, 200,
      'Saved workflows one user may keep; past it: 409.'),
    jobStartsPerIpPerMinute: setting(positiveInt, 60,
      "Answers and workflow runs one client address may start per minute, all its sessions together (so minting new sessions does not get around a role's rate)."),
    bodyBytesInFlightPerIp: setting(z.number().int().min(4 * 1024 * 1024, 'must be at least 4 MiB (4194304): one message with files is larger'), 48 * 1024 * 1024,
      'Bytes of request bodies one client address may be sending at once (48 MiB; a message with files is up to ~22 MiB); past it: 429 with `Retry-After`, before the body is read.'),
    bodyBytesInFlight: setting(z.number().int().min(16 * 1024 * 1024, 'must be at least 16 MiB (16777216)'), 512 * 1024 * 1024,
      'Bytes of request bodies the server receives at once, all clients together (512 MiB); past it: 503 with `Retry-After`.'),
    fairShare: setting(z.number().gt(0, 'must be a share above 0, such as 0.5').max(1, 'must be a share of at most 1'), 0.5,
      'Share of `…_MAX_CONCURRENT_JOBS` that one principal, one client address, or all guests together may hold, so no one (and no crowd of fresh guest sessions) can take every slot; past it: 429 with `Retry-After`. `1`: off.'),
    trustProxy: setting(z.boolean(), false,
      'Take the client address from `X-Forwarded-For`. Only behind a proxy that sets it; otherwise any client could claim any address.'),
    trustedProxies: setting(trustedProxies, '',
      'With `…_TRUST_PROXY`: which hops are your proxies, so the client is the right-most hop that is not one: a count (`2`: a CDN and nginx) or addresses and CIDR ranges (`10.0.0.0/8,127.0.0.1`); empty: one hop (the peer). See Behind a reverse proxy.'),
    roles: group({ admin: roleLimits('admin'), user: roleLimits('user'), guest: roleLimits('guest') }),
  }),
  csrf: group({
    allowedOrigins: setting(z.string().refine(value => parseOriginList(value).every(item => /^https?:\/\/[^/\s]+$/i.test(item)), 'must be a comma-separated list of origins such as https://chat.example.com'), '',
      "Origins, comma-separated, besides the app's own whose pages may call API routes that change something. Requests from other sites' pages get 403 (CSRF); scripts, which send no `Origin`, are not affected."),
  }),
  metrics: group({
    enabled: setting(z.boolean(), features.metrics.enabled,
      'Serve Prometheus metrics at `GET /metrics` (see Operating it): to a request with `Authorization: Bearer <NUXT_METRICS_TOKEN>`, or to an admin (session or API token). Off: `/metrics` is 404.'),
    token: setting(z.union([z.literal(''), z.string().min(32, 'must be at least 32 characters (or empty: admins only)')]), '',
      "The bearer token Prometheus scrapes with (32+ characters; `openssl rand -hex 32`). Empty: only admins' sessions and API tokens are answered. Never logged."),
    statusSampleSeconds: setting(z.number().int().min(1, 'must be at least 1').max(300, 'must be at most 300'), 15,
      "How often the admin's Status page takes a sample of this process's figures (its last hour of charts, and how often an open Status page reads them)."),
  }),
  tracing: group({
    enabled: setting(z.boolean(), features.tracing.enabled,
      'Send OpenTelemetry traces (see Operating it) when `OTEL_EXPORTER_OTLP_ENDPOINT` (or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) is set; the `OTEL_*` variables configure the exporter. Off: no traces even with an endpoint.'),
  }),
  logs: group({
    format: setting(z.enum(['auto', 'json', 'text']), 'auto',
      'How the server writes its log: `json` (one JSON object per line, with the job, user and trace ids of lines about a job), `text` (readable lines), `auto`: JSON in production (`NODE_ENV=production`), text otherwise.'),
  }),
  backups: group({
    dir: setting(z.string().trim(), '',
      "Where Admin → Backups (and `POST /api/admin/backups`) makes backups of the data directory while the server runs. Empty: `<data dir>/backups`. Better on another disk; `npm run backup -- <dir>` makes one from the command line. With Convex, use `npx convex export`."),
  }),
  tls: group({
    certFile: setting(z.string().trim(), '',
      'PEM certificate (chain) file: with `NUXT_TLS_KEY_FILE`, the server speaks HTTPS with HTTP/2 itself (HTTP/1.1 over TLS for clients without it), so a browser is not held to six connections per host without a proxy. Empty: plain HTTP/1.1. See Serving HTTP/2.'),
    keyFile: setting(z.string().trim(), '',
      "The certificate's PEM private key file (read once at start; never logged)."),
  }),
  push: group({
    enabled: setting(z.boolean(), true,
      'Offer Web Push: a person turns notifications on per device (Settings), and an answer or run that ends with no tab watching, or waits for them, reaches the device with every tab closed. The server\'s VAPID keys are made at first use and kept sealed with the data.'),
    subject: setting(z.string().trim().max(200).regex(/^(?:$|mailto:|https:\/\/)/, 'must be a mailto: or https: URL'), '',
      'Who sends the pushes, as push services ask (a `mailto:` address or an `https:` URL of the operator). Empty: `NUXT_SITE_URL` when it is https, else `mailto:push@localhost`.'),
  }),
  dataDir: setting(z.string().trim().min(1, 'must name a directory, such as .data'), '.data',
    'Where the SQLite database (`or3.sqlite`) and the generated session secret live.'),
  siteUrl: setting(siteUrl, '',
    "The URL people open (`https://chat.example.com`). Set it on every public deployment: URLs given to others (MCP OAuth callbacks) are built on it, the cross-site check compares with it, and requests for any other host name are refused (421), which stops DNS rebinding. Empty: the request's own origin, and the first admin account can be created only from the server itself (`http://localhost`) or with the setup code printed to the log."),
  public: group({
    attachments: group({
      maxFiles: setting(z.number().int().min(0).max(20), 4,
        'Files one message may carry; `0` switches attachments off.'),
      maxImageBytes: setting(z.number().int().min(1_024).max(20 * 1024 * 1024), 4 * 1024 * 1024,
        'Largest image (PNG, JPEG, GIF or WebP, recognised by its bytes; 4 MiB).'),
      maxTextBytes: setting(z.number().int().min(1_024).max(2 * 1024 * 1024), 256 * 1024,
        'Largest text file (UTF-8; 256 KiB).'),
      types: setting(z.string().refine(value => value.split(',').every(type => /^\s*[a-z]+\/(?:[\w.+-]+|\*)\s*$/i.test(type)), 'must be a comma-separated list of media types such as image/png,text/*'), 'image/png,image/jpeg,image/webp,image/gif,text/*',
        'Media types accepted, to narrow the list (`text/*`: any text file). Only those images and UTF-8 text are ever accepted; SVG never (it can carry script).'),
    }),
    imageHosts: setting(z.string().refine(value => parseOriginList(value).every(item => /^https:\/\/[^/\s'";]+$/i.test(item)), 'must be a comma-separated list of https origins such as https://images.example.com'), '',
      "Origins (https, comma-separated) whose images answers may show inline; they are added to the CSP's `img-src`. Any other image in an answer is shown as a link and never fetched."),
  }),
})

/** Every setting at its default: the runtime config nuxt.config.ts declares (NUXT_* variables override each). */
export function serverConfigDefaults(): ServerConfig {
  return serverConfigSchema.parse({})
}

export type ServerConfig = z.infer<typeof serverConfigSchema>

/** Turns a dotted config path into the NUXT_* variable that overrides it. */
export function envVariableFor(path: readonly PropertyKey[]): string {
  const snake = path.map(part => String(part).replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase())
  return `NUXT_${snake.join('_')}`
}

/** Raised when the configuration cannot work; its message lists every problem and the variable to fix. */
export class ServerConfigError extends Error {
  override name = 'ServerConfigError'
}

/**
 * Validates the merged runtime config (defaults + NUXT_* overrides). Throws a `ServerConfigError`
 * whose message names each bad setting and its environment variable.
 */
export function parseServerConfig(raw: unknown): ServerConfig {
  const parsed = serverConfigSchema.safeParse(raw)
  const problems = parsed.success ? [] : parsed.error.issues.map(issue => `- ${envVariableFor(issue.path)} (${issue.path.join('.')}): ${issue.message}`)
  if (parsed.success && parsed.data.backgroundJobs.storageProvider === 'convex' && !parsed.data.convex.url) {
    problems.push(`- ${envVariableFor(['convex', 'url'])}: required when NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER=convex; set it to your deployment URL (https://<name>.convex.cloud)`)
  }
  if (parsed.success && parsed.data.backgroundJobs.storageProvider === 'convex' && !parsed.data.session.password) {
    problems.push(`- ${envVariableFor(['session', 'password'])}: required when NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER=convex; give every instance the same value so each accepts the others' session cookies and can decrypt users' keys`)
  }
  if (parsed.success && parsed.data.backgroundJobs.storageProvider === 'convex' && parsed.data.convex.serverSecret.length < 32) {
    problems.push(`- ${envVariableFor(['convex', 'serverSecret'])}: required (32+ characters) when NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER=convex; use the same value as OR3_SERVER_SECRET on the deployment`)
  }
  if (problems.length > 0 || !parsed.success) {
    throw new ServerConfigError(`Invalid server configuration:\n${problems.join('\n')}`)
  }
  return parsed.data
}
