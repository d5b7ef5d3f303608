/** web_fetch and web_search as tools: the operator's allowed networks, the per-person rate, the providers. */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { webRequestLimiter, webTools, type WebToolSettings } from '../../../../server/lib/tools/web/web-tools'
import { memoryLimiters } from '../../../../server/lib/stores/rate-limits/limiters'
import { readablePage } from '../../../../server/lib/tools/web/readable-page'

let server: Server
let base: string
const searches: string[] = []
beforeAll(async () => {
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost')
    if (url.pathname === '/page') {
      response.writeHead(200, { 'content-type': 'text/html' })
      response.end(`<html><head><title>Tides</title></head><body><article><h1>Tides</h1><p>${'The moon pulls the sea toward it, and the sea rises. '.repeat(10)}</p></article></body></html>`)
    } else if (url.pathname === '/image.png') {
      response.writeHead(200, { 'content-type': 'image/png' })
      response.end(Buffer.alloc(100))
    } else if (url.pathname === '/search') {
      searches.push(`${url.searchParams.get('q')} ${url.searchParams.get('format')}`)
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ results: [
        { title: 'Tides explained', url: `${base}/page`, content: 'Why the sea  rises\nand falls.' },
        { title: 'Not a web address', url: 'javascript:alert(1)', content: 'dropped' },
        { title: 'Moon', url: 'https://example.org/moon', content: 'The moon.' },
      ] }))
    } else {
      response.writeHead(404)
      response.end()
    }
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => server.close())

const settings = (changes: Partial<WebToolSettings> = {}): WebToolSettings => ({ fetch: true, allowedNetworks: '', maxBytes: 100_000, timeoutMs: 5_000, maxChars: 10_000, requestsPerMinute: 100, searxngUrl: '', braveApiKey: '', tavilyApiKey: '', ...changes })
const context = (userId = 'u') => ({ userId, threadId: 't', jobId: 'j', credentials: { get: () => undefined, has: () => false } })
/** The web tools of `chosen`, with a limiter of their own. */
const tools = (chosen: WebToolSettings) => webTools(chosen, webRequestLimiter(chosen, memoryLimiters))
const byName = (tools: ReturnType<typeof webTools>) => Object.fromEntries(tools.map(tool => [tool.definition.function.name, tool]))

describe('web_fetch', () => {
  it('refuses the server\'s own network unless the operator allows it, then reads the page as Markdown', async () => {
    const refused = byName(tools(settings())).web_fetch!
    await expect(Promise.resolve().then(() => refused.handler({ url: `${base}/page` }, context()))).rejects.toThrow(/private, loopback, link-local or reserved/)
    const allowed = byName(tools(settings({ allowedNetworks: '127.0.0.0/8' }))).web_fetch!
    const page = await allowed.handler({ url: `${base}/page` }, context()) as { title: string, content: string }
    expect(page.title).toBe('Tides')
    expect(page.content).toMatch(/The moon pulls the sea toward it/)
    await expect(Promise.resolve().then(() => allowed.handler({ url: `${base}/image.png` }, context()))).rejects.toThrow(/image\/png, not a page or text/)
    await expect(Promise.resolve().then(() => allowed.handler({ url: `${base}/missing` }, context()))).rejects.toThrow(/answered 404/)
    expect(allowed.definition.capabilities).toEqual(['internet_access'])
  })

  it('counts each person\'s requests per minute, saying when to try again', async () => {
    const tool = byName(tools(settings({ allowedNetworks: '127.0.0.1', requestsPerMinute: 2 }))).web_fetch!
    await tool.handler({ url: `${base}/page` }, context('ada'))
    await tool.handler({ url: `${base}/page` }, context('ada'))
    await expect(Promise.resolve().then(() => tool.handler({ url: `${base}/page` }, context('ada')))).rejects.toThrow(/2 web requests in the last minute.*try again in \d+ s/)
    // Another person's count is their own.
    await tool.handler({ url: `${base}/page` }, context('bob'))
  })
})

describe('web_search', () => {
  it('is not offered without a provider', () => {
    expect(Object.keys(byName(tools(settings())))).toEqual(['web_fetch'])
    expect(Object.keys(byName(tools(settings({ fetch: false }))))).toEqual([])
  })

  it('asks the operator\'s SearXNG and returns titles, http(s) addresses and tidy snippets', async () => {
    const tool = byName(tools(settings({ searxngUrl: `${base}/` }))).web_search!
    expect(await tool.handler({ query: 'why tides', count: 5 }, context())).toEqual({
      query: 'why tides',
      provider: 'searxng',
      results: [{ title: 'Tides explained', url: `${base}/page`, snippet: 'Why the sea rises and falls.' }, { title: 'Moon', url: 'https://example.org/moon', snippet: 'The moon.' }],
    })
    expect(searches.at(-1)).toBe('why tides json')
    await expect(Promise.resolve().then(() => byName(tools(settings({ searxngUrl: `${base}/nothing` }))).web_search!.handler({ query: 'x', count: 1 }, context()))).rejects.toThrow(/The search \(searxng\) failed: SearXNG answered 404/)
  })
})

describe('reading a large page', () => {
  it('parses in a worker: the server answers others while a 2 MB page is read', async () => {
    let html = '<html><head><title>Big</title></head><body><article><h1>Big page</h1>'
    while (html.length < 2_000_000) html += `<p>${'The quick brown fox jumps over the lazy dog. '.repeat(20)}</p><div><span>nested <a href="/x">link</a></span></div>\n`
    let parsed = false
    const reading = readablePage(Buffer.from(`${html}</article></body></html>`), 'text/html; charset=utf-8', 5_000).finally(() => (parsed = true))
    const answer = await fetch(`${base}/page`).then(response => response.status)
    expect({ answer, parsedFirst: parsed }).toEqual({ answer: 200, parsedFirst: false })
    expect(await reading).toMatchObject({ title: 'Big', cut: true, text: expect.stringMatching(/^## Big page\n\nThe quick brown fox/) })
  })
})
