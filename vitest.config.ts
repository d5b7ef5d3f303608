import { fileURLToPath } from 'node:url'
import vue from '@vitejs/plugin-vue'
import ui from '@nuxt/ui/vite'
import { defineConfig } from 'vitest/config'
import AppFilesLast from './tests/support/app-files-last'
import SlowestFiles from './tests/support/slowest-files'

// Projects by environment: `unit` runs domain modules in plain Node (no Nuxt, no Nitro);
// `components` mounts the Vue components and composables in happy-dom (@vue/test-utils);
// `convex` runs the convex/ functions under convex-test (the edge runtime Convex uses);
// `e2e` runs the real app, built once per run, and talks to it over HTTP; `browser` drives that
// app in Debian's Chromium through playwright-core.
// Three files at a time on the two-core CI machine: the app builds in the background while the
// other projects' files run first, then the app's files run, longest first. The middle of a run is
// CPU-bound either way; its last minutes are e2e files that mostly wait (on timers, restarts,
// other processes), where two workers left ~100 of the run's core-seconds idle and a third fills
// them (606 s → 563 s for the same tree).
// Waits on a condition (expect.poll) give a loaded machine time: they end as soon as it holds, so
// a long limit costs nothing when the machine is fast (Vitest's default is 1 s).
const patient = { poll: { timeout: 30_000 } }
// Likewise a test's own time limit: some unit tests start real servers (MCP over stdio and HTTP),
// which take well past Vitest's default 5 s on a loaded two-core machine.
const plainLimits = { testTimeout: 60_000, hookTimeout: 60_000 }
// The plain projects' files share their worker's imported modules (`isolate: false`): each file no
// longer imports the server's modules afresh, which was two thirds of these projects' CPU (190
// CPU-s to 80 on the 2-core machine, the same 125 files passing in shuffled orders). Keep them so:
// no `vi.mock`, no environment variable set for good, fake timers put back in the file that took them.
const sharedModules = { isolate: false }

const appProject = {
  expect: patient,
  environment: 'node' as const,
  globalSetup: ['tests/support/app-build-first.ts'],
  benchmark: { include: [] },
  testTimeout: 120_000,
  hookTimeout: 240_000,
}

export default defineConfig({
  test: {
    maxWorkers: 3,
    // Every run ends with its ten slowest files (tests/support/slowest-files.ts).
    reporters: ['default', new SlowestFiles()],
    sequence: { sequencer: AppFilesLast },
    projects: [
      {
        test: {
          name: 'unit',
          ...sharedModules,
          expect: patient,
          ...plainLimits,
          include: ['tests/unit/**/*.test.ts'],
          environment: 'node',
          benchmark: { include: ['tests/bench/**/*.bench.ts'] },
        },
      },
      {
        // The official MCP conformance suite against the app's MCP client: its scenarios run one at
        // a time and mostly wait (on servers, reconnect timers), so the sequencer starts this file
        // first, beside the app's build and the other files, rather than last of the plain files.
        test: {
          name: 'conformance',
          expect: patient,
          ...plainLimits,
          include: ['tests/conformance/**/*.test.ts'],
          environment: 'node',
          benchmark: { include: [] },
        },
      },
      {
        // Nuxt UI's Vue plugin: its components (UButton…) resolve in the tested components as in the app.
        // dts: false: the plugin would otherwise write auto-imports.d.ts and components.d.ts at the root.
        plugins: [vue(), ui({ dts: false, ui: { colors: { primary: 'blue', neutral: 'slate' } } })],
        // Nuxt's alias for shared/, which the app's components import values through.
        resolve: { alias: { '#shared': fileURLToPath(new URL('./shared', import.meta.url)) } },
        test: {
          name: 'components',
          ...sharedModules,
          expect: patient,
          ...plainLimits,
          include: ['tests/components/**/*.test.ts'],
          setupFiles: ['tests/support/component-icons.ts', 'tests/support/component-i18n.ts'],
          environment: 'happy-dom',
          benchmark: { include: [] },
        },
      },
      {
        test: {
          name: 'convex',
          ...sharedModules,
          expect: patient,
          ...plainLimits,
          include: ['convex/**/*.test.ts'],
          environment: 'edge-runtime',
          server: { deps: { inline: ['convex-test'] } },
          benchmark: { include: [] },
        },
      },
      {
        test: { name: 'e2e', include: ['tests/e2e/**/*.test.ts'], ...appProject },
      },
      {
        test: { name: 'browser', include: ['tests/browser/**/*.test.ts'], ...appProject },
      },
    ],
  },
})
