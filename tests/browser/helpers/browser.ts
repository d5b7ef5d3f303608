import { existsSync, mkdirSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { useFileFixture } from '../../support/file-fixture'
import { axeAudit, blocking } from './axe'

/**
 * Debian's Chromium headless shell (`apt-get install chromium-headless-shell`, as .ci/run does): the
 * browser's engine without its desktop shell, which is what Playwright itself drives in headless
 * mode. The full `chromium` works too (and is used when the shell is not installed), at about twice
 * the CPU: its browser process draws a window nobody sees and runs a renderer for its tab strip.
 * CHROMIUM_PATH picks another. Playwright never downloads a browser here.
 */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find(path => existsSync(path)) ?? '/usr/bin/chromium-headless-shell'

/**
 * Launches headless Chromium with the flags that work in CI containers. Its contexts (and pages
 * opened without one) run without the app's service worker unless a test asks for it with
 * `serviceWorkers: 'allow'` (install.test.ts does): on a context's first page the worker fetches
 * and stores every built file (6 MB, some 200 files), about 2 CPU-s of the browser and the server
 * for each context, and nothing but the installed app's own test reads what it stored.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`Chromium not found at ${CHROMIUM}; install it with "apt-get install chromium-headless-shell" (or set CHROMIUM_PATH).`)
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    // A fake microphone (a beep) that needs no permission prompt: dictation is tested as people use it.
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--use-fake-ui-for-media-stream', '--use-fake-device-for-media-stream'],
  })
  const newContext = browser.newContext.bind(browser)
  const newPage = browser.newPage.bind(browser)
  browser.newContext = options => newContext({ serviceWorkers: 'block', ...options })
  browser.newPage = options => newPage({ serviceWorkers: 'block', ...options })
  return browser
}

/** Headless Chromium for a test file: launched before its tests, closed after them. */
export function useChromium(): Browser {
  return useFileFixture('Chromium', launchChromium, browser => browser.close(), 60_000)
}

const screenshotDir = resolve(import.meta.dirname, '../screenshots')

/** Saves a screenshot of `page` under tests/browser/screenshots/<name>.png. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true })
  const path = join(screenshotDir, `${name}.png`)
  await page.screenshot({ path, fullPage: false })
  return path
}

/**
 * Collects uncaught page errors, dialogs (an XSS payload would open one) and Content Security
 * Policy violations (Chromium reports each as a console error), so every test also checks that
 * the app works under its CSP. What a page an answer built does in its sandbox (its blocked
 * requests) is that page's, not the app's: messages from an artifact's frame are not counted.
 */
export function watchForProblems(page: Page): { errors: string[], dialogs: string[], csp: string[] } {
  const problems = { errors: [] as string[], dialogs: [] as string[], csp: [] as string[] }
  page.on('pageerror', error => problems.errors.push(error.message))
  page.on('console', (message) => {
    // An answer's page or an MCP App's, whose sandbox is meant to refuse what it tries.
    if (/\/artifacts\/|\/tool-calls\/[^/]+\/app/.test(message.location().url)) return
    if (/Content Security Policy/i.test(message.text())) problems.csp.push(message.text())
  })
  page.on('dialog', (dialog) => {
    problems.dialogs.push(`${dialog.type()}: ${dialog.message()}`)
    void dialog.dismiss()
  })
  return problems
}

/**
 * Starts a new chat on the app at `appUrl` with `text`, the way a person does (the composer, then
 * Enter), and returns the conversation's URL once the page is on it. A send that does not get
 * there fails with the toasts the page showed.
 */
/**
 * How far the page scrolls sideways, in px (0: not at all): the document, or the app's main region,
 * which scrolls on its own (a row too wide for it widens that region, not the document).
 */
export function sidewaysScroll(page: Page): Promise<number> {
  return page.evaluate(() => Math.max(...[document.documentElement, document.getElementById('main')].filter(element => element !== null).map(element => element.scrollWidth - element.clientWidth)))
}

/**
 * Opens `path` of the app at `appUrl` in `page` the way a person moves around it: once the app is
 * running in the page, through its router (as a link or the sidebar does: no reload, the app's
 * state and streams kept), else by loading it. A full load costs about 0.6 CPU-s of the browser
 * with a warm cache and 1.5 with a cold one; a move through the router about 0.1.
 */
export async function visit(page: Page, appUrl: string, path: string): Promise<void> {
  const inApp = page.url().startsWith(`${appUrl}/`) && await page.evaluate(() => Boolean((document.querySelector('#__nuxt') as { __vue_app__?: unknown } | null)?.__vue_app__))
  if (!inApp) {
    await page.goto(`${appUrl}${path}`)
    return
  }
  // Already there: the page stays as it is (the router would refuse the same place again).
  if (page.url() === `${appUrl}${path}`) return
  const failure = await page.evaluate(async (to) => {
    interface NuxtInPage { hook: (name: string, run: () => void) => () => void }
    /** Vue Router's NavigationFailureType.cancelled. */
    const CANCELLED = 8
    const app = (document.querySelector('#__nuxt') as unknown as { __vue_app__: { config: { globalProperties: { $router: { push: (to: string) => Promise<unknown> }, $nuxt: NuxtInPage } } } }).__vue_app__
    const { $router: router, $nuxt: nuxt } = app.config.globalProperties
    // Nuxt shows the page before until the next one has loaded (its Suspense): the move ends with
    // Nuxt's page:finish, not with the router's (a page of the same component may not fire it: the
    // wait gives up after a while, and the caller waits for what it needs to see).
    let stop = () => {}
    const finished = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 10_000)
      const unhook = nuxt.hook('page:finish', () => resolve())
      stop = () => {
        clearTimeout(timer)
        unhook()
      }
    })
    // A move the page itself started meanwhile (a page putting its state in the address once it
    // has loaded) cancels this one: it is made again after it.
    let outcome: unknown
    for (let attempt = 0; attempt < 5; attempt++) {
      outcome = await router.push(to)
      if ((outcome as { type?: number } | undefined)?.type !== CANCELLED) break
    }
    if (!outcome) await finished
    stop()
    return outcome ? `${(outcome as Error).message}` : undefined
  }, path)
  // A guard that refused or redirected the move says so (a navigation failure); the page is where it is.
  if (failure) throw new Error(`The app did not go to ${path}: ${failure}`)
  await page.waitForURL(`${appUrl}${path}`)
}

