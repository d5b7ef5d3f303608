/**
 * The everyday chat in a real browser, on the demo model: custom instructions set in Settings, a
 * conversation pinned and filed into a folder, its own settings, 👍 / 👎 with a reason, and a share
 * link opened in fresh browsers (signed out: a sign-in prompt; once the admin opens links, the
 * snapshot rendered by the server, without script), then continued as the viewer's own
 * conversation. At desktop and phone width; the new dialogs and the shared page pass axe.
 */
import { resolve } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { BrowserContext, Page } from 'playwright-core'
import { useBuiltApp } from '../support/built-app'
import { axeViolationsInBothSchemes, screenshot, sidewaysScroll, startChat, useChromium, visit, watchForProblems } from './helpers/browser'

const app = useBuiltApp({ NUXT_SESSION_PASSWORD: 'an-everyday-browser-test-password-long-enough', NUXT_AUTH_GUESTS: 'false', NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0' })
const browser = useChromium()
let context: BrowserContext
let page: Page
/** Content Security Policy violations the page reported (its dialogs are the test's to answer). */
const cspViolations: string[] = []

const answer = () => page.getByTestId('message-assistant').last()
const api = (path: string, method = 'GET', body?: unknown) => page.evaluate(async ({ path, method, body }) => {
  const response = await fetch(path, { method, headers: body === undefined ? {} : { 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) })
  return { status: response.status, body: await response.json().catch(() => null) }
}, { path, method, body })
/** A screenshot under tests/browser/screenshots/, or with DOCS_SCREENSHOTS=1 into docs/ as the README shows it. */
async function shoot(target: Page, name: string): Promise<void> {
  if (process.env.DOCS_SCREENSHOTS === '1') await target.screenshot({ path: resolve(import.meta.dirname, `../../docs/screenshot-${name}.png`) })
  else await screenshot(target, name)
}
const sideways = sidewaysScroll

beforeAll(async () => {
  context = await browser.newContext({ viewport: { width: 1280, height: 820 }, reducedMotion: 'reduce' })
  page = await context.newPage()
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text())
  })
  await page.goto(`${app.url}/login`)
  await page.locator('input[name=name]').fill('Root')
  await page.locator('input[name=password]').fill('correct horse battery')
  await page.getByRole('button', { name: 'Create account' }).click()
  await page.waitForURL(`${app.url}/`)
}, 120_000)

afterAll(async () => {
  expect(cspViolations).toEqual([])
  await context?.close()
})

