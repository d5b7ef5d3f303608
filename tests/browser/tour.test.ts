import { mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useBuiltApp } from '../support/built-app'
import { useChromium, watchForProblems } from './helpers/browser'
import { useProfiles } from './helpers/profiles'

// A tour of every page, as a newcomer sees it, in light and dark, to make the README's screenshots:
// it runs with DOCS_SCREENSHOTS=1 (writing them to docs/) or TOUR=1 (to screenshots/tour). What it
// also checks (every page under the CSP without errors, the dark theme really dark) the
// accessibility file checks on every page in every run.

const app = useBuiltApp({ NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '5' })
const browser = useChromium()
const profiles = useProfiles(browser)

const target = process.env.DOCS_SCREENSHOTS === '1'
  ? resolve(import.meta.dirname, '../../docs')
  : resolve(import.meta.dirname, 'screenshots/tour')

async function shoot(page: Page, name: string): Promise<void> {
  mkdirSync(target, { recursive: true })
  // Toasts about earlier answers would cover the page.
  for (const close of await page.getByRole('button', { name: 'Close' }).all()) await close.click().catch(() => {})
  // Fonts loaded, and the transitions the page started (a toast leaving, a colour change) ended.
  await page.evaluate(async () => {
    await document.fonts.ready
    await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)))
    const finite = document.getAnimations().filter(animation => animation.effect?.getComputedTiming().iterations !== Infinity)
    await Promise.all(finite.map(animation => animation.finished.catch(() => {})))
  })
  await page.screenshot({ path: join(target, `screenshot-${name}.png`) })
}

/** The page's background colour's lightness (0 black … 255 white). */
function backgroundLightness(page: Page): Promise<number> {
  return page.evaluate(() => {
    const [r, g, b] = getComputedStyle(document.body).backgroundColor.match(/\d+/g)!.map(Number)
    return (r! + g! + b!) / 3
  })
}

async function askAndWait(page: Page, text: string): Promise<void> {
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('composer-input').press('Enter')
  await page.getByTestId('message-assistant').last().and(page.locator('[data-status=complete]')).waitFor()
}

describe.runIf(process.env.DOCS_SCREENSHOTS === '1' || process.env.TOUR === '1')('a tour of the app in light and dark', () => {
  for (const theme of ['light', 'dark'] as const) {
    it(`shows chat, conversations, jobs, workflows and settings in ${theme}`, async () => {
      const context = await profiles.fresh({ viewport: { width: 1280, height: 800 }, colorScheme: theme })
      const page = await context.newPage()
      const problems = watchForProblems(page)
      // The person's pick, as the sidebar's toggle keeps it.
      await context.addInitScript(choice => localStorage.setItem('or3:theme', choice), theme)

      // A few conversations, so the list is a list.
      await page.goto(`${app.url}/`)
      await askAndWait(page, 'What is the weather in Lisbon in celsius?')
      await page.goto(`${app.url}/`)
      await askAndWait(page, 'Convert 10 km to miles')
      await page.goto(`${app.url}/`)
      await askAndWait(page, 'What time is it in Tokyo right now?')
      await page.getByTestId('message-assistant').last().getByTestId('regenerate').click()
      await page.getByTestId('message-assistant').last().getByTestId('versions').filter({ hasText: '2 / 2' }).waitFor()
      await page.getByTestId('message-assistant').last().and(page.locator('[data-status=complete]')).waitFor()
      await askAndWait(page, 'say Here is the check:\n```ts\nconst ok: boolean = answers.every(answer => answer.kept)\n```')
      await page.locator('pre.shiki').waitFor()
      // The generated title reaches the sidebar.
      await page.locator('.threads__item').filter({ hasText: 'Time in Tokyo' }).waitFor()
      expect(await backgroundLightness(page)).toSatisfy((lightness: number) => (theme === 'dark' ? lightness < 80 : lightness > 200))
      await shoot(page, `chat-${theme}`)

      // The conversation list, searched.
      await page.getByRole('searchbox').fill('tokyo')
      await page.getByTestId('search-hit').first().waitFor()
      await shoot(page, `threads-${theme}`)

      // The jobs page, with the long answer running (on a loaded machine it may have ended by the time
      // the page shows: the row is there either way, and the screenshot is of whichever it is).
      await page.goto(`${app.url}/`)
      await page.getByTestId('composer-input').fill('Write a long story about jobs that outlive their tab')
      await page.getByTestId('composer-input').press('Enter')
      await page.waitForURL(/\/chat\//)
      await page.goto(`${app.url}/jobs`)
      await page.getByTestId('job-row').filter({ hasText: 'Write a long story' }).first().waitFor()
      await shoot(page, `jobs-${theme}`)

      // A workflow run, finished.
      await page.goto(`${app.url}/workflows`)
      await page.getByTestId('install-research-draft-critique').click()
      await page.getByTestId('workflow-item').filter({ hasText: 'Research' }).first().waitFor()
      await page.getByTestId('run-prompt').fill('Plan a weekend in Lisbon')
      await page.getByTestId('run-workflow').click()
      await page.waitForURL(/\/workflows\/runs\//)
      await page.getByTestId('run-status').and(page.locator('[data-status=complete]')).waitFor({ timeout: 90_000 })
      await shoot(page, `workflows-${theme}`)
      // The runs page, with that run; and the editor's canvas with a step's settings open.
      await page.getByRole('link', { name: 'All runs' }).click()
      await page.getByTestId('run-row').first().waitFor()
      await shoot(page, `workflow-runs-${theme}`)
      await page.goto(`${app.url}/workflows`)
      await page.getByTestId('workflow-item').filter({ hasText: 'Research' }).first().click()
      await page.locator('.vue-flow__node').nth(2).click()
      await page.getByTestId('step-panel').waitFor()
      await page.getByTestId('workflow-editor').evaluate(element => element.scrollIntoView({ block: 'start' }))
      await shoot(page, `workflow-editor-${theme}`)

      await page.goto(`${app.url}/settings`)
      await page.getByRole('heading', { level: 1 }).waitFor()
      await shoot(page, `settings-${theme}`)

      expect(problems.errors).toEqual([])
      expect(problems.csp).toEqual([])
    })
  }
})
