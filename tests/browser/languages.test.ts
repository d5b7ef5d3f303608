/**
 * The app in another language (issue 54): the browser's language on the first visit (German),
 * what the server itself says in it too, the person's own choice in Settings kept with their
 * account and followed on another device, Arabic right to left; every page axe-clean in both
 * schemes and no wider than a 390 px phone.
 */
import { describe, expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { useBuiltApp } from '../support/built-app'
import { axeViolationsInBothSchemes, screenshot, sidewaysScroll, useChromium, visit, watchForProblems } from './helpers/browser'
import { useProfiles } from './helpers/profiles'

const app = useBuiltApp({ NUXT_AUTH_GUESTS: 'false', NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0' })
const browser = useChromium()
const profiles = useProfiles(browser)

const PAGES = ['/', '/settings', '/knowledge', '/jobs', '/workflows', '/workflows/runs']

/** Each page: loaded, axe-clean in light and dark, and no sideways scroll; returns the problems found. */
async function auditPages(page: Page, label: string): Promise<string[]> {
  const problems: string[] = []
  for (const path of PAGES) {
    await visit(page, app.url, path)
    await page.locator('main h1, main [data-testid=composer-input]').first().waitFor()
    problems.push(...(await axeViolationsInBothSchemes(page, 'body')).map(problem => `${label} ${path}: ${problem}`))
    const sideways = await sidewaysScroll(page)
    if (sideways > 0) problems.push(`${label} ${path}: scrolls ${sideways} px sideways`)
  }
  return problems
}

describe('the app in German and in Arabic', () => {
  it('speaks the browser\'s language, says the server\'s refusals in it, keeps the person\'s choice across devices, and mirrors for Arabic', async () => {
    // A German browser on the first visit: the setup page is German, and so is the page's language.
    const first = await profiles.fresh({ locale: 'de-DE', viewport: { width: 1280, height: 900 } })
    const page = await first.newPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/`)
    await page.waitForURL(/\/login/)
    await expect.poll(() => page.locator('h1').innerText()).toBe('Das Admin-Konto erstellen')
    expect(await page.locator('html').getAttribute('lang')).toBe('de-DE')
    await page.locator('input[name=name]').fill('Greta')
    await page.locator('input[name=password]').fill('correct horse battery')
    await page.getByRole('button', { name: 'Konto erstellen' }).click()
    await page.waitForURL(`${app.url}/`)
    await expect.poll(() => page.locator('h1').innerText()).toBe('Wobei kann ich helfen?')

    // An answer runs in German chrome (the demo model's own words stay English, as it says).
    await page.getByTestId('composer-input').fill('Wie spät ist es in Tokio?')
    await page.getByTestId('composer-input').press('Enter')
    await page.waitForURL(/\/chat\/[\w-]+$/)
    await expect.poll(() => page.getByTestId('message-assistant').last().getAttribute('data-status')).toBe('complete')
    await expect.poll(() => page.getByTestId('copy-message').last().innerText()).toBe('Kopieren')
    await screenshot(page, 'language-de-chat')

    // A refusal written by the server reaches the person in their language.
    await page.goto(`${app.url}/settings`)
    await page.getByTestId('current-password').fill('not my password')
    await page.getByTestId('new-password').fill('another good password')
    await page.getByTestId('repeat-password').fill('another good password')
    await page.getByRole('button', { name: 'Passwort ändern' }).click()
    await expect.poll(() => page.locator('.password__problem').innerText()).toBe('Das Passwort stimmt nicht.')
    // Dates and numbers are written the German way.
    await expect.poll(() => page.getByTestId('profile-settings').innerText()).toContain('höchstens 4.000 Zeichen')
    expect(await auditPages(page, 'de 1280')).toEqual([])

    // The person picks Arabic in Settings: the app turns right to left at once, and keeps it.
    await page.goto(`${app.url}/settings`)
    await expect.poll(() => page.getByTestId('language-choice').isEnabled()).toBe(true)
    await page.getByTestId('language-choice').click()
    await page.getByRole('option', { name: 'العربية' }).click()
    await page.getByTestId('save-profile').click()
    await expect.poll(() => page.locator('html').getAttribute('dir')).toBe('rtl')
    await expect.poll(() => page.locator('h1').innerText()).toBe('الإعدادات')
    expect(await page.locator('html').getAttribute('lang')).toBe('ar')
    await page.setViewportSize({ width: 390, height: 844 })
    expect(await auditPages(page, 'ar 390')).toEqual([])
    // On a phone the drawer comes in from the right, inside the screen.
    await page.goto(`${app.url}/`)
    await page.getByTestId('open-sidebar').click()
    await expect.poll(async () => {
      const box = await page.getByTestId('sidebar').boundingBox()
      return box ? Math.round(box.x + box.width) : 0
    }).toBe(390)
    await screenshot(page, 'language-ar-phone-sidebar')

    // Another device whose browser speaks English: once the person signs in, the app is Arabic.
    const second = await profiles.fresh({ locale: 'en-US', viewport: { width: 1280, height: 900 } })
    const other = await second.newPage()
    const otherProblems = watchForProblems(other)
    await other.goto(`${app.url}/login`)
    await expect.poll(() => other.locator('h1').innerText()).toBe('Sign in')
    await other.locator('input[name=name]').fill('Greta')
    await other.locator('input[name=password]').fill('correct horse battery')
    await other.getByRole('button', { name: 'Sign in' }).click()
    await other.waitForURL(`${app.url}/`)
    await expect.poll(() => other.locator('html').getAttribute('dir')).toBe('rtl')
    await expect.poll(() => other.locator('h1').innerText()).toBe('كيف يمكنني المساعدة؟')
    expect(await auditPages(other, 'ar 1280')).toEqual([])

    expect([...problems.errors, ...problems.csp, ...otherProblems.errors, ...otherProblems.csp]).toEqual([])
  }, 240_000)
})
