/**
 * The layering rules of ../docs (see README "Architecture"): routes and plugins → server/utils
 * (the Nitro facade) → server/lib (plain TypeScript) → shared/. Checked by
 * tests/unit/architecture.test.ts in `npm test`; run `npx depcruise server app shared` to see
 * violations yourself.
 */
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
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
      from: { path: '^(server|app|shared)/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)(node_modules|\\.nuxt|\\.output|convex/_generated)/' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js', '.vue', '.json'] },
  },
}