describe('everyday chat in the browser', () => {
  it('sets custom instructions, then pins, files, tunes, rates and shares a conversation at desktop width', async () => {
    await visit(page, app.url, '/settings')
    await page.getByTestId('custom-instructions').fill('I sail small boats. Answer briefly.')
    await page.getByTestId('display-name').fill('Captain Root')
    await page.getByTestId('save-profile').click()
    await expect.poll(async () => (await api('/api/me/preferences')).body).toMatchObject({ customInstructions: 'I sail small boats. Answer briefly.', displayName: 'Captain Root' })
    await shoot(page, 'settings-you')

    await startChat(page, app.url, 'Hello')
    await answer().and(page.locator('[data-status=complete]')).waitFor()
    // The conversation's row, found by its id: its title may still change (a title is made after the first answer).
    const id = new URL(page.url()).pathname.split('/').pop()!
    const row = (section: string) => page.getByTestId(section).locator(`[data-thread-id="${id}"]`)

    // Pinned: on top of the sidebar.
    await page.getByTestId('pin-chat').click()
    await row('pinned').waitFor()

    // A folder from the sidebar (named in place), and the conversation moved in by its menu.
    await page.getByTestId('new-folder').click()
    await page.getByTestId('folder-name').fill('Sailing')
    await page.getByTestId('folder-name').press('Enter')
    await page.getByTestId('folder-Sailing').waitFor()
    await row('pinned').getByRole('button', { name: /^More for / }).click()
    await page.getByRole('menuitem', { name: 'Move to folder' }).click()
    await page.getByRole('menuitem', { name: 'Sailing' }).click()
    await row('folder-Sailing').waitFor()
    await shoot(page, 'sidebar-pinned-and-folders')

    // Renamed from the same menu, by keyboard: the field takes the focus, and a long title uses the
    // row's whole width (the ⋯ button takes no room of its own).
    const longTitle = 'Knots for a small sailing boat, and when to use each'
    await row('folder-Sailing').getByRole('button', { name: /^More for / }).focus()
    await page.keyboard.press('Enter')
    await page.getByRole('menuitem', { name: 'Rename' }).waitFor()
    await page.getByRole('menuitem', { name: 'Rename' }).press('Enter')
    const nameField = row('folder-Sailing').getByRole('textbox', { name: 'New name' })
    await expect.poll(() => nameField.evaluate(element => element === document.activeElement)).toBe(true)
    await nameField.fill(longTitle)
    await nameField.press('Enter')
    await expect.poll(async () => (await api(`/api/threads/${id}`)).body.thread.title).toBe(longTitle)
    const rowLink = row('folder-Sailing').getByRole('link')
    await expect.poll(() => rowLink.innerText()).toBe(longTitle)
    await page.mouse.move(900, 600)
    const [rowBox, linkBox] = [await row('folder-Sailing').boundingBox(), await rowLink.boundingBox()]
    expect(linkBox!.width).toBeGreaterThanOrEqual(rowBox!.width - 1)
    expect(await row('folder-Sailing').locator('a, button').count()).toBe(2)

    // Its own settings: a system prompt and a temperature, saved with it.
    await page.getByTestId('open-chat-settings').click()
    await page.getByTestId('chat-settings').waitFor()
    expect(await axeViolationsInBothSchemes(page, '[role=dialog]')).toEqual([])
    await page.getByTestId('system-prompt').fill('Answer like a harbour master.')
    await page.getByTestId('temperature').fill('0.4')
    await shoot(page, 'chat-settings')
    await page.getByTestId('save-chat-settings').click()
    await expect.poll(async () => (await api((new URL(page.url())).pathname.replace('/chat/', '/api/threads/'))).body.thread.settings).toEqual({ systemPrompt: 'Answer like a harbour master.', temperature: 0.4 })
    await page.getByRole('button', { name: 'Chat settings (custom)' }).waitFor()

    // 👍, then 👎 with a reason from the list.
    await answer().getByTestId('rate-up').click()
    await expect.poll(() => answer().getByTestId('rate-up').getAttribute('aria-pressed')).toBe('true')
    await answer().getByTestId('rate-down').click()
    await page.getByTestId('rating-reasons').waitFor()
    await shoot(page, 'answer-feedback')
    await page.getByTestId('rating-reasons').getByRole('button', { name: 'Too long' }).click()
    await expect.poll(() => answer().getByTestId('rate-down').getAttribute('aria-pressed')).toBe('true')
    const threadPath = new URL(page.url()).pathname.replace('/chat/', '/api/threads/')
    await expect.poll(async () => (await api(threadPath)).body.messages[1].feedback).toMatchObject({ rating: 'down', reason: 'Too long' })

    // Shared: a link to copy.
    await page.getByTestId('share-chat').click()
    // The dialog says who can read the link (here: accounts only, the default), before and after.
    await expect.poll(() => page.getByTestId('share-audience').innerText()).toMatch(/^Only people signed in to this server can read it/)
    await page.getByTestId('create-share').click()
    const url = await page.getByTestId('share-url').inputValue()
    expect(await page.getByTestId('share-audience').innerText()).toMatch(/anyone else who opens the link is asked to sign in/)
    expect(url).toMatch(/\/share\/[\w-]{32}$/)
    expect(await axeViolationsInBothSchemes(page, '[role=dialog]')).toEqual([])
    await shoot(page, 'share-dialog')
    await page.keyboard.press('Escape')

    // A message after sharing is not in the snapshot.
    await page.getByTestId('composer-input').fill('One more thing')
    await page.getByTestId('composer-input').press('Enter')
    await page.getByTestId('message-assistant').nth(1).and(page.locator('[data-status=complete]')).waitFor()

    // A fresh browser without script, signed out: the server's page asks to sign in.
    const noScript = await browser.newContext({ javaScriptEnabled: false })
    try {
      const anonymous = await noScript.newPage()
      await anonymous.goto(url)
      await anonymous.getByTestId('shared-sign-in').waitFor()
      // The admin opens links to anyone: the snapshot, rendered by the server, never indexed.
      expect((await api('/api/admin/settings', 'PUT', { publicShareLinks: true })).status).toBe(200)
      await anonymous.reload()
      await anonymous.getByTestId('shared-messages').waitFor()
      expect(await anonymous.getByTestId('shared-messages').innerText()).toContain('Hello')
      expect(await anonymous.getByTestId('shared-messages').innerText()).not.toContain('One more thing')
      expect(await anonymous.locator('meta[name=robots]').getAttribute('content')).toBe('noindex, nofollow')
      expect(await anonymous.getByText('Shared by Captain Root').count()).toBe(1)
    } finally {
      await noScript.close()
    }

    // With script, the shared page passes axe and fits a phone.
    const viewer = await browser.newContext({ viewport: { width: 1280, height: 820 }, reducedMotion: 'reduce' })
    try {
      const shared = await viewer.newPage()
      const sharedProblems = watchForProblems(shared)
      await shared.goto(url)
      await shared.getByTestId('shared-messages').waitFor()
      expect(await axeViolationsInBothSchemes(shared, 'body')).toEqual([])
      await shoot(shared, 'shared-conversation')
      await shared.setViewportSize({ width: 390, height: 844 })
      expect(await sideways(shared)).toBeLessThanOrEqual(0)
      // Continuing needs an account: the sign-in page, then back.
      await shared.getByTestId('continue-shared').click()
      await shared.waitForURL(/\/login\?next=/)
      expect(sharedProblems.csp).toEqual([])
    } finally {
      await viewer.close()
      await api('/api/admin/settings', 'PUT', { publicShareLinks: false })
    }

    // Continued by a signed-in viewer (here the sharer): a conversation of their own.
    await page.goto(url)
    await page.getByTestId('continue-shared').click()
    await page.waitForURL(/\/chat\/[\w-]+$/)
    expect(page.url()).not.toContain(threadPath.split('/').pop()!)
    // The copy's two messages (the navigation replaces the shared page's as the conversation loads).
    await expect.poll(async () => [await page.getByTestId('message-user').count(), await page.getByTestId('message-assistant').count()]).toEqual([1, 1])

    // Listed in Settings, and revoked there.
    await visit(page, app.url, '/settings')
    await page.getByTestId('share-list').waitFor()
    page.once('dialog', dialog => void dialog.accept())
    await page.getByTestId('share-list').getByRole('button', { name: /^Revoke the link/ }).click()
    await expect.poll(async () => (await api('/api/shares')).body.shares.length).toBe(0)
  }, 180_000)

  it('pins, files and rates on a phone, without sideways scrolling', async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await startChat(page, app.url, 'What is 6*7?')
    await answer().and(page.locator('[data-status=complete]')).waitFor()
    await answer().getByTestId('rate-down').click()
    await page.getByTestId('rating-reason').fill('Show the working')
    await page.getByTestId('send-rating').click()
    await expect.poll(() => answer().getByTestId('rate-down').getAttribute('aria-pressed')).toBe('true')
    expect(await sideways(page)).toBeLessThanOrEqual(0)
    await page.getByTestId('open-chat-settings').click()
    await page.getByTestId('chat-settings').waitFor()
    expect(await sideways(page)).toBeLessThanOrEqual(0)
    await page.keyboard.press('Escape')

    await page.getByRole('button', { name: 'Open the sidebar' }).click()
    const unpinned = (await api('/api/threads')).body.threads.find((thread: { pinned?: boolean }) => !thread.pinned).id as string
    await page.locator(`#sidebar [data-thread-id="${unpinned}"]`).getByRole('button', { name: /^More for / }).click()
    await page.getByRole('menuitem', { name: 'Pin' }).click()
    await page.getByTestId('pinned').locator(`[data-thread-id="${unpinned}"]`).waitFor()
    expect(await sideways(page)).toBeLessThanOrEqual(0)
    await shoot(page, 'sidebar-pinned-phone')

    // The admin's report has both 👎 and their reasons.
    const report = (await api('/api/admin/feedback')).body
    expect(report.recentDown.map((item: { reason?: string }) => item.reason)).toEqual(['Show the working', 'Too long'])
    await page.setViewportSize({ width: 1280, height: 820 })
    await visit(page, app.url, '/admin')
    await page.getByTestId('admin-feedback').waitFor()
    await page.getByTestId('feedback-recent').scrollIntoViewIfNeeded()
    await shoot(page, 'admin-feedback')
  }, 120_000)

  it('shows the files an answer wrote in the Files panel: opened, downloaded, deleted; accessible at desktop and phone width', async () => {
    await page.setViewportSize({ width: 1280, height: 820 })
    await startChat(page, app.url, 'save "buy milk and eggs" as lists/todo.md')
    await answer().and(page.locator('[data-status=complete]')).waitFor()
    await page.getByTestId('open-files').click()
    const panel = page.getByTestId('workspace-panel')
    const row = panel.locator('[data-path="lists/todo.md"]')
    await row.waitFor()
    await row.getByRole('button', { name: 'Open lists/todo.md' }).click()
    await expect.poll(() => panel.getByTestId('workspace-file-text').locator('pre').textContent()).toBe('buy milk and eggs')
    expect(await row.getByRole('link', { name: 'Download lists/todo.md' }).getAttribute('href')).toMatch(/\/workspace\/file\?path=lists%2Ftodo\.md&download=1$/)
    expect(await axeViolationsInBothSchemes(page, '[role=dialog]')).toEqual([])
    await shoot(page, 'workspace-panel')
    await page.setViewportSize({ width: 390, height: 844 })
    expect(await sideways(page)).toBeLessThanOrEqual(0)
    expect(await axeViolationsInBothSchemes(page, '[role=dialog]')).toEqual([])

    page.once('dialog', dialog => void dialog.accept())
    await row.getByRole('button', { name: 'Delete lists/todo.md' }).click()
    await panel.getByText('No files yet.').waitFor()
    await page.setViewportSize({ width: 1280, height: 820 })
  }, 120_000)

  it('asks the person to approve a tool an agent wrote, shows its code, runs it once approved, and lists it in Settings', async () => {
    await startChat(page, app.url, 'write a tool that counts words')
    const card = page.getByTestId('input-request')
    await card.waitFor()
    expect(await card.textContent()).toMatch(/word_count/)
    expect(await card.getByTestId('input-code').first().textContent()).toMatch(/args\.text\.trim\(\)/)
    expect(await axeViolationsInBothSchemes(page, '[data-testid=input-request]')).toEqual([])
    await card.getByTestId('question-accept').click()
    await answer().and(page.locator('[data-status=complete]')).waitFor()
    expect(await answer().getByTestId('message-content').textContent()).toMatch(/you approved it/)

    await page.getByTestId('composer-input').fill('count the words in: the quick brown fox')
    await page.getByTestId('composer-input').press('Enter')
    await expect.poll(async () => (await answer().getByTestId('message-content').textContent()) ?? '', { timeout: 30_000 }).toMatch(/"words":4/)

    await visit(page, app.url, '/settings#my-tools')
    const listed = page.getByTestId('my-tools').locator('[data-tool="word_count"]')
    await listed.getByText('Approved').waitFor()
    await listed.getByText('Code').click()
    expect(await axeViolationsInBothSchemes(page, '#my-tools')).toEqual([])
    await shoot(page, 'my-tools')
  }, 120_000)

  it('puts a handbook in a knowledge base, attaches it to a new conversation with #, and opens the passage the answer cites', async () => {
    await page.setViewportSize({ width: 1280, height: 820 })
    await visit(page, app.url, '/knowledge')
    await page.getByTestId('knowledge-name').fill('Handbook')
    await page.getByTestId('knowledge-create').click()
    await page.waitForURL(/\/knowledge\/kb-[\w-]+$/)
    const handbook = '# Handbook\n\n## Travel\n\nBook trains for any trip under 500 km.\n\n## Expenses\n\nMeals are refunded up to 40 euros a day.'
    await page.getByTestId('knowledge-file').setInputFiles([
      { name: 'handbook.md', mimeType: 'text/markdown', buffer: Buffer.from(handbook) },
      { name: 'photo.png', mimeType: 'image/png', buffer: Buffer.from('not a document') },
    ])
    // The document is indexed while the page watches; the picture is refused, saying what a base takes.
    await page.locator('[data-document="handbook.md"] [data-status=ready]').waitFor()
    await expect.poll(() => page.getByRole('alert').textContent()).toContain('photo.png: a knowledge base takes PDF')
    expect(await axeViolationsInBothSchemes(page, '[data-testid=knowledge-base]')).toEqual([])

    // On a new chat, # offers the bases: picking one attaches it to the conversation the message starts.
    // Typed once the page has its bases (asked for when it comes alive) and its models: the composer
    // stays disabled until a model is chosen, and keys pressed into a disabled field are lost.
    const basesLoaded = page.waitForResponse(response => new URL(response.url()).pathname === '/api/knowledge')
    await page.goto(`${app.url}/`)
    await basesLoaded
    await expect.poll(() => page.getByTestId('composer-input').isEnabled()).toBe(true)
    await page.getByTestId('composer-input').pressSequentially('#hand')
    await page.locator('[data-testid=composer-knowledge] [role=option]', { hasText: 'Handbook' }).waitFor()
    await page.getByTestId('composer-input').press('Enter')
    await page.getByTestId('new-chat-knowledge').getByText('Handbook').waitFor()
    expect(await page.getByTestId('composer-input').inputValue()).toBe('')
    await page.getByTestId('composer-input').fill('How much are meals refunded?')
    await page.getByTestId('composer-input').press('Enter')
    await page.waitForURL(/\/chat\/[\w-]+$/)
    await page.getByTestId('chat-knowledge').waitFor()
    await answer().and(page.locator('[data-status=complete]')).waitFor()
    await expect.poll(() => answer().textContent()).toContain('Meals are refunded up to 40 euros a day.')
    await shoot(page, 'knowledge-answer')
    const [reader] = await Promise.all([context.waitForEvent('page'), answer().locator('a.citation').first().click()])
    await reader.locator('[aria-current=location]').waitFor()
    expect(await reader.locator('[aria-current=location]').textContent()).toContain('Meals are refunded up to 40 euros a day.')
    expect(await reader.locator('[aria-current=location]').textContent()).toContain('Handbook › Expenses')
    await reader.close()
  }, 120_000)
})
