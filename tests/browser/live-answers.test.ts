import { readFile } from 'node:fs/promises'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { useBuiltApp } from '../support/built-app'
import { gatedTextReply, textReply, toolCallReply, useFakeOpenRouter } from '../support/fake-openrouter'
import { counterAppOverStdio } from '../support/mcp-servers'
import { axeViolationsInBothSchemes, screenshot, sidewaysScroll, startChat, useChromium, watchForProblems } from './helpers/browser'
import { useProfiles } from './helpers/profiles'

// Answers the person acts on while they stream: leaving and coming back, two pages, Stop and Esc,
// the toast of an answer that ended elsewhere, the jobs page, "Jump to latest". The model is the
// fake OpenRouter, whose answers stream a first part and then wait for the test to let the next
// part through: the test acts while the answer is certainly still running, then lets it end at
// once (no waiting out a slow stream, and no race with one that ended too soon on a busy machine).

const MODEL = 'openai/gpt-4o-mini'
/** A second model, for answers side by side. */
const OTHER = 'anthropic/claude-sonnet-4'
const fake = useFakeOpenRouter()
/** The tests' MCP App server, and a policy that lets guests use it: one of its tools asks for approval, one is denied. */
const mcpDir = mkdtempSync(join(tmpdir(), 'or3-live-answers-'))
const mcpFile = join(mcpDir, 'mcp.json')
const policyFile = join(mcpDir, 'policy.json')
writeFileSync(mcpFile, JSON.stringify({ mcpServers: { apps: { command: process.execPath, args: counterAppOverStdio().args } } }))
writeFileSync(policyFile, JSON.stringify({ rules: [
  { effect: 'allow', tools: ['source:mcp/apps'], roles: ['guest'] },
  { effect: 'approve', tools: ['apps__reset_counter'] },
  { effect: 'deny', tools: ['apps__secret_numbers'] },
  // Pictures from the fake image model (guests need a rule: they cost credits).
  { effect: 'allow', tools: ['generate_image'], roles: ['guest'] },
] }))
afterAll(() => rmSync(mcpDir, { recursive: true, force: true }))
const app = useBuiltApp(() => ({
  NUXT_OPENROUTER_BASE_URL: fake.url,
  NUXT_OPENROUTER_API_KEY: 'sk-or-v1-live-answers-test-key',
  NUXT_DEMO_MODEL_ENABLED: 'false',
  NUXT_THREADS_GENERATE_TITLES: 'false',
  // Dictation through the fake's /audio/transcriptions.
  NUXT_VOICE_TRANSCRIPTION_MODEL: 'whisper-1',
  NUXT_LIMITS_ROLES_GUEST_MODELS: `${MODEL},${OTHER}`,
  // Thirteen answers at once for one guest (the jobs page test).
  NUXT_LIMITS_ROLES_GUEST_JOBS_AT_ONCE: '16',
  NUXT_MCP_CONFIG_FILE: mcpFile,
  NUXT_TOOLS_POLICY_FILE: policyFile,
  NUXT_IMAGES_MODEL: 'fake/image-model',
}))
const browser = useChromium()
const profiles = useProfiles(browser)
let context: BrowserContext
let pageProblems: ReturnType<typeof watchForProblems>[] = []
let answers: Array<ReturnType<typeof gatedTextReply>> = []

afterEach(async () => {
  // An answer a test left waiting ends, so its job frees its slot.
  for (const answer of answers) answer.openAll()
  answers = []
  const problems = pageProblems.flatMap(page => [...page.errors, ...page.csp])
  pageProblems = []
  expect(problems).toEqual([])
})

/** `count` paragraphs on `topic`, each naming its number (to find it, and to count it once). */
function paragraphs(topic: string, count: number): string {
  return Array.from({ length: count }, (_, index) => `Paragraph ${index + 1} about ${topic}: the answer goes on on the server whether or not a tab watches it.\n\n`).join('')
}

/** The next answer the model gives: `parts[0]` at once, each further part when the test opens its gate. */
function nextAnswer(parts: string[]): ReturnType<typeof gatedTextReply> {
  const answer = gatedTextReply(parts)
  answers.push(answer)
  fake.script([answer.reply])
  return answer
}

