import { resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../support/app-build'
import { startAppExpectingFailure, useBuiltApp } from '../support/built-app'

const fixtureRoot = resolve(import.meta.dirname, '../fixtures/app-with-tools')
const app = useBuiltApp({}, { rootDir: fixtureRoot })

describe('tool discovery in a built server', () => {
  it('registers the good tool files of the app and of the layer it extends (app first)', async () => {
    const { tools } = await (await fetch(`${app.url}/api/tools`)).json() as { tools: Array<{ name: string, capabilities?: string[] }> }
    // The workbench's tools (each naming what it reaches) are built in beside them.
    expect(tools.filter(tool => !tool.capabilities).map(tool => tool.name)).toEqual(['get_current_time', 'calculate', 'get_current_weather', 'shout', 'convert_units'])
  })

  it('reports each malformed file at start-up with its path and what is wrong, and keeps serving', async () => {
    const logs = app.logs()
    expect(logs).toMatch(/Skipped server\/tools\/nested\/broken-export\.ts: exports no tool/)
    expect(logs).toMatch(/Skipped server\/tools\/throws\.ts: failed to import: SECRET_SERVICE_URL is not set/)
    expect(logs).not.toMatch(/_draft|must not be imported/)
    expect(logs).toMatch(/Registered shout, convert_units from server\/tools/)
    expect((await fetch(`${app.url}/api/tools`)).status).toBe(200)
  })
})

describe('start-up configuration check', () => {
  it('refuses to start with the Convex store and no NUXT_CONVEX_URL, saying what to set', async () => {
    const { code, output } = await startAppExpectingFailure(await buildApp(fixtureRoot), {
      NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER: 'convex',
      NUXT_CONVEX_URL: '',
    })
    expect(code).not.toBe(0)
    expect(output).toMatch(/NUXT_CONVEX_URL: required when NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER=convex/)
  })

  it('refuses an unknown storage provider naming the variable', async () => {
    const { code, output } = await startAppExpectingFailure(await buildApp(fixtureRoot), { NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER: 'postgres' })
    expect(code).not.toBe(0)
    expect(output).toMatch(/NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER/)
  })
})
