/**
 * Fresh browser profiles on a warm cache: what most browser tests start from.
 *
 * A new Playwright context is an empty profile, cache included: its first page downloads and
 * compiles every script of the app again, about 1.5 CPU-s of Chromium and the server on the 2-core
 * machine, where a page of a context that loaded the app before costs about 0.6 (its scripts come
 * from the memory cache, compiled code with them). A test wants no cookie, storage or permission of
 * an earlier test (a new guest, nothing remembered), not a cold cache; so the tests of a file share
 * one context per set of options and `fresh` empties it before handing it out again: every page
 * closed, cookies, permissions, routes and headers gone, and each origin its pages opened cleared
 * of local and session storage, IndexedDB, Cache Storage and service workers. Only the HTTP cache
 * stays (the built files are immutable, named by their hash).
 */
import { afterAll, afterEach, beforeEach } from 'vitest'
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core'
import { screenshot } from './browser'

/** What `Storage.clearDataForOrigin` clears: a site's storage (its cookies go with `clearCookies`, which Playwright waits for). */
const SITE_DATA = 'local_storage,indexeddb,cache_storage,service_workers,file_systems,websql,shared_storage,storage_buckets'

/** Events a test may listen to on a context; an emptied context forgets their listeners. */
const TEST_EVENTS = ['page', 'request', 'response', 'requestfailed', 'requestfinished', 'console', 'dialog', 'weberror', 'serviceworker'] as const

interface KeptProfile {
  /** Its options, as `fresh` was given them. */
  key: string
  options: BrowserContextOptions
  context: BrowserContext
  /** The origins its pages were on since it was last emptied. */
  origins: Set<string>
  /** Handed out in the current test (a test may use several profiles at once). */
  inUse: boolean
}

export interface Profiles {
  /**
   * A context with nothing of a person's in it (see the file's comment): one an earlier test used
   * with the same options, emptied, else a new one (then `prepare` runs on it first: init scripts
   * cannot be taken off a context, so add them there). Several in one test are several profiles.
   * Leave it open (the file's end closes it); one a test closes is not handed out again.
   */
  fresh: (options?: BrowserContextOptions, prepare?: (context: BrowserContext) => Promise<void>) => Promise<BrowserContext>
}

function rememberOrigins(profile: KeptProfile): void {
  profile.context.on('page', page => page.on('framenavigated', (frame) => {
    const url = frame.url()
    if (/^https?:/.test(url)) profile.origins.add(new URL(url).origin)
  }))
}

async function empty(profile: KeptProfile): Promise<void> {
  const { context } = profile
  await Promise.all(context.pages().map(page => page.close()))
  for (const event of TEST_EVENTS) context.removeAllListeners(event)
  rememberOrigins(profile)
  await context.clearCookies()
  // Back to what its options say (permissions and a position given there are overrides too).
  await context.clearPermissions()
  if (profile.options.permissions) await context.grantPermissions(profile.options.permissions)
  await context.setGeolocation(profile.options.geolocation ?? null)
  await context.unrouteAll({ behavior: 'ignoreErrors' })
  await context.setExtraHTTPHeaders(profile.options.extraHTTPHeaders ?? {})
  await context.setOffline(profile.options.offline ?? false)
  if (profile.origins.size === 0) return
  const blank = await context.newPage()
  try {
    const devtools = await context.newCDPSession(blank)
    for (const origin of profile.origins) await devtools.send('Storage.clearDataForOrigin', { origin, storageTypes: SITE_DATA })
    await devtools.detach()
  } finally {
    await blank.close()
  }
  profile.origins.clear()
}

/** Fresh profiles for this file's tests (see the file's comment): their pages are closed after each test, their contexts after the file. */
export function useProfiles(browser: Browser): Profiles {
  const kept: KeptProfile[] = []
  beforeEach(() => {
    for (const profile of kept) profile.inUse = false
  })
  // A test's pages close with it, as its context did (their streams and timers stop). A failed
  // test's pages say first what they showed (their text, and a screenshot under screenshots/):
  // on a loaded CI machine that is all there is to read a flake from.
  afterEach(async ({ task }) => {
    const pages = kept.flatMap(profile => profile.context.pages())
    if (task.result?.state === 'fail') {
      for (const [index, page] of pages.entries()) {
        const text = await page.locator('body').innerText({ timeout: 2_000 }).catch(() => '(not readable)')
        // What the page told the person last (a failed request's toast says why), before its text, which is cut.
        const toasts = await page.getByTestId('toast').allInnerTexts().catch(() => [])
        const name = `failed-${task.name.replace(/\W+/g, '-').slice(0, 60)}-${index + 1}`
        await screenshot(page, name).catch(() => {})
        console.error(`--- page ${index + 1} of "${task.name}" at ${page.url()} (screenshots/${name}.png), its toasts: ${JSON.stringify(toasts)}, its text:\n${text.slice(0, 4_000)}`)
      }
    }
    await Promise.all(pages.map(page => page.close()))
  })
  afterAll(async () => {
    await Promise.all(kept.map(profile => profile.context.close().catch(() => {})))
    kept.length = 0
  })
  return {
    async fresh(options = {}, prepare) {
      const key = JSON.stringify(options)
      const known = kept.find(profile => profile.key === key && !profile.inUse)
      if (known) {
        known.inUse = true
        await empty(known)
        return known.context
      }
      const profile: KeptProfile = { key, options, context: await browser.newContext(options), origins: new Set(), inUse: true }
      rememberOrigins(profile)
      profile.context.on('close', () => {
        const index = kept.indexOf(profile)
        if (index >= 0) kept.splice(index, 1)
      })
      kept.push(profile)
      await prepare?.(profile.context)
      return profile.context
    },
  }
}
