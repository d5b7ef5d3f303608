/**
 * Installable (issue 54): the manifest and its icons, the service worker that takes the page, the
 * app that opens without a network, and a service worker that never keeps an API answer.
 */
import { afterEach, describe, expect, it } from 'vitest'
import type { BrowserContext } from 'playwright-core'
import { useBuiltApp } from '../support/built-app'
import { useChromium, watchForProblems } from './helpers/browser'

const app = useBuiltApp(() => ({ NUXT_THREADS_GENERATE_TITLES: 'false' }))
const browser = useChromium()
let context: BrowserContext | undefined

afterEach(async () => {
  await context?.close()
  context = undefined
})

describe('the app as an installed app', () => {
  it('has a manifest with its icons, a service worker that takes the page, opens offline, and keeps no API answer', async () => {
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, serviceWorkers: 'allow' })
    const page = await context.newPage()
    const problems = watchForProblems(page)
    await page.goto(`${app.url}/`)
    await page.getByTestId('composer-input').waitFor()

    // The manifest, as Chromium reads it for installing: a name, a standalone window, and icons that load.
    const manifestUrl = await page.locator('link[rel=manifest]').getAttribute('href')
    const manifest = await (await fetch(new URL(manifestUrl!, app.url))).json() as { name: string, display: string, start_url: string, icons: Array<{ src: string, sizes: string, type: string, purpose?: string }> }
    expect(manifest).toMatchObject({ name: 'OR3 Chat', display: 'standalone', start_url: '/' })
    expect(manifest.icons.map(icon => icon.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']))
    expect(manifest.icons.some(icon => icon.purpose === 'maskable')).toBe(true)
    for (const icon of manifest.icons) {
      const response = await fetch(new URL(icon.src, app.url))
      expect(response.headers.get('content-type'), icon.src).toBe('image/png')
      const bytes = new Uint8Array(await response.arrayBuffer())
      const side = Number(icon.sizes.split('x')[0])
      // The PNG's own width and height (IHDR) are the size the manifest says.
      expect([new DataView(bytes.buffer).getUint32(16), new DataView(bytes.buffer).getUint32(20)], icon.src).toEqual([side, side])
    }

    // The service worker activates, and controls the page once it is loaded again.
    await expect.poll(() => page.evaluate(async () => (await navigator.serviceWorker.ready).active?.state)).toBe('activated')
    await page.reload()
    await page.getByTestId('composer-input').waitFor()
    await expect.poll(() => page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true)
    // An API answer the page fetched under the worker.
    await page.evaluate(() => fetch('/api/auth/me').then(response => response.status))
    expect(problems.csp).toEqual([])

    // Without a network the app still opens: its shell and built files come from the worker.
    await context.setOffline(true)
    await page.reload()
    await page.getByTestId('sidebar').waitFor()
    await page.getByTestId('composer-input').waitFor()
    const cached = await page.evaluate(async () => {
      const urls: string[] = []
      for (const name of await caches.keys()) for (const request of await (await caches.open(name)).keys()) urls.push(new URL(request.url).pathname)
      return urls
    })
    expect(cached.some(path => path.startsWith('/_nuxt/'))).toBe(true)
    expect(cached.filter(path => path.startsWith('/api/') || path.startsWith('/share/'))).toEqual([])
    await context.setOffline(false)
  }, 120_000)
})
