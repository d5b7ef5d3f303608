/**
 * The agent's workbench in the built server, through the fake OpenRouter: a model writes, edits
 * and greps a conversation's workspace files and runs code that reads one; the file panel's
 * routes list, show, download and delete them, for their owner only; a page is fetched from a
 * local server (allowed by the operator's networks) and a search goes to a fake SearXNG, while
 * the server's own address stays refused; the offline demo model uses the workbench without a key;
 * deleting the conversation deletes its files.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenRouter, textReply, toolCallReply, type FakeOpenRouter } from '../support/fake-openrouter'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { startBuiltApp, type RunningApp } from '../support/built-app'

let app: RunningApp
let fake: FakeOpenRouter
let site: Server
let siteUrl: string
let alice: SessionClient
const searched: string[] = []

beforeAll(async () => {
  fake = await startFakeOpenRouter()
  site = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost')
    if (url.pathname === '/search') {
      searched.push(url.searchParams.get('q') ?? '')
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ results: [{ title: 'Lighthouses of Brittany', url: `${siteUrl}/lighthouses`, content: 'A guide to the lights.' }] }))
      return
    }
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
    response.end(`<html><head><title>Lighthouses</title></head><body><nav>Menu</nav><article><h1>Lighthouses of Brittany</h1><p>${'The Phare du Creach guards the busiest shipping lane of the Atlantic coast. '.repeat(8)}</p></article></body></html>`)
  })
  await new Promise<void>(resolve => site.listen(0, '127.0.0.1', resolve))
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`
  app = await startBuiltApp({
    NUXT_OPENROUTER_BASE_URL: fake.url,
    NUXT_OPENROUTER_API_KEY: 'sk-or-test',
    NUXT_THREADS_GENERATE_TITLES: 'false',
    NUXT_TOOLS_WEB_ALLOWED_NETWORKS: '127.0.0.1',
    NUXT_TOOLS_WEB_SEARXNG_URL: siteUrl,
  })
  alice = new SessionClient(app.url)
  const created = await alice.post('/api/auth/register', { name: 'Alice', password: 'a long enough password' })
  if (created.status !== 201) throw new Error(`registering answered ${created.status}`)
}, 240_000)
afterAll(async () => {
  await app?.stop()
  await fake?.close()
  site?.close()
})

/** Sends `content` in a new conversation of `client` and waits for the answer; returns the thread and the job. */
async function ask(client: SessionClient, content: string, model = 'openai/gpt-4o-mini', threadId?: string) {
  const thread = threadId ? { id: threadId } : await (await client.post('/api/threads', {})).json()
  const sent = await client.post(`/api/threads/${thread.id}/messages`, { content, model })
  if (sent.status !== 200 && sent.status !== 201 && sent.status !== 202) throw new Error(`sending answered ${sent.status}: ${await sent.text()}`)
  const job = await waitForJobEnd(client, (await sent.json()).jobId, 60_000)
  return { threadId: thread.id as string, job }
}

const call = (name: string, args: Record<string, unknown>) => toolCallReply([{ id: `call_${name}_${Math.random().toString(36).slice(2, 8)}`, name, arguments: JSON.stringify(args) }])
const resultOf = (job: Awaited<ReturnType<typeof ask>>['job'], round: number) => JSON.parse(job.toolRounds[round]!.toolCalls[0]!.result ?? 'null')

