import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { serverConfigDefaults } from './server/lib/config/server-config'
import { APP_LOCALES, DEFAULT_LOCALE, LOCALE_COOKIE } from './shared/locales'

// A test run builds into a directory of its own (tests/support/built-app.ts), never over the
// project's .nuxt/ and .output/, which `npm run dev` and `nuxt typecheck` use.
const testBuildDir = process.env.OR3_TEST_BUILD_DIR

// https://nuxt.com/docs/api/nuxt-config
export default defineNuxtConfig({
  compatibilityDate: '2026-11-01',
  devtools: { enabled: false },
  // A test build needs no source maps (about a sixth of its build time); a real build keeps the server's.
  ...(testBuildDir ? { sourcemap: { server: false, client: false } } : {}),
  // The chat is an app behind a per-browser session: its pages render in the browser. (Route
  // rules rather than `ssr: false`, which breaks `nuxt dev` in Nuxt 4.4.)
  // A share link's page is the exception: read without script, never indexed or cached.
  routeRules: {
    '/**': { ssr: false },
    '/share/**': { ssr: true, headers: { 'X-Robots-Tag': 'noindex, nofollow', 'Cache-Control': 'private, no-store' } },
  },
  telemetry: false,

  modules: ['nuxt-security', 'nuxt-auth-utils', '@nuxt/ui', '@vite-pwa/nuxt', '@nuxtjs/i18n'],

  // Languages (@nuxtjs/i18n): every string the app shows is in i18n/locales/<code>.json, one file
  // loaded per language. The address stays the same in every language (no /de/ prefix): the
  // language is the person's choice (Settings, kept with their account), else this browser's
  // (a cookie), else the browser's own languages.
  i18n: {
    strategy: 'no_prefix',
    defaultLocale: DEFAULT_LOCALE,
    locales: APP_LOCALES.map(({ code, language, name, dir }) => ({ code, language, name, dir, file: `${code}.json` })),
    detectBrowserLanguage: { useCookie: true, cookieKey: LOCALE_COOKIE, fallbackLocale: DEFAULT_LOCALE, redirectOn: 'root' },
    vueI18n: './i18n.config.ts',
  },

  // Installable (@vite-pwa/nuxt): a manifest with the app's icons (scripts/make-icons.mjs), and a
  // service worker that keeps the app's built files and the pages it showed, so the app opens
  // without a network. It never keeps an API answer, a share link's page or anything else: those
  // always go to the server. A new version deployed shows a prompt to reload (AppUpdatePrompt.vue).
  // Pushes from the server (server/lib/jobs/web-push.ts) show as the device's notifications.
  pwa: {
    registerType: 'prompt',
    injectRegister: false,
    client: { installPrompt: true, periodicSyncForUpdates: 3600 },
    manifest: {
      name: 'OR3 Chat',
      short_name: 'OR3 Chat',
      description: 'Chat with AI models; answers and workflows keep running on the server when you leave.',
      start_url: '/',
      scope: '/',
      display: 'standalone',
      background_color: '#ffffff',
      theme_color: '#2f6feb',
      icons: [
        { src: '/icons/icon-192.png', sizes: '192x192', type: 'image/png' },
        { src: '/icons/icon-512.png', sizes: '512x512', type: 'image/png' },
        { src: '/icons/icon-maskable-512.png', sizes: '512x512', type: 'image/png', purpose: 'maskable' },
      ],
    },
    workbox: {
      // The pages are rendered in the browser from one shell: the shell of a page shown before is
      // served when the network is not there. Nothing is precached but the built files and icons.
      navigateFallback: null,
      // Web Push: the push and notificationclick handlers (public/push-handler.js).
      importScripts: ['/push-handler.js'],
      // Fonts in WOFF2 only: every browser with a service worker reads it, and KaTeX's CSS names it
      // first, so its WOFF and TTF copies (40 files, 0.8 MB) were fetched on a first visit for nothing.
      globPatterns: ['_nuxt/**/*.{js,css,woff2}', 'icons/*.png', 'favicon.svg'],
      maximumFileSizeToCacheInBytes: 6 * 1024 * 1024,
      cleanupOutdatedCaches: true,
      runtimeCaching: [{
        urlPattern: ({ request, url }) => request.mode === 'navigate' && !/^\/(?:api|share|auth)\//.test(url.pathname),
        handler: 'NetworkFirst',
        options: { cacheName: 'or3-pages', networkTimeoutSeconds: 4, expiration: { maxEntries: 20 } },
      }],
    },
    devOptions: { enabled: false },
  },

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
  // A test build (inside node_modules/.cache) leaves the server's dependencies where they are,
  // resolved from the project's node_modules, rather than tracing and copying 126 packages into
  // .output (a third of its build time).
  nitro: {
    compressPublicAssets: { gzip: true, brotli: true },
    ...(testBuildDir ? { output: { dir: join(testBuildDir, '.output') }, externals: { trace: false } } : {}),
  },
  ...(testBuildDir ? { buildDir: join(testBuildDir, '.nuxt') } : {}),

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
        // The shared worker that holds the browser's one live connection (app/workers/live-events.ts).
        'worker-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'none'"],
        'form-action': ["'self'"],
        'frame-ancestors': ["'none'"],
        'upgrade-insecure-requests': false,
      },
      // The location tool and dictation run in the page (each with the person's consent); every other feature stays off.
      permissionsPolicy: { geolocation: ['self'], microphone: ['self'] },
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
  // What a browser paints before the app's scripts have run (the app pages render in the browser):
  // its shape and a "loading" line, with no script of its own.
  spaLoadingTemplate: 'spa-loading-template.html',
  app: {
    head: {
      htmlAttrs: { lang: 'en' },
      link: [
        { rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' },
        { rel: 'manifest', href: '/manifest.webmanifest' },
        { rel: 'apple-touch-icon', href: '/icons/apple-touch-icon-180.png' },
      ],
      meta: [{ name: 'theme-color', content: '#2f6feb' }],
    },
  },

  // Every setting of the server with its default, declared once in its schema (with its type, bounds
  // and meaning). Each is overridable at run time by its NUXT_* environment variable (README
  // "Configuration", generated from the same schema); server/plugins/00.config.ts validates the
  // merged result at start-up.
  runtimeConfig: serverConfigDefaults(),

  // A link's page is fetched ahead when the pointer or the focus reaches it, not whenever it is
  // on screen: the sidebar shows every page and up to a hundred conversations on every page.
  experimental: { defaults: { nuxtLink: { prefetchOn: { visibility: false, interaction: true } } } },

  hooks: {
    // App errors (quotas, a busy store, job caps) become their HTTP answers before Nuxt's own
    // error handler sends them (server/error-handler.ts).
    'nitro:config'(nitroConfig) {
      // The built server's entry: Nitro's node-server, plus HTTPS with HTTP/2 when a certificate
      // is configured (server/entry.ts). Another preset (NITRO_PRESET) keeps its own.
      const preset = nitroConfig.preset ?? process.env.NITRO_PRESET ?? process.env.SERVER_PRESET
      if (!nitroConfig.dev && (!preset || preset === 'node-server' || preset === 'node')) {
        nitroConfig.entry = fileURLToPath(new URL('./server/entry.ts', import.meta.url))
      }
      const handlers = nitroConfig.errorHandler ? [nitroConfig.errorHandler].flat() : []
      nitroConfig.errorHandler = [fileURLToPath(new URL('./server/error-handler.ts', import.meta.url)), ...handlers]
      // jiti (the dynamic tools directory's loader) requires its TypeScript transform lazily, so
      // the build's file trace misses it: include it by path.
      nitroConfig.externals ??= {}
      // run_code's worker requires QuickJS by path at run time (server/lib/tools/code/quickjs-sandbox.ts):
      // its CommonJS entries and the WebAssembly file they read are included by path too, and so is
      // Pyodide, which Python runs from inside the sandbox (python-sandbox.ts).
      const require = createRequire(import.meta.url)
      const quickjsVariant = require.resolve('@jitl/quickjs-wasmfile-release-sync')
      nitroConfig.externals.traceInclude = [
        ...(nitroConfig.externals.traceInclude ?? []),
        join(dirname(require.resolve('jiti/package.json')), 'dist', 'babel.cjs'),
        require.resolve('quickjs-emscripten-core'),
        quickjsVariant,
        join(dirname(quickjsVariant), 'emscripten-module.cjs'),
        join(dirname(quickjsVariant), 'emscripten-module.wasm'),
        // web_fetch parses pages in a worker that requires these by path.
        require.resolve('linkedom'),
        require.resolve('@mozilla/readability'),
        require.resolve('turndown'),
        // Knowledge bases read documents in a process that requires these by path (server/lib/knowledge/read-document.ts).
        require.resolve('unpdf'),
        join(dirname(require.resolve('unpdf')), 'pdfjs.mjs'),
        require.resolve('mammoth'),
        // Knowledge search by meaning: sqlite-vec loads its platform's SQLite extension by path.
        ...sqliteVecExtension(require),
        // Python for run_code: the pyodide package is bound into the sandbox from the output by path.
        ...['package.json', 'pyodide.mjs', 'pyodide.asm.mjs', 'pyodide.asm.wasm', 'python_stdlib.zip', 'pyodide-lock.json'].map(file => join(dirname(require.resolve('pyodide/pyodide.mjs')), file)),
      ]
    },
    // No <link rel="prefetch"> for every lazily loaded chunk (every page, dialog and menu: some
    // forty scripts a first visit fetched whether or not it would open them). A page's chunks are
    // still prefetched when a link to it shows (NuxtLink), and a dialog's when it is first opened.
    'build:manifest'(manifest) {
      for (const chunk of Object.values(manifest)) chunk.dynamicImports = []
    },
  },

  typescript: {
    strict: true,
    // The component tests mount the app's .vue files: they are checked with the app, by vue-tsc
    // (the rest of tests/ is plain TypeScript, checked by TypeScript 7: scripts/typecheck.mjs).
    tsConfig: { include: ['../tests/components/**/*'] },
  },
})

/** sqlite-vec's loadable extension for this platform, by path (none on a platform it has no build for). */
function sqliteVecExtension(require: NodeJS.Require): string[] {
  try {
    return [(require('sqlite-vec') as { getLoadablePath: () => string }).getLoadablePath()]
  } catch {
    return []
  }
}
