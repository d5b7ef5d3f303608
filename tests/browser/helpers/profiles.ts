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
import { afterAll } from 'vitest'
import type { Browser, BrowserContext, BrowserContextOptions } from 'playwright-core'

/** What `Storage.clearDataForOrigin` clears: everything of a site but the HTTP cache. */
const SITE_DATA = 'cookies,local_storage,indexeddb,cache_storage,service_workers,file_systems,websql,shared_storage,storage_buckets'

/** Events a test may listen to on a context; an emptied context forgets their listeners. */
const TEST_EVENTS = ['page', 'request', 'response', 'requestfailed', 'requestfinished', 'console', 'dialog', 'weberror', 'serviceworker'] as const

interface KeptProfile {
  context: BrowserContext
  /** The origins its pages were on since it was last emptied. */
  origins: Set<string>
}

export interface Profiles {
  /**
   * A context with nothing of a person's in it (see the file's comment): the same options give the
   * same context back, emptied. Leave it open (the file's end closes it); a test that closes it
   * gets a new one next time.
   */
  fresh: (options?: BrowserContextOptions) => Promise<BrowserContext>
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
  await context.clearPermissions()
  await context.unrouteAll({ behavior: 'ignoreErrors' })
  await context.setExtraHTTPHeaders({})
  await context.setOffline(false)
  await context.setGeolocation(null)
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

/** Fresh profiles for this file's tests (see the file's comment); every context is closed after them. */
export function useProfiles(browser: Browser): Profiles {
  const kept = new Map<string, KeptProfile>()
  afterAll(async () => {
    await Promise.all([...kept.values()].map(profile => profile.context.close().catch(() => {})))
    kept.clear()
  })
  return {
    async fresh(options = {}) {
      const key = JSON.stringify(options)
      const known = kept.get(key)
      if (known) {
        await empty(known)
        return known.context
      }
      const profile: KeptProfile = { context: await browser.newContext(options), origins: new Set() }
      rememberOrigins(profile)
      profile.context.on('close', () => {
        if (kept.get(key) === profile) kept.delete(key)
      })
      kept.set(key, profile)
      return profile.context
    },
  }
}
