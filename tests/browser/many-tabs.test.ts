/**
 * Many tabs of one browser on the shared live connection (app/workers/live-events.ts), on plain
 * HTTP/1.1 as the quick start serves it, through a kill -9 of the server mid-answer: every tab
 * resumes on its own and ends with exactly the stored answer (no gap, nothing twice).
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { useAppServers, useDataDirs } from '../support/built-app'
import { gatedTextReply, textReply, useFakeOpenRouter } from '../support/fake-openrouter'
import { startChat, useChromium } from './helpers/browser'

const MODEL = 'openai/gpt-4o-mini'
const fake = useFakeOpenRouter()
const dataDirs = useDataDirs('or3-many-tabs-')
const servers = useAppServers(() => ({
  NUXT_OPENROUTER_BASE_URL: fake.url,
  NUXT_OPENROUTER_API_KEY: 'sk-or-v1-many-tabs-test-key',
  NUXT_SESSION_PASSWORD: 'a-many-tabs-session-password-that-is-long-enough',
  NUXT_DEMO_MODEL_ENABLED: 'false',
  NUXT_THREADS_GENERATE_TITLES: 'false',
  NUXT_LIMITS_ROLES_GUEST_MODELS: MODEL,
}))
const browser = useChromium()
let context: BrowserContext | undefined

afterEach(async () => {
  await context?.close()
  context = undefined
})

const RESUMED = 'The answer the resumed run gave, from its checkpoint, whole. '.repeat(4).trim()

const answerOf = (page: Page) => page.getByTestId('message-assistant').last()
const textOf = (page: Page) => () => answerOf(page).getByTestId('message-content').innerText().catch(() => '')

describe('many tabs on one shared live connection', () => {
  it('resumes every tab after kill -9 of the server mid-answer, each ending with exactly the stored answer', async () => {
    const dataDir = dataDirs.fresh()
    const first = await servers.start({ NUXT_DATA_DIR: dataDir })
    const port = new URL(first.url).port
    const gated = gatedTextReply(['Paragraph 1 before the crash.\n\n', 'Never sent.'])
    // The first request is cut by the crash; the resumed run asks again and gets the whole answer.
    fake.script([gated.reply, textReply(RESUMED, { pieceSize: 8, delayMs: 5 })])
    context = await browser.newContext({ viewport: { width: 1200, height: 820 } })
    await context.addInitScript((model) => {
      if (location.protocol === 'http:') localStorage.setItem('or3:model', model)
    }, MODEL)
    const page = await context.newPage()
    const url = await startChat(page, first.url, 'Write a long story before the crash')
    const tabs = [page]
    for (let index = 1; index < 8; index++) {
      const tab = await context.newPage()
      await tab.goto(url)
      tabs.push(tab)
    }
    for (const tab of tabs) await expect.poll(textOf(tab)).toContain('Paragraph 1 before the crash.')

    await first.stop('SIGKILL')
    await servers.start({ NUXT_DATA_DIR: dataDir, PORT: port })
    // Each tab's view was rewound by the resumed run's snapshot (in its log), then went on to the end.
    for (const tab of tabs) await answerOf(tab).and(tab.locator('[data-status=complete]')).waitFor({ timeout: 60_000 })
    const texts = await Promise.all(tabs.map(tab => textOf(tab)()))
    for (const text of texts) expect(text).toBe(RESUMED)
    // A fresh load (the stored answer) shows the same.
    const stored = await context.newPage()
    await stored.goto(url)
    await answerOf(stored).and(stored.locator('[data-status=complete]')).waitFor()
    expect(await textOf(stored)()).toBe(RESUMED)
    gated.openAll()
  })
})
