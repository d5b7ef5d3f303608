/**
 * The layering rules of ../docs (see README "Architecture"): routes and plugins → server/utils
 * (the Nitro facade) → server/lib (plain TypeScript) → shared/; inside server/lib, folders in one
 * order (LIB_FLOORS); convex/ functions import only convex/ and shared/. Checked by
 * tests/unit/architecture.test.ts in `npm test`; run `npx depcruise server app shared convex` to
 * see violations yourself.
 */

/**
 * The folders of server/lib, lowest first. A folder imports only folders on floors below its
 * own (type-only imports too), never one beside or above it, so no two folders import each
 * other. The files at the root of server/lib (domain-error.ts, follow-signal.ts, tracing.ts) are the ground
 * every floor may use. Why this order (README, Architecture):
 * - config, security, i18n: settings and their parsers, sealing secrets, the server's own messages
 *   in each language; they need nothing.
 * - stores: where things are kept, by backend; they know shapes (shared/), not what uses them.
 * - openrouter: the upstream's wire format and client; tools: the registry and every tool source
 *   (they speak the wire format's tool definition); attachments: files as model message parts;
 *   knowledge: knowledge bases, their documents' reading and indexing, and `search_knowledge`;
 *   voice: dictation and read aloud by the operator's speech endpoints;
 *   models: which endpoint answers a model (and the offline demo model, which reads attachments);
 *   images: `generate_image`, pictures made by an image model kept as a conversation's files.
 * - agent: the tool loop; workflows: the graph, its validation and its executor, which runs agents;
 *   jobs: runs of both as durable background jobs.
 * - threads: conversations, whose messages start jobs and keep their answers; auth: accounts,
 *   which own everything below; http: the only floor that knows h3; metrics: what runs report
 *   (jobs' JobObserver) and the services' health, in Prometheus' terms; runtime: builds all of them.
 */
const LIB_FLOORS = [
  ['config', 'security', 'i18n'],
  ['stores'],
  ['openrouter'],
  ['tools'],
  ['attachments', 'knowledge', 'voice'],
  ['models', 'images'],
  ['agent'],
  ['workflows'],
  ['jobs'],
  ['threads'],
  ['auth'],
  ['http', 'metrics'],
  ['runtime'],
]

const folderOrder = LIB_FLOORS.flatMap((floor, index) => floor.map((folder) => {
  const notBelow = [...LIB_FLOORS.slice(index + 1).flat(), ...floor.filter(other => other !== folder)]
  return {
    name: `lib-floor-${folder}`,
    comment: `server/lib/${folder} imports only the folders below it (${LIB_FLOORS.slice(0, index).flat().join(', ') || 'none'}) and the root files (.dependency-cruiser.cjs, LIB_FLOORS).`,
    severity: 'error',
    from: { path: `^server/lib/${folder}/` },
    to: { path: `^server/lib/(${notBelow.join('|')})/` },
  }
}))

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...folderOrder,
    {
      name: 'lib-root-files-are-ground',
      comment: 'The files at the root of server/lib are what every floor may use: they import no folder of server/lib.',
      severity: 'error',
      from: { path: '^server/lib/[^/]+\\.ts$' },
      to: { path: '^server/lib/[^/]+/' },
    },
    {
      name: 'h3-only-in-lib-http',
      comment: 'Only server/lib/http knows the HTTP framework; domain code takes and returns plain values.',
      severity: 'error',
      from: { path: '^server/lib/', pathNot: '^server/lib/http/' },
      to: { path: '(^|/)node_modules/h3/' },
    },
    {
      name: 'convex-functions-stand-alone',
      comment: 'The Convex deployment bundles convex/ alone: its functions import only convex/, shared/ and packages (its tests may import the server\'s store adapters they test).',
      severity: 'error',
      from: { path: '^convex/', pathNot: '\\.test\\.ts$' },
      to: { path: '^(server|app|tests)/' },
    },
    {
      name: 'lib-not-to-utils',
      comment: 'server/lib is plain TypeScript: it never reaches up into the Nitro facade (server/utils), routes or plugins.',
      severity: 'error',
      from: { path: '^server/lib/' },
      to: { path: '^server/(utils|api|plugins|routes|middleware)/' },
    },
    {
      name: 'lib-not-to-nitro-auto-imports',
      comment: 'server/lib imports what it uses from the packages themselves (h3, zod…), never from #imports or Nitro\'s runtime.',
      severity: 'error',
      from: { path: '^server/lib/' },
      to: { path: '^(#imports|#internal|nitropack/runtime|nuxt/app)' },
    },
    {
      name: 'routes-through-the-facade',
      comment: 'Routes call server/utils (auth, validation, one call); domain modules stay behind it.',
      severity: 'error',
      from: { path: '^server/api/' },
      to: { path: '^server/lib/' },
    },
    {
      name: 'app-not-to-server',
      comment: 'The app gets its types from shared/, never from server code.',
      severity: 'error',
      from: { path: '^app/' },
      to: { path: '^server/' },
    },
    {
      name: 'shared-stands-alone',
      comment: 'shared/ is imported by the app, the server and Convex; it imports none of them.',
      severity: 'error',
      from: { path: '^shared/' },
      to: { path: '^(server|app|convex)/' },
    },
    {
      name: 'no-cycles',
      comment: 'Modules that import each other (at run time) cannot be understood or tested one at a time.',
      severity: 'error',
      from: { path: '^(server|app|shared|convex)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(\\.nuxt|\\.output|convex/_generated)/' },
    tsPreCompilationDeps: true,
    // Nuxt's aliases (~~/, #server/, #shared/…) resolve to the files they name, so an import
    // through an alias is held to the same rules as a relative one.
    tsConfig: { fileName: '.dependency-cruiser.tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js', '.vue', '.json'] },
  },
}
// For the architecture test (every folder of server/lib has a floor); not part of the config.
Object.defineProperty(module.exports, 'LIB_FLOORS', { value: LIB_FLOORS, enumerable: false })
