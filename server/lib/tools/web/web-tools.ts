/**
 * `web_fetch` (a page as readable text, through the SSRF guard of guarded-fetch.ts) and
 * `web_search` (the operator's search provider), both gated by the policy name
 * `capability:internet_access` and counted together per person (`requestsPerMinute`, on every
 * instance together when the limiter is shared). Both are lookups: safe to repeat after a crash.
 */
import { z } from 'zod'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import { defineServerTool, type ServerToolModule } from '../define-tool'
import { takePoint, type LimiterFactory } from '../../stores/rate-limits/limiters'
import type { SandboxFetchAnswer } from '../code/quickjs-sandbox'
import { allowedNetworks } from './address-guard'
import { guardedFetch, WebFetchError, type FetchedPage } from './guarded-fetch'
import { isReadableType, mediaTypeOf, pageText, readablePage } from './readable-page'
import { searchProviderFrom, type SearchSettings } from './search-providers'

export interface WebToolSettings extends SearchSettings {
  fetch: boolean
  allowedNetworks: string
  maxBytes: number
  timeoutMs: number
  maxChars: number
  requestsPerMinute: number
}

const USER_AGENT = 'Mozilla/5.0 (compatible; or3-chat web_fetch; +https://github.com/or3-chat)'
const SEARCH_TIMEOUT_MS = 15_000

/** Counts one request of `userId`; throws saying when to try again past the rate. */
async function countRequest(limiter: RateLimiterAbstract, userId: string, perMinute: number): Promise<void> {
  const seconds = await takePoint(limiter, userId)
  if (seconds !== undefined) throw new Error(`You made ${perMinute} web requests in the last minute, the most allowed; try again in ${seconds} s.`)
}

/** The counter of each person's web requests (fetches and searches, theirs and their tools'). */
export function webRequestLimiter(settings: Pick<WebToolSettings, 'requestsPerMinute'>, limiterFor: LimiterFactory): RateLimiterAbstract {
  return limiterFor({ keyPrefix: 'web-tools-user', points: settings.requestsPerMinute, duration: 60 })
}

/** The private networks the operator lets the web tools (and a failure webhook's call) reach, from their comma-separated setting. */
export const allowedNetworksOf = (settings: Pick<WebToolSettings, 'allowedNetworks'>) => allowedNetworks(settings.allowedNetworks.split(',').map(entry => entry.trim()).filter(Boolean))

/**
 * A fetch for code in the sandbox (a person's own tool): the same guard, limits and count as
 * web_fetch, the body as text (decoded by its charset), not made readable.
 */
export function sandboxFetcher(settings: WebToolSettings, limiter: RateLimiterAbstract): (url: string, userId: string, signal?: AbortSignal) => Promise<SandboxFetchAnswer> {
  const fetchPage = guardedPageFetcher(settings, limiter)
  return async (url, userId, signal) => {
    const page = await fetchPage(url, userId, settings.maxBytes, signal)
    if (!isReadableType(page.contentType)) throw new WebFetchError(`${page.url} is ${mediaTypeOf(page.contentType)}, not text.`)
    return { status: page.status, contentType: page.contentType, text: pageText(page.body, page.contentType, settings.maxChars).text }
  }
}

/**
 * A fetch of a page or file as its bytes, for a person: web_fetch's guard (public addresses only,
 * unless the operator allows a network; at most 5 redirects; its time limit), counted against
 * their web requests per minute, at most `maxBytes` read.
 */
export function guardedPageFetcher(settings: WebToolSettings, limiter: RateLimiterAbstract): (url: string, userId: string, maxBytes: number, signal?: AbortSignal) => Promise<FetchedPage> {
  const allowed = allowedNetworksOf(settings)
  return async (url, userId, maxBytes, signal) => {
    await countRequest(limiter, userId, settings.requestsPerMinute)
    return guardedFetch(url, { allowed, maxBytes, timeoutMs: settings.timeoutMs, maxRedirects: 5, userAgent: USER_AGENT }, signal)
  }
}

/** The web tools the settings enable (none: an empty list). */
export function webTools(settings: WebToolSettings, limiter: RateLimiterAbstract): ServerToolModule[] {
  const tools: ServerToolModule[] = []
  if (settings.fetch) {
    const allowed = allowedNetworksOf(settings)
    tools.push(defineServerTool({
      name: 'web_fetch',
      description: 'Fetch a web page (http or https) and return its readable text as Markdown: the article of an HTML page, or a text, JSON, CSV or XML file as it is.',
      parameters: z.object({ url: z.string().min(1).max(4_000).describe('The address, e.g. https://example.org/page') }),
      runtime: 'server',
      idempotent: true,
      capabilities: ['internet_access'],
      timeoutMs: settings.timeoutMs + 5_000,
      handler: async ({ url }, context) => {
        await countRequest(limiter, context.userId, settings.requestsPerMinute)
        const page = await guardedFetch(url, { allowed, maxBytes: settings.maxBytes, timeoutMs: settings.timeoutMs, maxRedirects: 5, userAgent: USER_AGENT }, context.signal)
        if (page.status >= 400) throw new WebFetchError(`${page.url} answered ${page.status}.`)
        if (!isReadableType(page.contentType)) throw new WebFetchError(`${page.url} is ${mediaTypeOf(page.contentType)}, not a page or text, so it cannot be read.`)
        const readable = await readablePage(page.body, page.contentType, settings.maxChars)
        return {
          url: page.url,
          ...(readable.title ? { title: readable.title } : {}),
          content: readable.text,
          ...(page.truncated ? { note: `Only the first ${settings.maxBytes.toLocaleString('en')} bytes of the page were read.` } : {}),
        }
      },
    }))
  }
  const provider = searchProviderFrom(settings)
  if (provider) {
    tools.push(defineServerTool({
      name: 'web_search',
      description: 'Search the web. Returns up to `count` results, each a title, an address and a snippet; fetch a result with web_fetch to read it.',
      parameters: z.object({
        query: z.string().trim().min(1).max(400).describe('What to search for.'),
        count: z.number().int().min(1).max(20).default(5).describe('Results to return (1-20).'),
      }),
      runtime: 'server',
      idempotent: true,
      capabilities: ['internet_access'],
      timeoutMs: SEARCH_TIMEOUT_MS + 5_000,
      handler: async ({ query, count }, context) => {
        await countRequest(limiter, context.userId, settings.requestsPerMinute)
        const signal = context.signal ? AbortSignal.any([context.signal, AbortSignal.timeout(SEARCH_TIMEOUT_MS)]) : AbortSignal.timeout(SEARCH_TIMEOUT_MS)
        let hits
        try {
          hits = await provider.search(query, count, signal)
        } catch (error) {
          throw new Error(`The search (${provider.name}) failed: ${(error as Error).name === 'TimeoutError' ? `no answer within ${SEARCH_TIMEOUT_MS / 1000} s` : (error as Error).message}.`)
        }
        let chars = 0
        const results = hits.filter(hit => (chars += hit.title.length + hit.url.length + hit.snippet.length) <= settings.maxChars)
        return { query, provider: provider.name, results, ...(results.length === 0 ? { note: 'No results.' } : {}) }
      },
    }))
  }
  return tools
}
