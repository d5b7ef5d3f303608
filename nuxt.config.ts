import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import or3Config from './config.or3'

const { features } = or3Config

/** Where job and workflow state lives: embedded SQLite (default), memory (tests), or Convex. */
type StorageProvider = 'sqlite' | 'memory' | 'convex'

// https://nuxt.com/docs/api/nuxt-config
export default defineNuxtConfig({
  compatibilityDate: '2026-11-01',
  devtools: { enabled: false },
  // The chat is an app behind a per-browser session: its pages render in the browser. (Route
  // rules rather than `ssr: false`, which breaks `nuxt dev` in Nuxt 4.4.)
  routeRules: { '/**': { ssr: false } },
  telemetry: false,

  modules: ['nuxt-security', 'nuxt-auth-utils', '@nuxt/ui'],

  // Every app file imports its composables and utils explicitly: Nuxt's scan of app/composables
  // and app/utils would only add a second, implicit way in (and has added static imports of lazy
  // modules). Nuxt's and Vue's own names (ref, useHead, navigateTo…) stay auto-imported.
  imports: { scan: false },

  // Nuxt UI: the ecosystem's components. Its fonts would be fetched from the internet and its
  // colour mode would replace the app's own theme toggle (data-theme + the `dark` class), so both
  // are off; Lucide icons are bundled, never fetched.
  ui: { fonts: false, colorMode: false },
  icon: { serverBundle: 'local', clientBundle: { scan: true } },

  // Accounts (nuxt-auth-utils): sealed-cookie sessions and scrypt password hashes. The app asks
  // GET /api/auth/me itself, so the module's session plugins are off.
  auth: { loadStrategy: 'none' },

  // Security headers on every answer (nuxt-security): a CSP whose scripts need this response's
  // nonce, no framing, no sniffing, no referrer, no x-powered-by. Images load only from this app
  // (and NUXT_PUBLIC_IMAGE_HOSTS), so an answer cannot make the browser call out to any host.
  // Body size, rate limits, CSRF and methods are the app's own (server/middleware, lib/http), so
  // the module's versions of those are off.
  // Built assets are stored gzip- and brotli-compressed beside themselves at build time, and sent so
  // to every browser that accepts it (the chat page's scripts: ~1.75 MB as files).
  nitro: { compressPublicAssets: { gzip: true, brotli: true } },

  vite: {
    // Fonts (KaTeX's) are files, never inlined as data: URLs, which the CSP's font-src 'self' refuses.
    build: { assetsInlineLimit: (file: string) => (/\.(?:woff2?|ttf|otf|eot)$/i.test(file) ? false : undefined) },
  },

  security: {
    nonce: true,
    headers: {
      contentSecurityPolicy: {
        'default-src': ["'self'"],
        'script-src': ["'self'", "'nonce-{{nonce}}'", "'strict-dynamic'"],
        'style-src': ["'self'", "'unsafe-inline'"],
        'img-src': ["'self'", 'data:', 'blob:'],
        'font-src': ["'self'"],
        'connect-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'none'"],
        'form-action': ["'self'"],
        'frame-ancestors': ["'none'"],
        'upgrade-insecure-requests': false,
      },
      // The location tool runs in the page (with the person's consent); every other feature stays off.
      permissionsPolicy: { geolocation: ['self'] },
      referrerPolicy: 'no-referrer',
      xFrameOptions: 'DENY',
      xContentTypeOptions: 'nosniff',
    },
    hidePoweredBy: true,
    removeLoggers: false,
    requestSizeLimiter: false,
    rateLimiter: false,
    xssValidator: false,
    corsHandler: false,
    allowedMethodsRestricter: false,
    csrf: false,
  },

  // Resolved from this file so apps that extend this one as a layer find it too.
  css: [fileURLToPath(new URL('./app/assets/css/ui.css', import.meta.url)), fileURLToPath(new URL('./app/assets/css/main.css', import.meta.url))],
  app: {
    head: {
      htmlAttrs: { lang: 'en' },
      link: [{ rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }],
    },
  },

  // Every tunable of the design, with its default, in one place. Each is overridable at run time
  // by its NUXT_* environment variable (see README "Configuration"); server/plugins/00.config.ts
  // validates the merged result at start-up.
  runtimeConfig: {
    openrouter: {
      /** Server-wide key; when empty, users bring their own or use the offline demo model. */
      apiKey: '',
      /** Any OpenRouter-compatible endpoint (Ollama, vLLM, LM Studio…). */
      baseUrl: 'https://openrouter.ai/api/v1',
      /** Sent as HTTP-Referer so OpenRouter can attribute requests to this app. */
      appUrl: '',
      /** Sent as X-OpenRouter-Title. */
      appTitle: 'OR3 Chat',
      /** Longest wait for the upstream's response headers. */
      headersTimeoutMs: 30_000,
      /** Longest silence between streamed chunks (keep-alive comments count as life). */
      idleTimeoutMs: 60_000,
      /** First retry delay for network errors and 5xx; doubles per retry. */
      retryBaseDelayMs: 1_000,
      /** Longest Retry-After (429/503) worth waiting for; longer fails at once. */
      maxRetryAfterMs: 15_000,
      /** How long the model list is cached. */
      modelsCacheTtlMs: 600_000,
    },
    backgroundJobs: {
      enabled: features.backgroundJobs.enabled,
      storageProvider: 'sqlite' as StorageProvider,
      maxConcurrentJobs: 20,
      jobTimeoutMs: 300_000,
      completedJobRetentionMs: 300_000,
      /** Restarts a job may be resumed after; one interrupted again is ended (a job that crashes the server must not do so on every boot). */
      maxResumes: 2,
      /** Live job streams (SSE connections) open at once: per user, per job, on the server. */
      streams: {
        perUser: 100,
        perJob: 25,
        /** All users and guests of one client address together. */
        perAddress: 200,
        max: 10_000,
      },
      toolExecution: {
        enabled: features.backgroundToolExecution.enabled,
        maxRounds: 10,
        maxToolsPerRound: 20,
        /** Tools offered to a model at most; past it the most relevant ones, plus find_tools to search the rest. */
        maxOfferedTools: 40,
        defaultTimeoutMs: 10_000,
        roundTimeoutMs: 120_000,
      },
      /** Jobs that wait for a person (a browser tool, an approval, a question). */
      waits: {
        /** An unanswered request expires after this long and the job goes on without it. */
        timeoutMs: 600_000,
        /** A tab's claim of a browser tool call lapses after this long without a result. */
        claimMs: 120_000,
        /** How often a waiting job looks for an answer given on another instance. */
        pollMs: 2_000,
        /** A job that waits gives up its running slot and counts against these caps instead (past them, it keeps its slot). */
        maxWaitingJobs: 200,
        maxWaitingJobsPerUser: 10,
        /** Longest one run may wait for people in all; past it, what it asks expires at once. */
        maxTotalMs: 7_200_000,
      },
      sseBatching: {
        enabled: features.sseBatching.enabled,
        /** Longest a delta waits in a batch. */
        intervalMs: 100,
        batchSize: 10,
        /** Wait only under load (event-loop utilisation): no added latency when the server is idle. */
        adaptive: true,
      },
      flush: {
        intervalMs: 120,
        chunkInterval: 3,
        sizeThreshold: 1024,
      },
    },
    tools: {
      /** Register the files under server/tools/** at start-up. */
      discovery: features.toolDiscovery.enabled,
      dynamic: {
        /** Load tool files from a watched directory while the server runs (they run with the server's privileges). */
        enabled: true,
        /** The directory; empty: `tools` under dataDir. */
        dir: '',
      },
      /** The operator's tool policy: a JSON or YAML file ({ "rules": [ … ] }) of allow/deny rules per role or user; empty: defaults only (admins and users every tool, guests the built-in ones). */
      policyFile: '',
      /** The operator's server-wide tool credentials: a JSON or YAML file ({ "github": { "token": "…" } }); empty: none. Users add their own in Settings. */
      credentialsFile: '',
    },
    mcp: {
      /** The operator's MCP servers: a JSON or YAML file ({ "mcpServers": { … } }); empty: none. */
      configFile: '',
      /** Longest an MCP server's handshake and first tool list may take before it counts as failed. */
      connectTimeoutMs: 30_000,
      /** Let admins add servers that run a command on this machine (stdio) from the UI; off: only Streamable HTTP URLs. */
      adminCommands: false,
      /** How long a person's own connection to an MCP server that uses their credentials stays open unused. */
      userConnectionIdleMs: 600_000,
    },
    workflows: {
      enabled: features.workflows.enabled,
    },
    threads: {
      /** After a conversation's first answer, ask its model for a short title (instead of the first message's words). */
      generateTitles: true,
    },
    demoModel: {
      enabled: features.offlineDemoModel.enabled,
      /** Pause between the demo model's streamed tokens, for a realistic pace. */
      tokenDelayMs: 25,
    },
    convex: {
      /** Deployment URL, required when storageProvider is 'convex'. */
      url: '',
      /** Shared with the deployment's OR3_SERVER_SECRET; only holders may call its functions. */
      serverSecret: '',
      /** How long an instance's claim on a running job lasts without renewal. */
      leaseMs: 30_000,
    },
    session: {
      /** Seals session cookies and encrypts stored API keys (32+ chars); generated under dataDir when empty. */
      password: '',
      /** The session cookie's name (nuxt-auth-utils reads the same one). */
      name: 'or3-session',
      /** Seconds a session lasts without a visit (sliding: a visit in its second half renews it). */
      maxAge: 60 * 60 * 24 * 14,
    },
    auth: {
      /** Let visitors chat without an account, as guests with their own limits (off: every API route needs a sign-in). */
      guests: false,
      /** Sign-in attempts one client address may make per minute. */
      signInAttemptsPerIpPerMinute: 20,
      /** Failed sign-ins an account name may take in 15 minutes before it is locked for the rest of them. */
      signInFailuresPerAccount: 10,
      /** New guest sessions one client address may start per minute. */
      sessionsPerIpPerMinute: 30,
      /** Sign-up attempts one client address may make per hour (each creates an account with its own budget). */
      signupsPerIpPerHour: 10,
      /** Personal API tokens one account may hold. */
      tokensPerUser: 20,
      /** How long an invite link works. */
      inviteTtlHours: 24 * 7,
    },
    limits: {
      /** Longest answer a job keeps (characters of text and reasoning); a longer one stops there with a "too long" error, the text so far kept. */
      jobContentChars: 1_000_000,
      /** Longest text one workflow step may produce, or one of its templates render to. */
      workflowStepChars: 200_000,
      /** Conversations one user may keep. */
      threadsPerUser: 1_000,
      /** Messages (both sides) one conversation may hold. */
      messagesPerThread: 1_000,
      /** Bytes of attached files one user may keep (all their conversations together); 0: no limit. */
      attachmentBytesPerUser: 200 * 1024 * 1024,
      /** Saved workflows one user may keep. */
      workflowsPerUser: 200,
      /** Answers and workflow runs one client address may start per minute (all its sessions together). */
      jobStartsPerIpPerMinute: 60,
      /** Bytes of request bodies one client address may be sending at once (a message with files is up to ~22 MiB); more gets a 429. */
      bodyBytesInFlightPerIp: 48 * 1024 * 1024,
      /** Bytes of request bodies the server reads at once, all clients together; more gets a 503. */
      bodyBytesInFlight: 512 * 1024 * 1024,
      /** Share of maxConcurrentJobs one user, one client address, or all guests together may hold (fair share). */
      fairShare: 0.5,
      /**
       * Per role (the admin can change each on the admin page). models: comma-separated ids or *;
       * daily budgets count tokens / credits per UTC day (0: none); maxOutputTokens clamps max_tokens
       * (0: no clamp); workflowModelCalls bounds agent rounds × attempts of one workflow run.
       */
      roles: {
        admin: { models: '*', jobsAtOnce: 10, jobStartsPerMinute: 60, dailyTokens: 0, dailyCost: 0, maxOutputTokens: 0, workflowModelCalls: 500 },
        user: { models: '*', jobsAtOnce: 5, jobStartsPerMinute: 20, dailyTokens: 2_000_000, dailyCost: 0, maxOutputTokens: 16_384, workflowModelCalls: 200 },
        guest: { models: 'or3/offline-demo', jobsAtOnce: 2, jobStartsPerMinute: 10, dailyTokens: 200_000, dailyCost: 0, maxOutputTokens: 4_096, workflowModelCalls: 50 },
      },
      /** Read the client address from X-Forwarded-For (only behind a proxy that sets it). */
      trustProxy: false,
      /** Which hops of X-Forwarded-For are proxies: a count, or addresses and CIDR ranges; empty: one (the peer). */
      trustedProxies: '',
    },
    csrf: {
      /** Comma-separated origins, besides the app's own, whose pages may call state-changing API routes. */
      allowedOrigins: '',
    },
    /** Where the embedded SQLite database and the generated session secret live. */
    dataDir: '.data',
    /**
     * The URL people open (https://chat.example.com): links given to others (OAuth callbacks) use it,
     * and requests for other host names are refused. Empty: the request's own origin.
     */
    siteUrl: '',
    public: {
      /** Files a message may carry (checked in the composer and enforced by the server). */
      attachments: {
        /** Files per message; 0 switches attachments off. */
        maxFiles: 4,
        /** Largest image (PNG, JPEG, GIF, WebP), in bytes. */
        maxImageBytes: 4 * 1024 * 1024,
        /** Largest text file, in bytes. */
        maxTextBytes: 256 * 1024,
        /** Media types accepted (comma-separated; `text/*`: any text file). Only images and UTF-8 text are ever accepted. */
        types: 'image/png,image/jpeg,image/webp,image/gif,text/*',
      },
      /** Comma-separated origins whose images answers may show inline; any other image is a link (the browser never fetches it). */
      imageHosts: '',
    },
  },

  hooks: {
    // App errors (quotas, a busy store, job caps) become their HTTP answers before Nuxt's own
    // error handler sends them (server/error-handler.ts).
    'nitro:config'(nitroConfig) {
      const handlers = nitroConfig.errorHandler ? [nitroConfig.errorHandler].flat() : []
      nitroConfig.errorHandler = [fileURLToPath(new URL('./server/error-handler.ts', import.meta.url)), ...handlers]
      // jiti (the dynamic tools directory's loader) requires its TypeScript transform lazily, so
      // the build's file trace misses it: include it by path.
      nitroConfig.externals ??= {}
      nitroConfig.externals.traceInclude = [...(nitroConfig.externals.traceInclude ?? []), join(dirname(createRequire(import.meta.url).resolve('jiti/package.json')), 'dist', 'babel.cjs')]
    },
  },

  typescript: {
    strict: true,
  },
})
