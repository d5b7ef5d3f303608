/**
 * Where `web_search` asks: a SearXNG instance (its JSON API), Brave Search's API or Tavily's, the
 * first the operator configured. Each answer becomes the same short list: title, address, snippet.
 * The operator's SearXNG may sit on a private network (it is their own service), so it is called
 * directly, not through web_fetch's guard; answers are read up to `MAX_ANSWER_BYTES`.
 */
import { readTextUpTo } from '../../bounded-body'

export interface SearchHit {
  title: string
  url: string
  snippet: string
}

export interface SearchProvider {
  name: 'searxng' | 'brave' | 'tavily'
  search(query: string, count: number, signal: AbortSignal): Promise<SearchHit[]>
}

export interface SearchSettings {
  searxngUrl: string
  braveApiKey: string
  tavilyApiKey: string
}

const MAX_ANSWER_BYTES = 2 * 1024 * 1024

async function readJson(response: Response, provider: string): Promise<any> {
  if (!response.ok) throw new Error(`${provider} answered ${response.status} ${response.statusText}`.trim())
  const body = await readTextUpTo(response, MAX_ANSWER_BYTES)
  if (body === undefined) throw new Error(`${provider}'s answer was larger than ${MAX_ANSWER_BYTES / 1024 / 1024} MiB`)
  try {
    return JSON.parse(body || '{}')
  } catch {
    throw new Error(`${provider} did not answer with JSON${provider === 'SearXNG' ? ' (enable the json format under search.formats in its settings.yml)' : ''}`)
  }
}

const text = (value: unknown, chars: number) => (typeof value === 'string' ? value.replace(/\s+/g, ' ').trim().slice(0, chars) : '')

function hitsOf(items: unknown, snippetField: string, count: number): SearchHit[] {
  if (!Array.isArray(items)) return []
  return items.filter(item => item && typeof item.url === 'string' && /^https?:\/\//.test(item.url)).slice(0, count)
    .map(item => ({ title: text(item.title, 200), url: item.url.slice(0, 2_000), snippet: text(item[snippetField], 500) }))
}

/** The provider the settings name first, or undefined when none is configured (web_search is then not offered). */
export function searchProviderFrom(settings: SearchSettings): SearchProvider | undefined {
  if (settings.searxngUrl) {
    const base = settings.searxngUrl.replace(/\/+$/, '')
    return {
      name: 'searxng',
      async search(query, count, signal) {
        const url = `${base}/search?${new URLSearchParams({ q: query, format: 'json', safesearch: '1' })}`
        return hitsOf((await readJson(await fetch(url, { signal, headers: { accept: 'application/json' } }), 'SearXNG')).results, 'content', count)
      },
    }
  }
  if (settings.braveApiKey) {
    return {
      name: 'brave',
      async search(query, count, signal) {
        const url = `https://api.search.brave.com/res/v1/web/search?${new URLSearchParams({ q: query, count: String(count) })}`
        return hitsOf((await readJson(await fetch(url, { signal, headers: { 'accept': 'application/json', 'x-subscription-token': settings.braveApiKey } }), 'Brave Search')).web?.results, 'description', count)
      },
    }
  }
  if (settings.tavilyApiKey) {
    return {
      name: 'tavily',
      async search(query, count, signal) {
        const response = await fetch('https://api.tavily.com/search', { method: 'POST', signal, headers: { 'content-type': 'application/json', 'authorization': `Bearer ${settings.tavilyApiKey}` }, body: JSON.stringify({ query, max_results: count }) })
        return hitsOf((await readJson(response, 'Tavily')).results, 'content', count)
      },
    }
  }
  return undefined
}