describe('the workspace', () => {
  it('lets a model write, edit and grep files and run code that reads one; the file panel lists, shows, downloads and deletes them', async () => {
    fake.script([
      call('write', { path: 'notes/todo.md', content: '- buy milk\n- call Bob\n' }),
      call('edit', { path: 'notes/todo.md', old_text: '- call Bob', new_text: '- call Bob about the boat' }),
      call('grep', { pattern: 'b[oa]', ignore_case: true }),
      call('run_code', { language: 'javascript', code: 'const lines = workspace.readFile("notes/todo.md").trim().split("\\n"); workspace.writeFile("count.txt", String(lines.length)); lines.length' }),
      textReply('Your list has two items.'),
    ])
    const { threadId, job } = await ask(alice, 'Keep my to-do list')
    expect(job).toMatchObject({ status: 'complete', content: 'Your list has two items.' })
    expect(resultOf(job, 0)).toEqual({ path: 'notes/todo.md', size: 22, written: true })
    expect(resultOf(job, 1)).toMatchObject({ replaced: 1 })
    expect(resultOf(job, 2).matches).toEqual([{ path: 'notes/todo.md', line: 2, text: '- call Bob about the boat' }])
    expect(resultOf(job, 3)).toMatchObject({ ok: true, result: 2, filesWritten: ['count.txt'] })

    const listing = await alice.json(`/api/threads/${threadId}/workspace`)
    expect(listing.files.map((file: { path: string }) => file.path)).toEqual(['count.txt', 'notes/todo.md'])
    expect(listing.usage).toMatchObject({ files: 2, maxFiles: 2000 })
    const shown = await alice.fetch(`/api/threads/${threadId}/workspace/file?path=notes/todo.md&download=0`)
    expect(shown.headers.get('content-type')).toBe('text/plain; charset=utf-8')
    expect(shown.headers.get('content-security-policy')).toMatch(/sandbox/)
    expect(await shown.text()).toBe('- buy milk\n- call Bob about the boat\n')
    const downloaded = await alice.fetch(`/api/threads/${threadId}/workspace/file?path=count.txt`)
    expect(downloaded.headers.get('content-disposition')).toBe('attachment; filename*=UTF-8\'\'count.txt')
    expect(await downloaded.text()).toBe('2')

    // Another person sees none of it, and paths cannot climb out.
    const bob = new SessionClient(app.url)
    await bob.post('/api/auth/register', { name: 'Bob', password: 'another long password' })
    expect((await bob.fetch(`/api/threads/${threadId}/workspace`)).status).toBe(404)
    expect((await bob.fetch(`/api/threads/${threadId}/workspace/file?path=count.txt`)).status).toBe(404)
    const climbing = await alice.fetch(`/api/threads/${threadId}/workspace/file?path=../../etc/passwd`)
    expect(climbing.status).toBe(400)
    expect((await climbing.json()).message).toMatch(/points above the workspace/)

    expect((await alice.fetch(`/api/threads/${threadId}/workspace/file?path=count.txt`, { method: 'DELETE' })).status).toBe(200)
    expect((await alice.json(`/api/threads/${threadId}/workspace`)).files.map((file: { path: string }) => file.path)).toEqual(['notes/todo.md'])
    // Deleting the conversation deletes its files.
    expect((await alice.fetch(`/api/threads/${threadId}`, { method: 'DELETE' })).status).toBe(200)
    const fresh = await (await alice.post('/api/threads', {})).json()
    expect((await alice.json(`/api/threads/${fresh.id}/workspace`)).usage).toMatchObject({ files: 0, bytes: 0 })
  }, 90_000)

  it('lets the offline demo model save, list and run code on files without a key', async () => {
    const demo = 'or3/offline-demo'
    const first = await ask(alice, 'save "buy milk" as todo.md', demo)
    expect(first.job.content).toMatch(/Saved \*\*todo\.md\*\*/)
    const listed = await ask(alice, 'what files do I have?', demo, first.threadId)
    expect(listed.job.content).toMatch(/`todo\.md` \(8 bytes\)/)
    const ran = await ask(alice, 'run `workspace.readFile("todo.md").toUpperCase()`', demo, first.threadId)
    expect(ran.job.content).toMatch(/Result: `"BUY MILK"`/)
  }, 60_000)
})

describe('the web', () => {
  it('fetches a page the operator allows as Markdown and searches through SearXNG; the server itself stays out of reach', async () => {
    fake.script([
      call('web_search', { query: 'lighthouses brittany', count: 3 }),
      call('web_fetch', { url: `${siteUrl}/lighthouses` }),
      call('web_fetch', { url: 'http://169.254.169.254/latest/meta-data/' }),
      textReply('The Phare du Creach.'),
    ])
    const { job } = await ask(alice, 'Which lighthouse guards the busiest lane?')
    expect(job.status).toBe('complete')
    expect(resultOf(job, 0)).toEqual({ query: 'lighthouses brittany', provider: 'searxng', results: [{ title: 'Lighthouses of Brittany', url: `${siteUrl}/lighthouses`, snippet: 'A guide to the lights.' }] })
    expect(searched).toEqual(['lighthouses brittany'])
    expect(resultOf(job, 1)).toMatchObject({ title: 'Lighthouses', content: expect.stringMatching(/^## Lighthouses of Brittany\n\nThe Phare du Creach guards/) })
    // Cloud metadata (link-local) stays refused whatever the operator allowed.
    expect(job.toolRounds[2]!.toolCalls[0]).toMatchObject({ name: 'web_fetch', error: expect.stringMatching(/169\.254\.169\.254 is a private, loopback, link-local or reserved address/) })

    const { tools } = await alice.json('/api/tools')
    const named = (name: string) => tools.find((tool: { name: string }) => tool.name === name)
    expect(named('web_fetch')).toMatchObject({ capabilities: ['internet_access'], source: { kind: 'builtin' } })
    expect(named('run_code')).toMatchObject({ capabilities: ['code_execution', 'workspace'] })
  }, 60_000)
})
