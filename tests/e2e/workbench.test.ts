/**
 * The agent's workbench in the built server, through the fake OpenRouter: a model writes, edits
 * and greps a conversation's workspace files and runs code that reads one; the file panel's
 * routes list, show, download and delete them, for their owner only; a page is fetched from a
 * local server (allowed by the operator's networks) and a search goes to a fake SearXNG, while
 * the server's own address stays refused; the offline demo model uses the workbench without a key;
 * deleting the conversation deletes its files. A subagent (`task`) runs as a child job whose answer
 * comes back, across a kill -9 of the server while it runs (one child, resumed), and stops with
 * its parent.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { vi } from 'vitest'
import { gatedTextReply, startFakeOpenRouter, textReply, toolCallReply, type FakeOpenRouter, type RecordedRequest } from '../support/fake-openrouter'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { startBuiltApp, useAppServers, type RunningApp } from '../support/built-app'
import { subagentJobId } from '../../shared/subagent'

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
  it('of a workflow run holds its steps\' scratch files while it runs, and they go when it ends (they no longer count against its owner)', async () => {
    const saved = await alice.post('/api/workflows', {
      definition: {
        version: 1,
        name: 'Writes a scratch file',
        defaultModel: 'openai/gpt-4o-mini',
        nodes: [{ id: 'start', kind: 'start' }, { id: 'note', kind: 'tool', tool: 'write', arguments: { path: 'scratch/notes.md', content: '{{prompt}}' } }, { id: 'reread', kind: 'tool', tool: 'read', arguments: { path: 'scratch/notes.md' } }, { id: 'out', kind: 'output' }],
        edges: [{ from: 'start', to: 'note' }, { from: 'note', to: 'reread' }, { from: 'reread', to: 'out' }],
      },
    })
    expect(saved.status).toBe(201)
    const { id } = await saved.json() as { id: string }
    const thread = await (await alice.post('/api/threads', {})).json() as { id: string }
    const filesKept = async () => ((await alice.json(`/api/threads/${thread.id}/workspace`)).usage as { files: number }).files
    const before = await filesKept()
    const started = await alice.post(`/api/workflows/${id}/run`, { prompt: 'a note the run keeps while it runs' })
    expect(started.status).toBe(202)
    const ended = await waitForJobEnd(alice, (await started.json()).jobId, 30_000)
    expect(ended.status).toBe('complete')
    // The second step read what the first wrote: the run's steps share its workspace.
    expect(ended.workflowState!.nodeStates.reread!.output).toContain('a note the run keeps while it runs')
    // Once it ended, its file is gone: what its owner keeps is what it was before the run.
    await expect.poll(filesKept, { timeout: 10_000 }).toBe(before)
  })

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
    // Python in the sandbox (bubblewrap, which CI installs), from the built server's own copy of Pyodide.
    const python = await ask(alice, 'run this python: ```python\nimport math\nprint(math.factorial(10))\n```', demo, first.threadId)
    expect(python.job.content).toMatch(/3628800/)
    // A subagent on the same model, whose answer (its own tool call's) comes back.
    const delegated = await ask(alice, 'ask a subagent to calculate 6 * 7', demo, first.threadId)
    expect(delegated.job.content).toMatch(/The subagent answered:[\s\S]*= \*\*42\*\*/)
  }, 60_000)
})