export async function startChat(page: Page, appUrl: string, text: string): Promise<string> {
  await page.goto(`${appUrl}/`)
  await page.getByTestId('composer-input').fill(text)
  await page.getByTestId('composer-input').press('Enter')
  try {
    await page.waitForURL(/\/chat\/[\w-]+$/)
  } catch (error) {
    const toasts = await page.getByTestId('toast').allInnerTexts()
    throw new Error(`Sending "${text}" did not open the conversation. Toasts: ${JSON.stringify(toasts)}; page: ${page.url()}`, { cause: error })
  }
  return page.url()
}

/**
 * Critical and serious axe violations inside `selector`, in light and in dark (each after the
 * colours' transitions end); the page is left in light.
 */
export async function axeViolationsInBothSchemes(page: Page, selector: string): Promise<string[]> {
  const found: string[] = []
  for (const scheme of ['light', 'dark'] as const) {
    // Reduced motion (the app honours it): colours switch at once, so axe never reads a colour
    // halfway through a transition from the other scheme (a busy machine's slow frames did).
    await page.emulateMedia({ colorScheme: scheme, reducedMotion: 'reduce' })
    // The page follows the device through a media-query listener (unless the person picked a theme).
    await page.waitForFunction(wanted => document.documentElement.hasAttribute('data-theme') || document.documentElement.classList.contains(wanted), scheme)
    const settled = () => page.evaluate(async () => {
      await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)))
      await Promise.all(document.getAnimations().filter(animation => animation.effect?.getComputedTiming().iterations !== Infinity).map(animation => animation.finished.catch(() => {})))
    })
    const audit = async () => blocking(await axeAudit(page, { include: selector }))
      .map(violation => `${scheme} ${violation.id}: ${violation.nodes.map(node => node.target.join(' ')).join(', ')}`)
    await settled()
    let problems = await audit()
    // On a loaded machine the scheme's colours can still be reaching some elements as axe reads
    // them (seen: a whole page's text "failing" contrast in dark at once); a real problem is there
    // on a second look once the page has settled, a passing state is not.
    if (problems.length > 0) {
      await settled()
      problems = await audit()
    }
    found.push(...problems)
  }
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: null })
  return found
}

/** What a cold load of a page cost (see `coldPageLoad`). */
export interface ColdLoad {
  /** Scripts fetched, each once, and their compressed bytes. */
  scripts: number
  scriptKB: number
  /** First contentful paint, and when `ready` showed, from the navigation's start (ms). */
  firstPaintMs: number
  readyMs: number
  katexLoaded: boolean
  /** The six largest scripts, with their compressed sizes. */
  largest: string
}

/**
 * Loads `url` in a new context (an empty cache; `storageState` carries a session over) and says what
 * it cost once every selector of `ready` shows: compressed script bytes, their count, first
 * contentful paint, and when. `ready` should name everything the page's content loads scripts for
 * (highlighted code, typeset math): what loads after it is not counted, so a measure taken while
 * those were still on their way would come out lighter some runs than others.
 */
export async function coldPageLoad(browser: Browser, storageState: Awaited<ReturnType<BrowserContext['storageState']>>, url: string, ready: string | string[]): Promise<ColdLoad> {
  const cold = await browser.newContext({ viewport: { width: 1280, height: 800 }, storageState })
  try {
    const fresh = await cold.newPage()
    await fresh.goto(url)
    for (const selector of [ready].flat()) await fresh.locator(selector).first().waitFor()
    return await fresh.evaluate(() => {
      // Each script once (a module preloaded and then imported is listed twice).
      const byName = new Map((performance.getEntriesByType('resource') as PerformanceResourceTiming[]).filter(entry => /\.m?js(?:\?|$)/.test(entry.name)).map(entry => [entry.name, entry]))
      const scripts = [...byName.values()]
      const katexLoaded = [...document.styleSheets].some((sheet) => {
        try {
          return [...sheet.cssRules].some(rule => rule.cssText.includes('KaTeX_Main'))
        } catch {
          return false
        }
      })
      return {
        scripts: scripts.length,
        scriptKB: Math.round(scripts.reduce((sum, entry) => sum + entry.encodedBodySize, 0) / 1024),
        firstPaintMs: Math.round(performance.getEntriesByName('first-contentful-paint')[0]?.startTime ?? -1),
        readyMs: Math.round(performance.now()),
        katexLoaded,
        largest: scripts.sort((a, b) => b.encodedBodySize - a.encodedBodySize).slice(0, 6).map(entry => `${entry.name.split('/').pop()} ${Math.round(entry.encodedBodySize / 1024)} KB`).join(', '),
      }
    })
  } finally {
    await cold.close()
  }
}
