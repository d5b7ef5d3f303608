/**
 * Vitest global setup of the projects that run the built app (e2e, browser): starts building it
 * in the background at once (and, for e2e, the tool-discovery fixture app after it), so the build
 * runs while the unit, component and Convex files do (the sequencer runs those first) instead of
 * holding a worker for a minute and a half (and, under `npm test`, the type check beside it all
 * at the lowest priority: typecheck-beside.ts). It does not wait: a file that needs the app waits in
 * `buildApp` for the build lock and then uses the build (the same sources make the same build). A build that fails here
 * is built again by the first file that needs it, which reports the failure.
 */
import { resolve } from 'node:path'
import type { TestProject } from 'vitest/node'
import { buildApp } from './app-build'
import { startTypecheck, typecheckWanted } from './typecheck-beside'

const fixtureRoot = resolve(import.meta.dirname, '../fixtures/app-with-tools')

export default function startBuildingTheApp(project: TestProject): () => Promise<void> {
  const app = buildApp()
  // Only e2e has a file (tool-discovery.test.ts) that runs the fixture app.
  const building = (project.name === 'e2e' ? app.then(() => buildApp(fixtureRoot)) : app).catch(() => {})
  // Under `npm test`, the project's type check starts at once, at the lowest priority: it runs on
  // what the build and the files leave idle (one project starts it).
  const typecheck = project.name === 'browser' && typecheckWanted() ? startTypecheck() : undefined
  return async () => {
    await building
    await typecheck?.finished()
  }
}