describe('tools agents write', () => {
  it('saves a proposed tool, refuses it until the person approves its code, then runs it sandboxed; a change needs approval again', async () => {
    const counter = { name: 'shout', description: 'Upper-cases a text.', parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, code: 'args.text.toUpperCase() + "!"' }
    fake.script([
      call('run_my_tool', { name: 'shout', args: { text: 'ahoy' } }),
      call('propose_tool', counter),
      call('run_my_tool', { name: 'shout', args: { text: 'ahoy' } }),
      textReply('Done.'),
    ])
    const thread = await (await alice.post('/api/threads', {})).json()
    const sent = await (await alice.post(`/api/threads/${thread.id}/messages`, { content: 'Make a shouting tool', model: 'openai/gpt-4o-mini' })).json()
    // The approval is a question to the person, with the code in a view of its own (not in the message).
    let request: { id: string, message: string, origin: string, code: Array<{ label: string, language: string, text: string }>, modelWords: string } | undefined
    await vi.waitFor(async () => {
      request = (await alice.json('/api/jobs/inputs')).requests.find((item: { jobId: string }) => item.jobId === sent.jobId)
      expect(request).toBeDefined()
    }, { timeout: 30_000, interval: 100 })
    expect(request!.origin).toBe('tool:shout')
    expect(request!.code[0]).toMatchObject({ language: 'javascript', text: 'args.text.toUpperCase() + "!"' })
    expect(request!.message).not.toContain('toUpperCase')
    expect(request!.modelWords).toBe('Upper-cases a text.')
    const pending = (await alice.json('/api/me/tools')).tools
    expect(pending).toEqual([expect.objectContaining({ name: 'shout', approved: false })])
    expect((await alice.post(`/api/jobs/${sent.jobId}/input/${request!.id}`, { action: 'accept', content: {} })).status).toBe(200)
    const job = await waitForJobEnd(alice, sent.jobId, 60_000)
    expect(job.status).toBe('complete')
    const calls = job.toolRounds.map(round => round.toolCalls[0]!)
    // Before it existed: refused; after the approval: run.
    expect(calls[0]).toMatchObject({ name: 'run_my_tool', error: expect.stringMatching(/no tool named "shout"/) })
    expect(JSON.parse(calls[1]!.result!)).toMatchObject({ name: 'shout', approved: true })
    expect(JSON.parse(calls[2]!.result!)).toEqual({ result: 'AHOY!' })

    // Changed by a later answer with nobody to ask: saved, not approved, refused; approved in Settings, it runs.
    fake.script([call('propose_tool', { ...counter, code: 'args.text.toUpperCase() + "!!!"' }), call('run_my_tool', { name: 'shout', args: { text: 'ahoy' } }), textReply('Changed.')])
    const changedJob = await alice.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Louder' }] })
    await vi.waitFor(async () => {
      const open = (await alice.json('/api/jobs/inputs')).requests.find((item: { jobId: string }) => item.jobId === changedJob)
      expect(open).toBeDefined()
      await alice.post(`/api/jobs/${changedJob}/input/${open.id}`, { action: 'decline' })
    }, { timeout: 30_000, interval: 100 })
    await vi.waitFor(async () => {
      const open = (await alice.json('/api/jobs/inputs')).requests.find((item: { jobId: string }) => item.jobId === changedJob)
      if (open) await alice.post(`/api/jobs/${changedJob}/input/${open.id}`, { action: 'decline' })
      expect((await alice.json(`/api/jobs/${changedJob}`)).status).not.toBe('streaming')
    }, { timeout: 30_000, interval: 100 })
    const changed = await waitForJobEnd(alice, changedJob, 30_000)
    expect(changed.toolRounds[1]!.toolCalls[0]).toMatchObject({ error: expect.stringMatching(/shout is not approved since it changed/) })
    const [tool] = (await alice.json('/api/me/tools')).tools
    expect(tool).toMatchObject({ name: 'shout', approved: false, code: 'args.text.toUpperCase() + "!!!"' })
    expect((await alice.post('/api/me/tools/shout/approve', { version: 'not-this-one' })).status).toBe(409)
    expect((await alice.post('/api/me/tools/shout/approve', { version: tool.version })).status).toBe(200)
    expect((await alice.json('/api/me/tools')).tools[0]).toMatchObject({ approved: true })
  }, 120_000)
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

describe('subagents', () => {
  const servers = useAppServers(() => ({ NUXT_OPENROUTER_BASE_URL: fake.url, NUXT_OPENROUTER_API_KEY: 'sk-or-test', NUXT_THREADS_GENERATE_TITLES: 'false', NUXT_SESSION_PASSWORD: 'a-subagent-test-session-password-long-enough' }))
  const isChild = (request: RecordedRequest) => String(request.body.messages[0]?.content ?? '').includes('You are a subagent')
  const toolResult = (request: RecordedRequest) => request.body.messages.findLast(message => message.role === 'tool')
  const taskCall = toolCallReply([{ id: 'call_task_1', name: 'task', arguments: JSON.stringify({ description: 'Find the tide', prompt: 'When does the tide turn at Brest today?', tools: ['calculate'] }) }])

  it('runs a subagent as a child job whose answer is the tool result, once, across a kill -9 while it runs', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'or3-subagent-'))
    let restarted = false
    const stalled = gatedTextReply(['The tide ', 'never'])
    fake.script((request) => {
      if (isChild(request)) return restarted ? textReply('The tide turns at 14:05.') : stalled.reply
      const result = toolResult(request)
      return result ? textReply(`The subagent says: ${String(result.content)}`) : taskCall
    })
    const before = fake.requests.length
    const first = await servers.start({ NUXT_DATA_DIR: dataDir })
    const client = new SessionClient(first.url)
    await client.post('/api/auth/register', { name: 'Sam', password: 'a long enough password' })
    const thread = await (await client.post('/api/threads', {})).json()
    const parentId = (await (await client.post(`/api/threads/${thread.id}/messages`, { content: 'When does the tide turn?', model: 'openai/gpt-4o-mini' })).json()).jobId as string
    const childId = subagentJobId(parentId, 'call_task_1')
    try {
      // The child is running (its model is answering) when the server is killed.
      await vi.waitFor(() => expect(fake.requests.slice(before).filter(isChild)).toHaveLength(1), { timeout: 30_000, interval: 50 })
      const child = await client.json(`/api/jobs/${childId}`)
      expect(child).toMatchObject({ status: 'streaming', subagent: { parentJobId: parentId, description: 'Find the tide', depth: 1 } })
    } finally {
      await first.stop('SIGKILL')
    }
    restarted = true

    const second = await servers.start({ NUXT_DATA_DIR: dataDir })
    const again = new SessionClient(second.url)
    again.cookie = client.cookie
    const parent = await waitForJobEnd(again, parentId, 60_000)
    expect(parent).toMatchObject({ status: 'complete', content: 'The subagent says: The tide turns at 14:05.', resumeCount: 1 })
    expect(parent.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'task', result: 'The tide turns at 14:05.' })
    const child = await waitForJobEnd(again, childId, 10_000)
    expect(child).toMatchObject({ status: 'complete', content: 'The tide turns at 14:05.', resumeCount: 1, subagent: { parentJobId: parentId } })
    // One child, asked twice (cut by the kill, then resumed), with the tools it was given; the parent asked for it once.
    const { jobs } = await again.json('/api/jobs')
    expect(jobs.filter((job: { subagent?: { parentJobId: string } }) => job.subagent?.parentJobId === parentId).map((job: { id: string }) => job.id)).toEqual([childId])
    const childRequests = fake.requests.slice(before).filter(isChild)
    expect(childRequests).toHaveLength(2)
    expect(childRequests[1]!.body.tools?.map(tool => tool.function.name)).toEqual(['calculate'])
    expect(fake.requests.slice(before).filter(request => !isChild(request) && !toolResult(request))).toHaveLength(1)
    // Its end is its parent's result, not a notification of its own.
    const { notifications } = await again.json('/api/notifications')
    expect(notifications.filter((note: { jobId: string }) => note.jobId === childId)).toEqual([])
  }, 180_000)

  it('stops a running subagent when its parent is stopped', async () => {
    const stalled = gatedTextReply(['Looking ', 'never'])
    fake.script(request => isChild(request) ? stalled.reply : taskCall)
    const before = fake.requests.length
    const app = await servers.start()
    const client = new SessionClient(app.url)
    await client.post('/api/auth/register', { name: 'Sam', password: 'a long enough password' })
    const parentId = await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Delegate it' }] })
    await vi.waitFor(() => expect(fake.requests.slice(before).filter(isChild)).toHaveLength(1), { timeout: 30_000, interval: 50 })
    await client.json(`/api/jobs/${parentId}/abort`, { method: 'POST' })
    expect(await waitForJobEnd(client, parentId, 20_000)).toMatchObject({ status: 'aborted' })
    expect(await waitForJobEnd(client, subagentJobId(parentId, 'call_task_1'), 20_000)).toMatchObject({ status: 'aborted' })
  }, 120_000)
})
