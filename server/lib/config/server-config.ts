import { z } from 'zod'
import type { RoleLimits } from '../../../shared/types/limits'
import { parseOriginList } from '../../../shared/origin-list'
import { trustedProxiesProblem } from './trusted-proxies'
import { siteUrlProblem } from './site-url'

const positiveInt = z.number().int().positive()
const milliseconds = z.number().int().positive().max(2_147_483_647)
/** A role's models: comma-separated ids, or * for any. */
const modelList = z.string().trim().min(1, 'must be * (any model) or comma-separated model ids such as or3/offline-demo,openai/gpt-4o-mini')

const budget = z.number().min(0, 'must be 0 (no limit) or more')
/** One role's limits (shared/types/limits.ts). */
const roleLimits = z.object({
  models: modelList,
  jobsAtOnce: positiveInt,
  jobStartsPerMinute: positiveInt,
  dailyTokens: budget.int(),
  dailyCost: budget,
  maxOutputTokens: budget.int(),
  workflowModelCalls: positiveInt,
}) satisfies z.ZodType<RoleLimits>

/** The server's runtime configuration as the code may rely on it, after validation. */
export const serverConfigSchema = z.object({
  openrouter: z.object({
    apiKey: z.string(),
    baseUrl: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as https://openrouter.ai/api/v1' }),
    appUrl: z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be empty or an http(s) URL' })]),
    appTitle: z.string(),
    headersTimeoutMs: milliseconds,
    idleTimeoutMs: milliseconds,
    retryBaseDelayMs: z.number().int().nonnegative(),
    maxRetryAfterMs: z.number().int().nonnegative(),
    modelsCacheTtlMs: z.number().int().nonnegative(),
  }),
  backgroundJobs: z.object({
    enabled: z.boolean(),
    storageProvider: z.enum(['sqlite', 'memory', 'convex']),
    maxConcurrentJobs: positiveInt,
    jobTimeoutMs: milliseconds,
    maxResumes: z.number().int().min(0).max(100),
    streams: z.object({
      perUser: positiveInt,
      perJob: positiveInt,
      perAddress: positiveInt,
      max: positiveInt,
    }),
    completedJobRetentionMs: milliseconds,
    toolExecution: z.object({
      enabled: z.boolean(),
      maxRounds: positiveInt,
      maxToolsPerRound: positiveInt,
      maxOfferedTools: z.number().int().min(2).max(128),
      defaultTimeoutMs: milliseconds,
      roundTimeoutMs: milliseconds,
    }),
    waits: z.object({
      timeoutMs: milliseconds,
      claimMs: milliseconds,
      pollMs: z.number().int().min(50).max(60_000),
      maxWaitingJobs: positiveInt,
      maxWaitingJobsPerUser: positiveInt,
      maxTotalMs: milliseconds,
    }),
    sseBatching: z.object({
      enabled: z.boolean(),
      intervalMs: milliseconds,
      batchSize: positiveInt,
      adaptive: z.boolean(),
    }),
    flush: z.object({
      intervalMs: milliseconds,
      chunkInterval: positiveInt,
      sizeThreshold: positiveInt,
    }),
  }),
  tools: z.object({ discovery: z.boolean(), dynamic: z.object({ enabled: z.boolean(), dir: z.string().trim() }), policyFile: z.string().trim(), credentialsFile: z.string().trim() }),
  mcp: z.object({ configFile: z.string().trim(), connectTimeoutMs: milliseconds, adminCommands: z.boolean(), userConnectionIdleMs: milliseconds }),
  workflows: z.object({ enabled: z.boolean() }),
  threads: z.object({ generateTitles: z.boolean() }),
  demoModel: z.object({ enabled: z.boolean(), tokenDelayMs: z.number().int().nonnegative().max(5_000) }),
  convex: z.object({ url: z.string(), serverSecret: z.string(), leaseMs: z.number().int().min(1_000).max(600_000) }),
  session: z.object({
    password: z.union([z.literal(''), z.string().min(32, 'must be at least 32 characters (or empty to generate one under the data directory)')]),
    name: z.string().regex(/^[\w-]{1,64}$/, 'must be a cookie name: letters, digits, "_" or "-"'),
    maxAge: z.number().int().min(60).max(60 * 60 * 24 * 365),
  }),
  auth: z.object({
    guests: z.boolean(),
    signInAttemptsPerIpPerMinute: positiveInt,
    signInFailuresPerAccount: positiveInt,
    sessionsPerIpPerMinute: positiveInt,
    signupsPerIpPerHour: positiveInt,
    tokensPerUser: z.number().int().min(1).max(1_000),
    inviteTtlHours: z.number().positive().max(24 * 365),
  }),
  limits: z.object({
    jobContentChars: z.number().int().min(1_000),
    workflowStepChars: z.number().int().min(1_000),
    threadsPerUser: positiveInt,
    messagesPerThread: z.number().int().min(2),
    attachmentBytesPerUser: z.number().int().min(0),
    workflowsPerUser: positiveInt,
    jobStartsPerIpPerMinute: positiveInt,
    bodyBytesInFlightPerIp: z.number().int().min(4 * 1024 * 1024, 'must be at least 4 MiB (4194304): one message with files is larger'),
    bodyBytesInFlight: z.number().int().min(16 * 1024 * 1024, 'must be at least 16 MiB (16777216)'),
    fairShare: z.number().gt(0, 'must be a share above 0, such as 0.5').max(1, 'must be a share of at most 1'),
    roles: z.object({ admin: roleLimits, user: roleLimits, guest: roleLimits }),
    trustProxy: z.boolean(),
    trustedProxies: z.string().superRefine((value, context) => {
      const problem = trustedProxiesProblem(value)
      if (problem) context.addIssue({ code: 'custom', message: `${problem} (a number of proxies, or addresses and CIDR ranges separated by commas)` })
    }),
  }),
  csrf: z.object({
    allowedOrigins: z.string().refine(value => parseOriginList(value).every(item => /^https?:\/\/[^/\s]+$/i.test(item)), 'must be a comma-separated list of origins such as https://chat.example.com'),
  }),
  dataDir: z.string().trim().min(1, 'must name a directory, such as .data'),
  siteUrl: z.string().superRefine((value, context) => {
    const problem = siteUrlProblem(value)
    if (problem) context.addIssue({ code: 'custom', message: problem })
  }),
  public: z.object({
    attachments: z.object({
      maxFiles: z.number().int().min(0).max(20),
      maxImageBytes: z.number().int().min(1_024).max(20 * 1024 * 1024),
      maxTextBytes: z.number().int().min(1_024).max(2 * 1024 * 1024),
      types: z.string().refine(value => value.split(',').every(type => /^\s*[a-z]+\/(?:[\w.+-]+|\*)\s*$/i.test(type)), 'must be a comma-separated list of media types such as image/png,text/*'),
    }),
    imageHosts: z.string().refine(value => parseOriginList(value).every(item => /^https:\/\/[^/\s'";]+$/i.test(item)), 'must be a comma-separated list of https origins such as https://images.example.com'),
  }),
})

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
