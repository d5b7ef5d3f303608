import { request as httpRequest } from 'node:http'
import { describe, expect, it } from 'vitest'
import { useBuiltApp } from '../support/built-app'

const app = useBuiltApp({ NUXT_AUTH_GUESTS: 'true', NUXT_LIMITS_ROLES_GUEST_MODELS: '*' })
const url = (path: string) => `${app.url}${path}`
const fetch = (path: string, init?: RequestInit) => globalThis.fetch(url(path), init)
async function $fetch<T>(path: string): Promise<T> {
  const response = await fetch(path)
  if (!response.ok) throw new Error(`${path}: ${response.status}`)
  return await response.json() as T
}

interface ToolSummary {
  name: string
  description: string
  runtime: string
  parameters: { type: string, properties: Record<string, unknown>, required?: string[] }
  source: { kind: string, name?: string }
  capabilities?: string[]
  unavailable?: string
}

describe('the built app', () => {
  it('GET /api/tools lists the enabled tools with name, description, parameters, runtime and source; the workbench with what it reaches', async () => {
    const { tools } = await $fetch<{ tools: ToolSummary[] }>('/api/tools')
    const plain = tools.filter(tool => !tool.capabilities)
    expect(plain.map(tool => tool.name)).toEqual(['get_current_time', 'calculate', 'get_current_weather', 'convert_units'])
    for (const tool of plain) {
      expect(Object.keys(tool).sort()).toEqual(['description', 'name', 'parameters', 'runtime', 'source'])
      expect(tool.parameters.type).toBe('object')
      expect(tool.runtime).toBe('hybrid')
      // convert_units is the example tool file of server/tools; the rest are built in.
      expect(tool.source).toEqual(tool.name === 'convert_units' ? { kind: 'file', name: 'server/tools/convert-units.ts' } : { kind: 'builtin' })
    }
    expect(tools.find(tool => tool.name === 'get_current_weather')!.parameters.required).toEqual(['location'])
    expect(tools.find(tool => tool.name === 'calculate')!.parameters.properties).toHaveProperty('expression')
    // The workbench, memory and knowledge: built in, each naming what it reaches; web_search only with a provider, bash listed even when off.
    const workbench = Object.fromEntries(tools.filter(tool => tool.capabilities).map(tool => [tool.name, tool.capabilities]))
    expect(workbench).toEqual({
      read: ['workspace'], write: ['workspace'], edit: ['workspace'], ls: ['workspace'], glob: ['workspace'], grep: ['workspace'],
      run_code: ['code_execution', 'workspace'], propose_tool: ['code_execution'], run_my_tool: ['code_execution'], web_fetch: ['internet_access'],
      bash: ['code_execution', 'workspace'], task: ['subagents'],
      remember: ['memory'], recall: ['memory'], forget: ['memory'], search_knowledge: ['knowledge'], generate_image: ['image_generation'],
    })
    // A guest (this test's session) may use none of them.
    for (const name of Object.keys(workbench)) expect(tools.find(tool => tool.name === name)!.unavailable).toMatch(/^You cannot use this tool: guests may not use tools with /)
  })

  it('serves the app shell at / and at deep links (the UI renders in the browser)', async () => {
    for (const path of ['/', '/chat/some-thread', '/jobs', '/settings']) {
      const response = await fetch(path)
      expect(response.status, path).toBe(200)
      const html = await response.text()
      expect(html).toMatch(/<html\s+lang="en"/)
      expect(html).toContain('id="__nuxt"')
    }
  })

  it('sends the chat page\'s scripts brotli- or gzip-compressed to a browser that accepts it, as they are to one that does not', async () => {
    const html = await (await fetch('/')).text()
    const scripts = [...new Set([...html.matchAll(/(?:src|href)="(\/_nuxt\/[^"]+\.js)"/g)].map(match => match[1]!))]
    expect(scripts.length).toBeGreaterThan(0)
    const get = (path: string, encoding: string) => new Promise<{ encoding?: string, bytes: number }>((resolve, reject) => {
      httpRequest(url(path), { headers: { 'accept-encoding': encoding } }, (response) => {
        let bytes = 0
        response.on('data', (chunk: Buffer) => (bytes += chunk.length))
        response.on('end', () => resolve({ encoding: response.headers['content-encoding'], bytes }))
      }).on('error', reject).end()
    })
    let plain = 0
    let brotli = 0
    for (const script of scripts) {
      const [br, gzip, identity] = [await get(script, 'br'), await get(script, 'gzip'), await get(script, 'identity')]
      // A file too small to gain is sent as it is.
      if (identity.bytes > 2_048) {
        expect(br.encoding, script).toBe('br')
        expect(gzip.encoding, script).toBe('gzip')
        expect(br.bytes).toBeLessThan(identity.bytes)
      }
      expect(identity.encoding).toBeUndefined()
      plain += identity.bytes
      brotli += br.bytes
    }
    expect(brotli).toBeLessThan(plain / 2)
  })

  it('GET /api/models offers the offline demo model when no key is configured', async () => {
    const catalog = await $fetch<{ models: Array<{ id: string, offline: boolean }>, source: string }>('/api/models')
    expect(catalog.source).toBe('demo')
    expect(catalog.models).toEqual([expect.objectContaining({ id: 'or3/offline-demo', offline: true })])
  })

  it('streams a demo answer to "What time is it in Tokyo?" with the tool call and an answer that uses it', async () => {
    const response = await fetch('/api/openrouter/stream', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'or3/offline-demo', messages: [{ role: 'user', content: 'What time is it in Tokyo?' }] }),
    })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const events = (await response.text()).split('\n\n').filter(Boolean).map((block) => {
      const name = /^event: (.+)$/m.exec(block)?.[1]
      const data = /^data: (.+)$/m.exec(block)?.[1]
      return { name, id: /^id: (.+)$/m.exec(block)?.[1], data: data ? JSON.parse(data) : null }
    })
    expect(events[0]).toMatchObject({ name: 'snapshot', data: { job: { status: 'streaming', model: 'or3/offline-demo', content: '' } } })
    // `<seq>.<attempt>`: numbered in the job's run log, by its first run.
    const first = Number(events[0]!.id!.split('.')[0])
    expect(events.map(event => event.id)).toEqual(events.map((_, index) => `${first + index}.0`))
    const toolEvents = events.filter(event => event.name === 'tool-call').map(event => [event.data.toolCall.name, event.data.toolCall.status])
    expect(toolEvents).toEqual([['get_current_time', 'pending'], ['get_current_time', 'running'], ['get_current_time', 'completed']])
    const completed = events.findLast(event => event.name === 'tool-call')!.data.toolCall
    expect(completed.executionTimeMs).toBeTypeOf('number')
    const text = events.filter(event => event.name === 'delta').map(event => event.data.content ?? '').join('')
    expect(text).toContain(`In **Asia/Tokyo** it is **${JSON.parse(completed.result).local}**`)
    expect(events.at(-1)).toMatchObject({ name: 'status', data: { status: 'complete', finishReason: 'stop', contentLength: text.length } })
  })

  it.each([
    ['no messages', { model: 'or3/offline-demo', messages: [] }, /send at least one message/],
    ['a message without a role', { model: 'or3/offline-demo', messages: [{ content: 'hi' }] }, /messages/],
    ['a bad temperature', { model: 'or3/offline-demo', messages: [{ role: 'user', content: 'hi' }], temperature: 9 }, /temperature/],
  ])('answers 400 with what to fix for %s', async (_label, body, message) => {
    const response = await fetch('/api/openrouter/stream', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
    expect(response.status).toBe(400)
    expect((await response.json()).message).toMatch(message)
  })

  it('answers 400 saying how to get a key when an OpenRouter model is asked for without one', async () => {
    const response = await fetch('/api/openrouter/stream', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(response.status).toBe(400)
    expect((await response.json()).message).toMatch(/needs an OpenRouter API key: add yours in Settings/)
  })

  it('answers /metrics with 404 while metrics are off (the default), saying how to turn them on', async () => {
    const response = await fetch('/metrics')
    expect(response.status).toBe(404)
    expect((await response.json()).message).toMatch(/NUXT_METRICS_ENABLED=true/)
  })

  it('answers an unknown API route with 404, not a page', async () => {
    const response = await fetch('/api/does-not-exist')
    expect(response.status).toBe(404)
  })
})