/** A fresh browser profile (a guest of its own) that picks the fake's model; its pages are watched for errors and CSP violations. */
async function freshPage(): Promise<Page> {
  context = await profiles.fresh({ viewport: { width: 1200, height: 820 } }, async (made) => {
    // On the app's pages only (a blank page's storage is not open to scripts).
    await made.addInitScript((model) => {
      // Not in a sandboxed frame (an answer's page), which has no storage.
      if (location.protocol === 'http:' && window === window.top) localStorage.setItem('or3:model', model)
    }, MODEL)
  })
  context.on('page', page => pageProblems.push(watchForProblems(page)))
  return context.newPage()
}

const ask = (page: Page, text: string) => startChat(page, app.url, text)

const answerOf = (page: Page) => page.getByTestId('message-assistant').last()
const textOf = (page: Page) => () => answerOf(page).getByTestId('message-content').innerText().catch(() => '')
const ended = (page: Page, status: 'complete' | 'aborted') => answerOf(page).and(page.locator(`[data-status=${status}]`)).waitFor()

describe('answers acted on while they stream', () => {
  it('keeps an answer going after its page is closed, and a new page on the thread continues it live to the end', async () => {
    const answer = nextAnswer([paragraphs('leaving', 3), paragraphs('coming back', 3)])
    const page = await freshPage()
    const url = await ask(page, 'Write a long story about background jobs')
    await expect.poll(textOf(page)).toContain('Paragraph 3 about leaving')
    await page.close()

    const again = await context.newPage()
    await again.goto(url)
    await answerOf(again).and(again.locator('[data-status=streaming]')).waitFor()
    await expect.poll(textOf(again)).toContain('Paragraph 3 about leaving')
    await screenshot(again, 'long-answer-reattached')
    answer.open()
    await ended(again, 'complete')
    const live = await textOf(again)()
    // The server kept asking the model while no page watched: the upstream request was never cut.
    expect(fake.requests.at(-1)!.clientDisconnected).toBe(false)

    // What a fresh load shows (the stored answer) is exactly what streamed: nothing missing or doubled.
    const stored = await context.newPage()
    await stored.goto(url)
    await ended(stored, 'complete')
    expect(live).toBe(await textOf(stored)())
    expect(live).toMatch(/^Paragraph 1 about leaving/)
    expect(live).toContain('Paragraph 3 about coming back')
    expect(live.match(/Paragraph 1 about leaving/g)).toHaveLength(1)
  })

  it('shows two pages on one thread the same live text', async () => {
    const answer = nextAnswer([paragraphs('two pages', 2), paragraphs('the same text', 2)])
    const first = await freshPage()
    const url = await ask(first, 'Write a long story, please')
    const second = await context.newPage()
    await second.goto(url)
    for (const page of [first, second]) await expect.poll(textOf(page)).toContain('Paragraph 2 about two pages')
    expect(await answerOf(first).getAttribute('data-status')).toBe('streaming')
    expect(await answerOf(second).getAttribute('data-status')).toBe('streaming')
    answer.open()
    await Promise.all([first, second].map(page => ended(page, 'complete')))
    expect(await textOf(first)()).toContain('Paragraph 2 about the same text')
    expect(await textOf(first)()).toBe(await textOf(second)())
    await screenshot(second, 'two-pages')
  })

  it('stops an answer with the Stop button and says so, and the model is no longer asked', async () => {
    nextAnswer([paragraphs('tabs', 1), paragraphs('never sent', 1)])
    const page = await freshPage()
    await ask(page, 'Write a long essay about tabs')
    await expect.poll(textOf(page)).toContain('Paragraph 1 about tabs')
    await page.getByTestId('stop-button').click()
    await ended(page, 'aborted')
    await expect.poll(() => answerOf(page).getByTestId('message-outcome').innerText()).toMatch(/Stopped/)
    await expect.poll(() => page.getByTestId('send-button').isVisible()).toBe(true)
    expect((await fake.settled(fake.requests.length - 1)).clientDisconnected).toBe(true)
    expect(await textOf(page)()).not.toContain('never sent')
    await screenshot(page, 'stopped')
  })

  it('lines up messages while an answer runs (queued, moved, edited, one removed), and they start in that order after it, on the server', async () => {
    const first = gatedTextReply(['Working on the plan', ' — done.'])
    answers.push(first)
    const lastUser = (request: { body: { messages: Array<{ role: string, content?: unknown }> } }) => String(request.body.messages.findLast(message => message.role === 'user')?.content ?? '')
    fake.script(request => lastUser(request) === 'Plan my week' ? first.reply : textReply(`Answer to ${lastUser(request)}.`))
    const page = await freshPage()
    await ask(page, 'Plan my week')
    await expect.poll(textOf(page)).toContain('Working on the plan')
    const composer = page.getByTestId('composer-input')
    const queued = () => page.getByTestId('queued-text').allInnerTexts()
    // Enter while it runs queues the message (the field empties for the next one); so does the Queue button.
    await composer.fill('Monday first')
    await composer.press('Enter')
    await expect.poll(queued).toEqual(['Monday first'])
    await expect.poll(() => composer.inputValue()).toBe('')
    await composer.fill('Tuesday next')
    await page.getByTestId('queue-button').click()
    await composer.fill('Drop this')
    await composer.press('Enter')
    await expect.poll(queued).toEqual(['Monday first', 'Tuesday next', 'Drop this'])
    // Moved up, edited in place, one removed: the keyboard reaches every action.
    await page.getByTestId('queued-1').getByTestId('queued-up').click()
    await expect.poll(queued).toEqual(['Tuesday next', 'Monday first', 'Drop this'])
    await page.getByTestId('queued-1').getByTestId('queued-edit').click()
    const field = page.getByTestId('queued-1').locator('textarea')
    await field.fill('Monday, edited')
    await field.press('Enter')
    await expect.poll(queued).toEqual(['Tuesday next', 'Monday, edited', 'Drop this'])
    await page.getByTestId('queued-2').getByTestId('queued-remove').focus()
    await page.keyboard.press('Enter')
    await expect.poll(queued).toEqual(['Tuesday next', 'Monday, edited'])
    expect(await axeViolationsInBothSchemes(page, '[data-testid=message-queue]')).toEqual([])
    await page.setViewportSize({ width: 390, height: 800 })
    expect(await sidewaysScroll(page)).toBe(0)
    await screenshot(page, 'message-queue-phone')
    await page.setViewportSize({ width: 1200, height: 820 })

    // The answer ends: the server starts each queued message in turn, and the page shows them stream in.
    first.openAll()
    const userTurns = () => page.getByTestId('message-user').allInnerTexts()
    await expect.poll(userTurns, { timeout: 20_000 }).toEqual(['Plan my week', 'Tuesday next', 'Monday, edited'].map(text => expect.stringContaining(text)))
    await page.getByTestId('message-assistant').nth(2).and(page.locator('[data-status=complete]')).waitFor({ timeout: 20_000 })
    await expect.poll(() => page.getByTestId('message-queue').count()).toBe(0)
    expect(await answerOf(page).getByTestId('message-content').innerText()).toContain('Answer to Monday, edited.')
  })

  it('opens a page an answer built in a sandbox: no cookies, no app API, no navigating the app, no network until allowed; an SVG and versions too', async () => {
    // A server that counts what reaches it: the page's only way out, when allowed.
    const beacon = createServer((request, response) => {
      beaconHits.push(request.url ?? '')
      response.setHeader('access-control-allow-origin', '*')
      response.end('ok')
    })
    const beaconHits: string[] = []
    await new Promise<void>(resolve => beacon.listen(0, '127.0.0.1', resolve))
    const beaconUrl = `http://127.0.0.1:${(beacon.address() as AddressInfo).port}/beacon`
    try {
      const probe = (version: string) => ['```html', `<!doctype html><html><head><title>Probe page</title></head><body><h1>Probe ${version}</h1><p id="cookie">…</p><p id="api">…</p><p id="net">…</p><p id="nav">…</p>`,
        '<script>',
        'const show = (id, text) => { document.getElementById(id).textContent = text }',
        'try { show("cookie", "read: " + document.cookie) } catch (error) { show("cookie", "blocked") }',
        'fetch("/api/threads", { credentials: "include" }).then(r => show("api", "status " + r.status), () => show("api", "blocked"))',
        `fetch(${JSON.stringify(beaconUrl)}).then(() => show("net", "reached"), () => show("net", "blocked"))`,
        'try { top.location.href = "https://example.com/" ; show("nav", "navigated") } catch (error) { show("nav", "blocked") }',
        '</script></body></html>', '```'].join('\n')
      const svg = '```svg\n<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><title>Dot</title><circle cx="20" cy="20" r="10" fill="teal"/><script>parent.postMessage("svg ran", "*")</script></svg>\n```'
      fake.script(request => textReply(request.body.messages.filter(message => message.role === 'user').length > 1 ? `Changed it.\n\n${probe('v2')}` : `Here it is.\n\n${probe('v1')}\n\n${svg}\n\n\`\`\`mermaid\nflowchart LR\n  Ask --> Answer\n\`\`\``))
      const page = await freshPage()
      const appUrl = await ask(page, 'Build me a probe page')
      await ended(page, 'complete')
      await page.getByTestId('open-artifact-0').click()
      const frame = page.frameLocator('[data-testid=artifact-frame]')
      await expect.poll(() => frame.locator('#api').innerText()).toBe('blocked')
      expect(await frame.locator('h1').innerText()).toBe('Probe v1')
      expect(await frame.locator('#cookie').innerText()).toBe('blocked')
      await expect.poll(() => frame.locator('#net').innerText()).toBe('blocked')
      expect(await frame.locator('#nav').innerText()).toBe('blocked')
      expect(page.url()).toBe(appUrl)
      expect(beaconHits).toEqual([])
      expect(await axeViolationsInBothSchemes(page, '[data-testid=artifact-panel]')).toEqual([])
      // Allowed: the network, and only that (still no session, still no app window).
      await page.getByTestId('artifact-network').click()
      await expect.poll(() => frame.locator('#net').innerText()).toBe('reached')
      expect(beaconHits).toEqual(['/beacon'])
      await expect.poll(() => frame.locator('#api').innerText()).toBe('blocked')
      expect(page.url()).toBe(appUrl)
      await page.keyboard.press('Escape')

      // The SVG opens as an image: its script never runs.
      const messages: string[] = []
      await page.exposeFunction('recordMessage', (text: string) => messages.push(text))
      await page.evaluate(() => window.addEventListener('message', event => (window as unknown as { recordMessage: (text: string) => void }).recordMessage(String(event.data))))
      await page.getByTestId('open-artifact-1').click()
      await page.getByTestId('artifact-image').waitFor()
      expect(await page.getByTestId('artifact-image').getAttribute('alt')).toBe('Dot')
      await page.keyboard.press('Escape')
      // A Mermaid diagram is drawn (the package loads now, the first time) and shown as an image too.
      await page.getByTestId('open-artifact-2').click()
      await expect.poll(() => page.getByTestId('artifact-image').getAttribute('src'), { timeout: 20_000 }).toMatch(/^data:image\/svg\+xml/)
      expect(decodeURIComponent((await page.getByTestId('artifact-image').getAttribute('src'))!)).toContain('Answer')
      await page.keyboard.press('Escape')

      // A later answer changes the page: its panel has both versions, the newest first on view.
      await page.getByTestId('composer-input').fill('Change the heading')
      await page.getByTestId('composer-input').press('Enter')
      await page.getByTestId('message-assistant').nth(1).and(page.locator('[data-status=complete]')).waitFor()
      await page.getByTestId('message-assistant').nth(1).getByTestId('open-artifact-0').click()
      await expect.poll(() => frame.locator('h1').innerText()).toBe('Probe v2')
      expect(await page.getByTestId('artifact-versions').innerText()).toContain('Version 2 of 2')
      await page.getByTestId('artifact-versions').getByRole('button', { name: 'Previous version' }).click()
      await expect.poll(() => frame.locator('h1').innerText()).toBe('Probe v1')
      await page.getByTestId('artifact-code').click()
      expect(await page.getByTestId('artifact-source').innerText()).toContain('<title>Probe page</title>')
      expect(messages).toEqual([])
    } finally {
      await new Promise(resolve => beacon.close(resolve))
    }
  })

  it('shows an MCP App under its call: it gets the call\'s input and result, and its calls go through the policy (confirmed, denied) without the app\'s cookies or API', async () => {
    fake.script((request) => {
      if (request.body.messages.some(message => message.role === 'tool')) return textReply('Here is your counter.')
      return toolCallReply([{ id: 'call_counter', name: 'apps__show_counter', arguments: '{"start":5}' }])
    })
    const page = await freshPage()
    await ask(page, 'Show me a counter')
    await ended(page, 'complete')
    const view = page.frameLocator('[data-testid=mcp-app-frame]')
    await expect.poll(() => view.locator('#count').innerText(), { timeout: 20_000 }).toBe('5')
    expect(await view.locator('#input').innerText()).toBe('input {"start":5}')
    expect(await view.locator('#log').innerText()).toContain('host or3-chat')
    // It sized itself (150 px asked).
    await expect.poll(() => page.getByTestId('mcp-app-frame').evaluate(frame => (frame as HTMLElement).style.height)).toBe('150px')
    // A tool only the app may call.
    await view.locator('#plus').click()
    await expect.poll(() => view.locator('#count').innerText()).toBe('6')
    // One the policy asks approval for: the person confirms it in the app first.
    await view.locator('#reset').click()
    await page.getByTestId('mcp-app-confirm').waitFor()
    expect(await page.getByTestId('mcp-app-confirm').innerText()).toContain('apps__reset_counter')
    expect(await axeViolationsInBothSchemes(page, '[data-testid=messages]')).toEqual([])
    await page.getByTestId('mcp-app-run').click()
    await expect.poll(() => view.locator('#count').innerText()).toBe('0')
    // One it denies.
    await view.locator('#secret').click()
    await expect.poll(() => view.locator('#log').innerText()).toContain('secret_numbers refused: You cannot use apps__secret_numbers')
    // No cookies, no app API (the sandbox and its CSP).
    await view.locator('#escape').click()
    await expect.poll(() => view.locator('#log').innerText()).toContain('no api')
    expect(await view.locator('#log').innerText()).toContain('no cookies')
    // What it says goes into the composer for the person to send.
    await view.locator('#say').click()
    await expect.poll(() => page.getByTestId('composer-input').inputValue()).toBe('The counter says 0')
    expect(await sidewaysScroll(page)).toBe(0)
    await screenshot(page, 'mcp-app')
  })

  it('shows a picture the image model made under the call that made it, kept with the conversation', async () => {
    fake.imageReply('png')
    fake.script((request) => {
      if (request.body.messages.some(message => message.role === 'tool')) return textReply('Here is an orange square.')
      return toolCallReply([{ id: 'call_img', name: 'generate_image', arguments: '{"prompt":"an orange square"}' }])
    })
    const page = await freshPage()
    const url = await ask(page, 'Make me an orange square')
    await ended(page, 'complete')
    const image = page.getByTestId('made-image')
    await expect.poll(() => image.evaluate(element => (element as HTMLImageElement).naturalWidth)).toBe(8)
    expect(await image.getAttribute('alt')).toBe('an orange square')
    // Stored with the conversation: a fresh load shows it too.
    await page.goto(url)
    await expect.poll(() => page.getByTestId('made-image').evaluate(element => (element as HTMLImageElement).naturalWidth)).toBe(8)
    expect(await axeViolationsInBothSchemes(page, '[data-testid=messages]')).toEqual([])
  })

  it('dictates into the composer: the microphone records, the server\'s speech-to-text writes it down, and the words join the draft', async () => {
    const page = await freshPage()
    await page.goto(`${app.url}/`)
    const composer = page.getByTestId('composer-input')
    await expect.poll(() => composer.isEnabled()).toBe(true)
    await composer.fill('Note:')
    const before = fake.transcriptionRequests.length
    await page.getByTestId('dictate').click()
    // Recorded for a second (the status counts it), then stopped.
    await expect.poll(() => page.getByTestId('dictation-state').innerText()).toContain('0:01')
    expect(await page.getByTestId('dictate').getAttribute('aria-label')).toBe('Stop dictation')
    await page.getByTestId('dictate').click()
    await expect.poll(() => composer.inputValue()).toMatch(/^Note: Heard \d+ bytes of audio\/webm\.$/)
    expect(fake.transcriptionRequests.slice(before)).toEqual([expect.objectContaining({ model: 'whisper-1', language: 'en', fileType: 'audio/webm' })])
    expect(fake.transcriptionRequests.at(-1)!.bytes).toBeGreaterThan(0)
    await expect.poll(() => page.getByTestId('dictation-state').count()).toBe(0)
    expect(await page.getByTestId('dictate').getAttribute('aria-label')).toBe('Dictate')
  })

  it('keeps the focus in the composer after the first message of a new chat: Esc stops the answer, typing goes on there', async () => {
    nextAnswer([paragraphs('focus', 1), paragraphs('never sent', 1)])
    const page = await freshPage()
    await ask(page, 'Write a long essay about focus')
    await expect.poll(() => page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('composer-input')
    await expect.poll(textOf(page)).toContain('Paragraph 1 about focus')
    // The keyboard, not a click on the field: what a person does right after sending.
    await page.keyboard.press('Escape')
    await ended(page, 'aborted')
    await page.keyboard.type('and then?')
    expect(await page.getByTestId('composer-input').inputValue()).toBe('and then?')
  })

  it('stops an answer with Esc in the composer, then exports the conversation as Markdown and JSON', async () => {
    nextAnswer([paragraphs('keyboards', 1), paragraphs('never sent', 1)])
    const page = await freshPage()
    await ask(page, 'Write a long essay about keyboards')
    await expect.poll(textOf(page)).toContain('Paragraph 1 about keyboards')
    await page.getByTestId('composer-input').press('Escape')
    await ended(page, 'aborted')
    const [markdown] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-md').click()])
    expect(markdown.suggestedFilename()).toMatch(/^write-a-long-essay-about-keyboards\.md$/)
    const text = await readFile((await markdown.path())!, 'utf8')
    expect(text).toContain('## You\n\nWrite a long essay about keyboards')
    expect(text).toContain(`## Assistant (${MODEL})`)
    expect(text).toContain('Paragraph 1 about keyboards')
    const [json] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-json').click()])
    const exported = JSON.parse(await readFile((await json.path())!, 'utf8'))
    expect(exported.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant'])
  })

  it('tells the user with a toast when an answer finishes while they are elsewhere in the app, once', async () => {
    const answer = nextAnswer([paragraphs('settings', 1), paragraphs('the end', 1)])
    const page = await freshPage()
    const url = await ask(page, 'Write a long story while I look at the settings')
    await expect.poll(textOf(page)).toContain('Paragraph 1 about settings')
    await page.getByRole('link', { name: 'Settings', exact: true }).click()
    await page.waitForURL(/\/settings$/)
    await page.getByRole('heading', { level: 1 }).waitFor()
    answer.open()
    const toast = page.getByTestId('toast').filter({ hasText: 'Your answer is ready' })
    await toast.waitFor()
    await screenshot(page, 'toast-elsewhere')
    await toast.getByRole('link', { name: 'Open' }).click()
    await page.waitForURL(url)
    await ended(page, 'complete')
    // Shown once: the notification is read, so a reload has nothing to announce.
    const unread = () => page.evaluate(async () => (await (await fetch('/api/notifications?unread=true')).json()).notifications.length)
    await expect.poll(unread).toBe(0)
    await page.reload()
    await ended(page, 'complete')
    expect(await page.getByTestId('toast').count()).toBe(0)
  })

  it('keeps twenty tabs of one browser live on one answer over HTTP/1.1, and a twenty-first loads meanwhile', async () => {
    // A browser gives a host six HTTP/1.1 connections: one EventSource per tab stopped the seventh
    // tab's answer, and a ninth tab's page load. One shared connection serves them all.
    const answer = nextAnswer([paragraphs('many tabs', 2), paragraphs('all of them', 2)])
    const first = await freshPage()
    const ownStreams: string[] = []
    context.on('request', (request) => {
      if (/\/api\/jobs\/[^/]+\/stream|\/api\/tools\/events/.test(request.url())) ownStreams.push(request.url())
    })
    const url = await ask(first, 'Write a long story for many tabs')
    const tabs = [first]
    for (let index = 1; index < 20; index++) {
      const page = await context.newPage()
      await page.goto(url)
      tabs.push(page)
    }
    for (const page of tabs) await expect.poll(textOf(page)).toContain('Paragraph 2 about many tabs')
    const late = await context.newPage()
    await late.goto(`${app.url}/jobs`)
    // Twenty tabs of streaming text load a busy two-core machine: the late tab gets a long wait (it ends as soon as the row shows).
    await late.locator('[data-testid=job-row][data-status=streaming]').first().waitFor({ timeout: 90_000 })
    answer.open()
    await Promise.all(tabs.map(page => ended(page, 'complete')))
    const texts = await Promise.all(tabs.map(page => textOf(page)()))
    expect(texts[0]).toContain('Paragraph 2 about all of them')
    expect(new Set(texts).size).toBe(1)
    // No tab opened a stream of its own: the shared worker's one connection carried everything.
    expect(ownStreams).toEqual([])
  }, 240_000)

  it('keeps the jobs page live with eight running answers in one tab while five other tabs chat', async () => {
    // Each question gets its own answer: a first paragraph at once, the second when the test says.
    const byQuestion = new Map<string, ReturnType<typeof gatedTextReply>>()
    const replyTo = (question: string) => {
      const answer = gatedTextReply([paragraphs(question, 1), paragraphs(`${question}, continued`, 1)])
      answers.push(answer)
      byQuestion.set(question, answer)
    }
    fake.script((record) => {
      const question = String(record.body.messages.filter(message => message.role === 'user').at(-1)?.content ?? '')
      return byQuestion.get(question)?.reply ?? { type: 'http-error', status: 500, body: { error: { code: 500, message: `no answer for "${question}"` } } }
    })
    const jobsTab = await freshPage()
    const ownStreams: string[] = []
    context.on('request', (request) => {
      if (/\/api\/jobs\/[^/]+\/stream|\/api\/tools\/events/.test(request.url())) ownStreams.push(request.url())
    })
    await jobsTab.goto(`${app.url}/jobs`)
    // The page shows once its session is made (the app asks /api/auth/me first): a start sent
    // sooner goes without the cookie and makes a guest of its own, whose answers this page never lists
    // (the "six of eight rows" failure: the first two starts raced the page's first request).
    await jobsTab.getByRole('heading', { name: 'Jobs', exact: true }).waitFor()
    const background = Array.from({ length: 8 }, (_, index) => `Background question ${index + 1}`)
    background.forEach(replyTo)
    await jobsTab.evaluate(async ({ questions, model }) => {
      for (const content of questions) {
        const response = await fetch('/api/openrouter/stream', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content }], _background: true }) })
        if (response.status !== 202) throw new Error(`starting "${content}" answered ${response.status}`)
      }
    }, { questions: background, model: MODEL })
    const streamingRows = jobsTab.locator('[data-testid=job-row][data-status=streaming]')
    try {
      await expect.poll(() => streamingRows.count()).toBe(8)
    } catch (error) {
      // What the page shows, what the server lists now and what the model was asked: which of them lost an answer.
      const rows = await jobsTab.locator('[data-testid=job-row]').evaluateAll(found => found.map(row => row.getAttribute('data-status')))
      const listed = await jobsTab.evaluate(async () => (await fetch('/api/jobs?limit=50')).text())
      const toasts = await jobsTab.getByTestId('toast').allInnerTexts()
      const asked = fake.requests.map(request => request.body.messages.at(-1)?.content)
      throw new Error(`Not eight running rows. Rows: ${JSON.stringify(rows)}; toasts: ${JSON.stringify(toasts)}; the model was asked ${JSON.stringify(asked)}; /api/jobs now: ${listed.slice(0, 4000)}`, { cause: error })
    }

    const chats: Page[] = []
    for (let index = 1; index <= 5; index++) {
      const question = `Chat question ${index}`
      replyTo(question)
      const tab = await context.newPage()
      await ask(tab, question)
      chats.push(tab)
    }
    for (const [index, tab] of chats.entries()) await expect.poll(textOf(tab)).toContain(`Paragraph 1 about Chat question ${index + 1}`)
    await expect.poll(() => streamingRows.count()).toBe(13)

    for (const answer of byQuestion.values()) answer.open()
    await Promise.all(chats.map(tab => ended(tab, 'complete')))
    for (const [index, tab] of chats.entries()) expect(await textOf(tab)()).toContain(`Paragraph 1 about Chat question ${index + 1}, continued`)
    // The jobs page saw every one end, live.
    await expect.poll(() => jobsTab.locator('[data-testid=job-row][data-status=complete]').count()).toBe(13)
    expect(await streamingRows.count()).toBe(0)
    expect(ownStreams).toEqual([])
  })

  it('lists a running job on the jobs page with its progress, and stops it from there', async () => {
    const answer = nextAnswer([paragraphs('the jobs page', 1), paragraphs('progress', 2), paragraphs('never sent', 1)])
    const page = await freshPage()
    // A long prompt with a long unbroken word: its row is its title, which must not widen a phone's page.
    const url = await ask(page, `Write a long story for the jobs page about ${'Llanfairpwllgwyngyllgogerychwyrndrobwllllantysiliogogogoch'.repeat(3)}`)
    const threadId = url.split('/').pop()
    const jobs = await context.newPage()
    await jobs.goto(`${app.url}/jobs`)
    const row = jobs.locator('[data-testid=job-row][data-status=streaming]').first()
    await row.waitFor()
    await jobs.setViewportSize({ width: 390, height: 844 })
    expect(await sidewaysScroll(jobs)).toBeLessThanOrEqual(0)
    expect((await row.boundingBox())!.width).toBeLessThanOrEqual(390)
    await jobs.setViewportSize({ width: 1280, height: 900 })
    const characters = async () => Number((await row.getByTestId('job-characters').innerText()).replace(/\D/g, ''))
    await expect.poll(characters).toBeGreaterThan(0)
    const before = await characters()
    answer.open()
    await expect.poll(characters).toBeGreaterThan(before)
    expect(await row.getByRole('link').getAttribute('href')).toBe(`/chat/${threadId}`)
    await screenshot(jobs, 'jobs-page')
    await row.getByRole('button', { name: /Stop/ }).click()
    await jobs.locator('[data-testid=job-row][data-status=aborted]').first().waitFor()
    await ended(page, 'aborted')
  })

  it('offers "Jump to latest" once the reader scrolls up from a streaming answer', async () => {
    const answer = nextAnswer([paragraphs('scrolling', 20), paragraphs('more below', 10), paragraphs('the end', 1)])
    const page = await freshPage()
    await page.setViewportSize({ width: 1000, height: 500 })
    await ask(page, 'Write a long story about scrolling')
    const scroller = page.locator('.chat__scroller')
    await expect.poll(() => scroller.evaluate(element => element.scrollHeight - element.clientHeight)).toBeGreaterThan(200)
    await scroller.evaluate((element) => { element.scrollTop = 0 })
    answer.open()
    await page.getByTestId('jump-to-latest').waitFor()
    expect(await scroller.evaluate(element => element.scrollTop)).toBe(0)
    await page.getByTestId('jump-to-latest').click()
    await expect.poll(() => scroller.evaluate(element => element.scrollHeight - element.scrollTop - element.clientHeight)).toBeLessThan(80)
    await expect.poll(() => page.getByTestId('jump-to-latest').count()).toBe(0)
    answer.open()
    await ended(page, 'complete')
  })

  it('answers one question with two models side by side, each streaming in its column, and goes on from the one chosen', async () => {
    const page = await freshPage()
    const answerOf = (model: string) => `${model} answers: learn the bowline first.`
    fake.script(request => textReply(answerOf(String(request.body.model)), { pieceSize: 6, delayMs: 5 }))
    await page.goto(`${app.url}/`)
    await page.getByTestId('compare-models').click()
    await page.getByTestId('compare-models-list').getByRole('option', { name: /Claude Sonnet 4/ }).click()
    await page.keyboard.press('Escape')
    await expect.poll(() => page.getByTestId('compare-models').innerText()).toContain('Side by side: +1')
    await page.getByTestId('composer-input').fill('Which knot should I learn first?')
    await page.getByTestId('composer-input').press('Enter')
    await page.waitForURL(/\/chat\/[\w-]+$/)

    const columns = page.getByTestId('side-answer')
    await expect.poll(() => columns.count()).toBe(2)
    for (const [index, model] of [MODEL, OTHER].entries()) {
      expect(await columns.nth(index).getAttribute('data-model')).toBe(model)
      await expect.poll(() => columns.nth(index).getByTestId('message-content').innerText().catch(() => '')).toBe(answerOf(model))
    }
    // The first is the one the conversation goes on from, until another is chosen.
    expect(await columns.nth(0).getAttribute('data-active')).not.toBeNull()
    expect(await axeViolationsInBothSchemes(page, '[data-testid=side-by-side]')).toEqual([])
    await columns.nth(1).getByTestId('continue-with').click()
    await expect.poll(() => columns.nth(1).getAttribute('data-active')).not.toBeNull()
    expect(await columns.nth(0).getAttribute('data-active')).toBeNull()
    await screenshot(page, 'side-by-side')
    // On a phone the columns stack: nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 })
    expect(await sidewaysScroll(page)).toBeLessThanOrEqual(0)
    const [top, below] = [(await columns.nth(0).boundingBox())!, (await columns.nth(1).boundingBox())!]
    expect(below.y).toBeGreaterThanOrEqual(top.y + top.height)
    await page.setViewportSize({ width: 1200, height: 820 })

    // One model again; the next question is asked with the chosen answer as the history.
    await page.getByTestId('compare-clear').click()
    const before = fake.requests.length
    await page.getByTestId('composer-input').fill('And after that?')
    await page.getByTestId('composer-input').press('Enter')
    // Sent: the columns settle into the chosen answer, and the new answer is the last message.
    const asked = () => fake.requests.slice(before).filter(request => request.path.endsWith('/chat/completions'))
    await expect.poll(() => asked().length).toBe(1)
    await expect.poll(() => page.getByTestId('side-answer').count()).toBe(0)
    await page.getByTestId('message-assistant').last().and(page.locator('[data-status=complete]')).waitFor()
    expect(asked()[0]!.body.messages.map(message => message.content)).toEqual(['Which knot should I learn first?', answerOf(OTHER), 'And after that?'])
  })
})
