/**
 * First paint of the app's pages (issue 58), in `npm run bench`: the built server and headless
 * Chromium on this machine, each page loaded cold (an empty cache) several times: when something
 * first paints (the loading shell, before any script), when the page is ready, and its compressed
 * script. Printed, not asserted.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { bench, describe } from 'vitest'
import { buildApp } from '../support/app-build'
import { startApp } from '../support/built-app'
import { coldPageLoad, launchChromium, type ColdLoad } from '../browser/helpers/browser'
import { percentile } from './support/process-stats'

const LOADS = 7
const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

describe('first paint', () => {
  bench('the new chat and a conversation with code and math, loaded cold', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'or3-first-paint-'))
    const app = await startApp(await buildApp(), { NUXT_DATA_DIR: dataDir, NUXT_SESSION_PASSWORD: 'a-first-paint-bench-password-long-enough', NUXT_AUTH_GUESTS: 'false', NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '1' })
    const browser = await launchChromium()
    try {
      const context = await browser.newContext()
      const page = await context.newPage()
      await page.goto(`${app.url}/login`)
      await page.locator('input[name=name]').fill('Root')
      await page.locator('input[name=password]').fill('correct horse battery')
      await page.getByRole('button', { name: 'Create account' }).click()
      await page.waitForURL(`${app.url}/`)
      for (const question of ['say ```ts\nconst answer: number = 42\n```', 'say Euler: $e^{i\\pi} + 1 = 0$']) {
        await page.getByTestId('composer-input').fill(question)
        await page.getByTestId('composer-input').press('Enter')
        await page.getByTestId('message-assistant').last().and(page.locator('[data-status=complete]')).waitFor()
      }
      await page.locator('.katex').first().waitFor()
      const conversation = new URL(page.url()).pathname
      const session = await context.storageState()
      const rows: string[] = []
      for (const [name, path, ready] of [['new chat', '/', '[data-testid=composer-input]'], ['conversation with code and math', conversation, '.katex']] as const) {
        const loads: ColdLoad[] = []
        for (let load = 0; load < LOADS; load++) loads.push(await coldPageLoad(browser, session, `${app.url}${path}`, ready))
        const paint = Float64Array.from(loads, load => load.firstPaintMs).sort()
        const readyAt = Float64Array.from(loads, load => load.readyMs).sort()
        rows.push(`| ${name} | ${percentile(paint, 0.5)} / ${paint.at(-1)} ms | ${percentile(readyAt, 0.5)} / ${readyAt.at(-1)} ms | ${loads[0]!.scriptKB} KB in ${loads[0]!.scripts} scripts |`)
      }
      console.log(['', `First paint, ${LOADS} cold loads each (p50 / max):`, '| Page | First contentful paint | Ready | Script (compressed) |', '|---|---|---|---|', ...rows].join('\n'))
    } finally {
      await browser.close()
      await app.stop()
      rmSync(dataDir, { recursive: true, force: true })
    }
  }, once)
})
