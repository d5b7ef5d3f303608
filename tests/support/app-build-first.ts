/**
 * Vitest global setup of the projects that run the built app (e2e, browser): starts building it
 * (and the tool-discovery fixture app after it) in the background at once, so the build runs
 * while the unit, component and Convex files do (the sequencer runs those first) instead of
 * holding a worker for a minute and a half. It does not wait: a file that needs the app waits in
 * `buildApp` for the build lock and then reuses the build (same run id). A build that fails here
 * is built again by the first file that needs it, which reports the failure.
 */
import { resolve } from 'node:path'
import { buildApp } from '../e2e/helpers/built-app'

const fixtureRoot = resolve(import.meta.dirname, '../fixtures/app-with-tools')

let building: Promise<unknown> | undefined

export default function startBuildingTheApp(): () => Promise<void> {
  building ??= buildApp().then(() => buildApp(fixtureRoot)).catch(() => {})
  return async () => {
    await building
  }
}
