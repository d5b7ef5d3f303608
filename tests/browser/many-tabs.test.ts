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
let appUrl = ''

afterEach(async () => {
  await context?.close()
  context = undefined
})

const RESUMED = 'The answer the resumed run gave, from its checkpoint, whole. '.repeat(4).trim()

const answerOf = (page: Page) => page.getByTestId('message-assistant').last()
const textOf = (page: Page) => () => answerOf(page).getByTestId('message-content').innerText().catch(() => '')

describe('many tabs on one shared live connection', () => {
  it('resumes every tab after kill -9 of the server mid-answer, each ending with exactly the stored answer; a tab frozen in the background meanwhile catches up', async () => {
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
    // One tab is frozen in the background (as Chromium freezes a hidden tab) through the crash and the whole resumed answer.
    const background = tabs.pop()!
    const lifecycle = await context.newCDPSession(background)
    await lifecycle.send('Page.setWebLifecycleState', { state: 'frozen' })

    await first.stop('SIGKILL')
    await servers.start({ NUXT_DATA_DIR: dataDir, PORT: port })
    // Each tab's view was rewound by the resumed run's snapshot (in its log), then went on to the end.
    for (const tab of tabs) await answerOf(tab).and(tab.locator('[data-status=complete]')).waitFor({ timeout: 60_000 })
    const texts = await Promise.all(tabs.map(tab => textOf(tab)()))
    for (const text of texts) expect(text).toBe(RESUMED)
    // Brought back, the frozen tab catches up to the same answer.
    await lifecycle.send('Page.setWebLifecycleState', { state: 'active' })
    await answerOf(background).and(background.locator('[data-status=complete]')).waitFor({ timeout: 60_000 })
    expect(await textOf(background)()).toBe(RESUMED)
    // A fresh load (the stored answer) shows the same.
    const stored = await context.newPage()
    await stored.goto(url)
    await answerOf(stored).and(stored.locator('[data-status=complete]')).waitFor()
    expect(await textOf(stored)()).toBe(RESUMED)
    gated.openAll()
  })

  it('without SharedWorker (Chrome on Android), the tabs elect one to hold the connection, and another takes over when it closes', async () => {
    await servers.start().then(app => (appUrl = app.url))
    const gated = gatedTextReply(['Part one for the tabs. ', 'Part two after the leader left. ', 'The end.'])
    fake.script([gated.reply])
    context = await browser.newContext({ viewport: { width: 1200, height: 820 } })
    await context.addInitScript((model) => {
      // As in a browser without SharedWorker.
      Object.defineProperty(window, 'SharedWorker', { value: undefined, configurable: true })
      if (location.protocol === 'http:') localStorage.setItem('or3:model', model)
    }, MODEL)
    const ownStreams: string[] = []
    context.on('request', (request) => {
      if (/\/api\/jobs\/[^/]+\/stream/.test(request.url())) ownStreams.push(request.url())
    })
    const leader = await context.newPage()
    const url = await startChat(leader, appUrl, 'Write a story for the tabs')
    const others: Page[] = []
    for (let index = 0; index < 7; index++) {
      const tab = await context.newPage()
      await tab.goto(url)
      others.push(tab)
    }
    for (const tab of [leader, ...others]) await expect.poll(textOf(tab)).toContain('Part one for the tabs.')
    // The first tab leads: closing it hands the connection to another, and the answer goes on in every tab.
    await leader.close()
    gated.open()
    for (const tab of others) await expect.poll(textOf(tab)).toContain('Part two after the leader left.')
    gated.open()
    for (const tab of others) await answerOf(tab).and(tab.locator('[data-status=complete]')).waitFor()
    for (const tab of others) expect(await textOf(tab)()).toBe('Part one for the tabs. Part two after the leader left. The end.')
    // One connection for all of them: the elected tab's, never a stream per tab.
    expect(ownStreams).toEqual([])
  })
})
