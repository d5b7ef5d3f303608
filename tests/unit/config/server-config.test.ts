import { describe, expect, it } from 'vitest'
import { envVariableFor, parseServerConfig, ServerConfigError } from '../../../server/lib/config/server-config'
import or3Config from '../../../config.or3'
import { runtimeConfigDefaults as defaults } from '../../support/server-config'

describe('runtime config', () => {
  it('has every tunable of the design with its default', () => {
    const config = parseServerConfig(defaults())
    expect(config.openrouter).toEqual({
      apiKey: '',
      baseUrl: 'https://openrouter.ai/api/v1',
      appUrl: '',
      appTitle: 'OR3 Chat',
      headersTimeoutMs: 30_000,
      idleTimeoutMs: 60_000,
      retryBaseDelayMs: 1_000,
      maxRetryAfterMs: 15_000,
      modelsCacheTtlMs: 600_000,
    })
    expect(config.demoModel).toEqual({ enabled: true, tokenDelayMs: 25 })
    expect(config.backgroundJobs).toEqual({
      enabled: true,
      storageProvider: 'sqlite',
      maxConcurrentJobs: 20,
      jobTimeoutMs: 300_000,
      completedJobRetentionMs: 300_000,
      maxResumes: 2,
      reclaimSpaceIntervalMs: 60_000,
      streams: { perUser: 100, perJob: 25, perAddress: 200, max: 10_000 },
      toolExecution: { enabled: true, maxRounds: 10, maxToolsPerRound: 20, maxOfferedTools: 40, defaultTimeoutMs: 10_000, roundTimeoutMs: 120_000 },
      waits: { timeoutMs: 600_000, claimMs: 120_000, pollMs: 2_000, maxWaitingJobs: 200, maxWaitingJobsPerUser: 10, maxTotalMs: 7_200_000 },
      sseBatching: { enabled: true, intervalMs: 100, batchSize: 10, adaptive: true },
      flush: { intervalMs: 120, chunkInterval: 3, sizeThreshold: 1024 },
    })
    expect(config.convex).toEqual({ url: '', serverSecret: '', leaseMs: 30_000, pulseMs: 250, maxRunningJobs: 0, requestTimeoutMs: 10_000 })
    expect(config.session).toEqual({ password: '', name: 'or3-session', maxAge: 14 * 24 * 3600 })
    expect(config.auth).toEqual({
      guests: false,
      signInAttemptsPerIpPerMinute: 20,
      signInFailuresPerAccount: 10,
      sessionsPerIpPerMinute: 30,
      signupsPerIpPerHour: 10,
      tokensPerUser: 20,
      inviteTtlHours: 168,
      oidcConfigFile: '',
      passwords: true,
      breakGlassAdmin: '',
      scimToken: '',
      scimRole: 'user',
      ldap: { url: '', startTls: false, caFile: '', bindDn: '', bindPassword: '', searchBase: '', searchFilter: '(uid={{username}})', nameAttribute: 'uid', emailAttribute: 'mail', groupsAttribute: 'memberOf', groupSearchBase: '', groupSearchFilter: '(|(member={{dn}})(uniqueMember={{dn}}))', adminGroups: '', timeoutMs: 5_000 },
    })
    expect(config.limits).toMatchObject({ jobContentChars: 1_000_000, workflowStepChars: 200_000, threadsPerUser: 1_000, messagesPerThread: 1_000, workflowsPerUser: 200, jobStartsPerIpPerMinute: 60, bodyBytesInFlightPerIp: 48 * 1024 * 1024, bodyBytesInFlight: 512 * 1024 * 1024, fairShare: 0.5, trustProxy: false })
    expect(config.limits.roles.guest).toEqual({ models: 'or3/offline-demo', jobsAtOnce: 2, jobStartsPerMinute: 10, dailyTokens: 200_000, dailyCost: 0, maxOutputTokens: 4_096, workflowModelCalls: 50, workflowSteps: 100, knowledgeDocuments: 20, knowledgeMegabytes: 10, knowledgePassages: 5_000 })
    expect(config.csrf).toEqual({ allowedOrigins: '' })
    expect(config.dataDir).toBe('.data')
    expect(config.public).toEqual({
      imageHosts: '',
      attachments: { maxFiles: 4, maxImageBytes: 4 * 1024 * 1024, maxTextBytes: 256 * 1024, types: 'image/png,image/jpeg,image/webp,image/gif,text/*' },
    })
    expect(config.limits.attachmentBytesPerUser).toBe(200 * 1024 * 1024)
    expect(config.threads).toEqual({ generateTitles: true })
  })

  it('refuses attachment types that are not media types', () => {
    const raw = defaults()
    raw.public.attachments.types = 'image/png, <script>'
    expect(() => parseServerConfig(raw)).toThrow(/NUXT_PUBLIC_ATTACHMENTS_TYPES \(public.attachments.types\): must be a comma-separated list of media types/)
  })

  it('refuses a session password shorter than 32 characters', () => {
    const raw = defaults()
    raw.session.password = 'too-short'
    expect(() => parseServerConfig(raw)).toThrow(/NUXT_SESSION_PASSWORD \(session.password\): must be at least 32 characters/)
  })

  it('refuses an allowed origin that is not an origin', () => {
    const raw = defaults()
    raw.csrf.allowedOrigins = 'https://ok.example.com, javascript:alert(1)'
    expect(() => parseServerConfig(raw)).toThrow(/NUXT_CSRF_ALLOWED_ORIGINS \(csrf.allowedOrigins\): must be a comma-separated list of origins/)
  })

  it('refuses an image host that is not an https origin (it goes into the CSP)', () => {
    const raw = defaults()
    raw.public.imageHosts = "https://ok.example.com, https://x.example.com; script-src 'unsafe-inline'"
    expect(() => parseServerConfig(raw)).toThrow(/NUXT_PUBLIC_IMAGE_HOSTS \(public.imageHosts\): must be a comma-separated list of https origins/)
  })

  it('takes the default of each switch from the feature flags', () => {
    for (const flag of Object.values(or3Config.features)) {
      expect(typeof flag.enabled).toBe('boolean')
      expect(flag.description.length).toBeGreaterThan(10)
    }
    const config = parseServerConfig(defaults())
    expect(config.backgroundJobs.toolExecution.enabled).toBe(or3Config.features.backgroundToolExecution.enabled)
    expect(config.tools.discovery).toBe(or3Config.features.toolDiscovery.enabled)
  })

  it('names the NUXT_* variable that overrides a setting', () => {
    expect(envVariableFor(['backgroundJobs', 'toolExecution', 'maxRounds'])).toBe('NUXT_BACKGROUND_JOBS_TOOL_EXECUTION_MAX_ROUNDS')
    expect(envVariableFor(['openrouter', 'apiKey'])).toBe('NUXT_OPENROUTER_API_KEY')
    expect(envVariableFor(['convex', 'url'])).toBe('NUXT_CONVEX_URL')
  })

  it('refuses bad values with a message naming each variable to fix', () => {
    const raw = defaults()
    raw.backgroundJobs.storageProvider = 'postgres'
    raw.backgroundJobs.toolExecution.maxRounds = 'ten'
    raw.openrouter.baseUrl = 'ftp://example.com'
    let error: unknown
    try {
      parseServerConfig(raw)
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(ServerConfigError)
    const message = (error as Error).message
    expect(message).toMatch(/NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER/)
    expect(message).toMatch(/"sqlite"\|"memory"\|"convex"|sqlite.*memory.*convex/)
    expect(message).toMatch(/NUXT_BACKGROUND_JOBS_TOOL_EXECUTION_MAX_ROUNDS/)
    expect(message).toMatch(/NUXT_OPENROUTER_BASE_URL.*http\(s\) URL/)
  })

  it('requires NUXT_CONVEX_URL when the Convex store is chosen', () => {
    const raw = defaults()
    raw.backgroundJobs.storageProvider = 'convex'
    expect(() => parseServerConfig(raw)).toThrow(/NUXT_CONVEX_URL: required when NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER=convex/)
    raw.convex.url = 'https://happy-otter-123.convex.cloud'
    expect(() => parseServerConfig(raw)).toThrow(/NUXT_CONVEX_SERVER_SECRET: required \(32\+ characters\)/)
    raw.convex.serverSecret = 'a-shared-secret-that-is-long-enough-to-use'
    expect(() => parseServerConfig(raw)).toThrow(/NUXT_SESSION_PASSWORD: required when NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER=convex; give every instance the same value/)
    raw.session.password = 'the-same-session-password-on-every-instance'
    expect(parseServerConfig(raw).backgroundJobs.storageProvider).toBe('convex')
  })
})
