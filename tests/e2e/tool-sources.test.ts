/**
 * Tool sources in the built server. MCP servers from the operator's config file: a model calls a
 * tool of the real server-everything (stdio) through the fake OpenRouter and gets its result; a
 * server with a bad command shows its error while the other works; the state is in GET /api/tools
 * and health; a killed child is restarted; a tool a server adds while connected is offered in the
 * job's next round; server-memory writes its graph. An admin adds and removes a server at run
 * time, and open pages hear of every change. The dynamic tools directory: a TypeScript file
 * dropped in while the server runs is loaded (jiti in the built server) and a model's call reaches it.
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startFakeOpenRouter, textReply, toolCallReply, type FakeOpenRouter } from '../support/fake-openrouter'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { EVERYTHING_ENTRY, MEMORY_ENTRY, startEverythingOverHttp } from '../support/mcp-servers'
import { startOAuthMcpServer, type OAuthMcpServer } from '../support/oauth-mcp-server'
import { startBuiltApp, type RunningApp } from '../support/built-app'

let app: RunningApp
let fake: FakeOpenRouter
let toolsDir: string
let remote: Awaited<ReturnType<typeof startEverythingOverHttp>>
let memoryFile: string
let root: SessionClient
let dataDir: string
let secure: OAuthMcpServer

/** A client signed in as the admin (a fresh client with the admin's session). */
function asRoot(): SessionClient {
  const client = new SessionClient(app.url)
  client.cookie = root.cookie
  return client
}
const LIST_CHANGED_FIXTURE = fileURLToPath(new URL('../fixtures/mcp/list-changed-server.mjs', import.meta.url))

beforeAll(async () => {
  fake = await startFakeOpenRouter()
  remote = await startEverythingOverHttp()
  secure = await startOAuthMcpServer()
  const dir = mkdtempSync(join(tmpdir(), 'or3-mcp-e2e-'))
  const configFile = join(dir, 'mcp.json')
  memoryFile = join(dir, 'memory.jsonl')
  writeFileSync(configFile, JSON.stringify({
    mcpServers: {
      everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'], timeoutMs: 5_000 },
      broken: { command: join(dir, 'no-such-server') },
      remote: { url: remote.url, timeoutMs: 1_000, tools: ['echo', 'trigger-long-running-operation'] },
      memory: { command: process.execPath, args: [MEMORY_ENTRY], env: { MEMORY_FILE_PATH: memoryFile }, tools: ['create_entities', 'read_graph'] },
      changing: { command: process.execPath, args: [LIST_CHANGED_FIXTURE] },
      secure: { url: secure.url, oauth: true },
    },
  }))
  toolsDir = join(dir, 'tools')
  mkdirSync(toolsDir)
  dataDir = join(dir, 'data')
  app = await startBuiltApp({ NUXT_OPENROUTER_BASE_URL: fake.url, NUXT_OPENROUTER_API_KEY: 'sk-or-test', NUXT_MCP_CONFIG_FILE: configFile, NUXT_TOOLS_DYNAMIC_DIR: toolsDir, NUXT_DATA_DIR: dataDir })
  // Guests may use only the built-in tools: MCP and dynamic tools are used by the first account (the admin).
  root = new SessionClient(app.url)
  const created = await root.post('/api/auth/register', { name: 'Root', password: 'a long enough password' })
  if (created.status !== 201) throw new Error(`registering the admin answered ${created.status}`)
}, 240_000)
afterAll(async () => {
  await app?.stop()
  await fake?.close()
  await remote?.stop()
  await secure?.close()
})

/** Scripts the fake model to call `name` with `args` once, then answer `answer`. */
function callThenAnswer(name: string, args: Record<string, unknown>, answer: string): void {
  fake.script(request => request.body.messages.some(message => message.role === 'tool')
    ? textReply(answer)
    : toolCallReply([{ id: `call_${name}`, name, arguments: JSON.stringify(args) }]))
}

describe('MCP servers', () => {
  it('offers a ready server\'s tools to the model and runs its call, while a broken server shows its error', async () => {
    const client = asRoot()
    await vi.waitFor(async () => {
      const { mcpServers } = await client.json('/api/tools')
      expect(mcpServers.find((server: { name: string }) => server.name === 'everything')).toMatchObject({ state: 'ready' })
      expect(mcpServers.find((server: { name: string }) => server.name === 'broken')).toMatchObject({ state: 'failed', error: expect.stringMatching(/ENOENT|spawn/) })
    }, { timeout: 30_000, interval: 200 })
    const { tools } = await client.json('/api/tools')
    expect(tools.find((tool: { name: string }) => tool.name === 'everything__get-sum')).toMatchObject({ runtime: 'server', source: { kind: 'mcp', name: 'everything' } })
    const health = await client.json('/api/health')
    expect(health.tools.mcpServers.map((server: { name: string }) => server.name)).toEqual(['everything', 'broken', 'remote', 'memory', 'changing', 'secure'])
    expect(health.tools.mcpServers.slice(0, 3)).toEqual([{ name: 'everything', state: 'ready' }, { name: 'broken', state: 'failed' }, { name: 'remote', state: 'ready' }])

    fake.script(request => request.body.messages.some(message => message.role === 'tool')
      ? textReply('The sum is 42.')
      : toolCallReply([{ id: 'call_sum', name: 'everything__get-sum', arguments: '{"a":40,"b":2}' }]))
    const before = fake.requests.length
    const jobId = await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'What is 40 + 2?' }], _tools: ['everything__get-sum', 'everything__echo'] })
    const job = await waitForJobEnd(client, jobId, 30_000)
    expect(job).toMatchObject({ status: 'complete', content: 'The sum is 42.' })
    expect(job.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'everything__get-sum', result: expect.stringMatching(/42/) })
    // The model was offered the MCP tools it was given, with their schemas.
    const offered = fake.requests[before]!.body.tools!.map(tool => tool.function.name)
    expect(offered.sort()).toEqual(['everything__echo', 'everything__get-sum'])
  }, 60_000)

  it('lets a long MCP call that reports progress outlive its timeout, and stops it when the job is stopped', async () => {
    const client = asRoot()
    // timeoutMs is 1 s for "remote": the 2 s operation reports progress, which extends it.
    callThenAnswer('remote__trigger-long-running-operation', { duration: 2, steps: 8 }, 'Finished.')
    const finished = await waitForJobEnd(client, await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Run it' }], _tools: ['remote__trigger-long-running-operation'] }), 30_000)
    expect(finished.toolRounds[0]!.toolCalls[0]).toMatchObject({ result: expect.stringMatching(/Long running operation completed/) })

    callThenAnswer('remote__trigger-long-running-operation', { duration: 30, steps: 30 }, 'never')
    const jobId = await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Run a long one' }], _tools: ['remote__trigger-long-running-operation'] })
    await vi.waitFor(async () => expect((await client.json(`/api/jobs/${jobId}`)).activeToolCalls?.[0]?.status).toBe('running'), { timeout: 10_000, interval: 50 })
    await client.json(`/api/jobs/${jobId}/abort`, { method: 'POST' })
    expect(await waitForJobEnd(client, jobId, 10_000)).toMatchObject({ status: 'aborted' })
  }, 60_000)

  it('notices an HTTP server that went down and stays down, withdraws its tools saying when the next attempt is, and takes it back by itself', async () => {
    const client = asRoot()
    const remoteState = async () => ((await client.json('/api/tools')).mcpServers as Array<{ name: string, state: string, error?: string }>).find(server => server.name === 'remote')!
    await remote.stop()
    await vi.waitFor(async () => expect(await remoteState()).toMatchObject({ state: 'failed', error: expect.stringMatching(/stopped answering|cannot be reached/) }), { timeout: 15_000, interval: 100 })
    const offered = (await client.json('/api/tools')).tools as Array<{ name: string, unavailable?: string }>
    expect(offered.find(tool => tool.name === 'remote__echo')).toMatchObject({ unavailable: expect.stringMatching(/the next attempt is in \d+ s/) })
    // Not offered to a model meanwhile; one that calls it anyway is told so, and no request goes out ("fetch failed" never reaches anyone).
    callThenAnswer('remote__echo', { message: 'while down' }, 'It is down.')
    const asked = fake.requests.length
    const down = await waitForJobEnd(client, await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Echo' }], _tools: ['remote__echo'] }), 30_000)
    expect(JSON.stringify(fake.requests[asked]!.body.tools ?? [])).not.toContain('remote__echo')
    expect(down.toolRounds[0]!.toolCalls[0]!.result).toMatch(/was not offered/)

    await remote.start()
    await vi.waitFor(async () => expect((await remoteState()).state).toBe('ready'), { timeout: 30_000, interval: 100 })
    callThenAnswer('remote__echo', { message: 'back' }, 'Echoed.')
    const back = await waitForJobEnd(client, await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Echo' }], _tools: ['remote__echo'] }), 30_000)
    expect(back.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'remote__echo', result: 'Echo: back' })
  }, 90_000)

  it('reconnects to an HTTP server that restarted: the next call goes through', async () => {
    const client = asRoot()
    await remote.restart()
    await vi.waitFor(async () => expect(((await client.json('/api/tools')).mcpServers as Array<{ name: string, state: string }>).find(server => server.name === 'remote')!.state).toBe('ready'), { timeout: 30_000, interval: 100 })
    callThenAnswer('remote__echo', { message: 'after restart' }, 'Echoed.')
    const job = await waitForJobEnd(client, await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Echo' }], _tools: ['remote__echo'] }), 30_000)
    expect(job).toMatchObject({ status: 'complete', content: 'Echoed.' })
    expect(job.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'remote__echo', result: 'Echo: after restart' })
  }, 60_000)

  it('restarts a stdio server whose process was killed, and the next call works', async () => {
    const client = asRoot()
    const childOf = (parent: number) => execFileSync('ps', ['-o', 'pid=,args=', '--ppid', String(parent)], { encoding: 'utf8' })
      .split('\n').map(line => line.trim()).filter(line => line.includes(EVERYTHING_ENTRY) && line.endsWith('stdio'))
      .map(line => Number(line.split(/\s+/)[0]))[0]
    const before = childOf(app.process.pid!)
    expect(before).toBeGreaterThan(0)
    process.kill(before!, 'SIGKILL')
    await vi.waitFor(async () => {
      const { mcpServers } = await client.json('/api/tools')
      // A new child runs (not just the old one gone) and the server is ready on it.
      const now = childOf(app.process.pid!)
      expect(now).toEqual(expect.any(Number))
      expect(now).not.toBe(before)
      expect(mcpServers.find((server: { name: string }) => server.name === 'everything')).toMatchObject({ state: 'ready' })
    }, { timeout: 30_000, interval: 100 })
    callThenAnswer('everything__echo', { message: 'back again' }, 'Echoed.')
    const job = await waitForJobEnd(client, await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Echo' }], _tools: ['everything__echo'] }), 30_000)
    expect(job.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'everything__echo', result: 'Echo: back again' })
  }, 60_000)

  it('offers a tool a server added while connected (tools/list_changed) from the job\'s next round', async () => {
    const client = asRoot()
    await vi.waitFor(async () => expect((await client.json('/api/tools')).mcpServers.find((server: { name: string }) => server.name === 'changing')).toMatchObject({ state: 'ready' }), { timeout: 30_000, interval: 100 })
    const offered: string[][] = []
    fake.script((request) => {
      offered.push((request.body.tools ?? []).map(tool => tool.function.name).sort())
      const results = request.body.messages.filter(message => message.role === 'tool').length
      if (results === 0) return toolCallReply([{ id: 'call_add', name: 'changing__add_tool', arguments: '{"name":"late"}' }])
      if (results === 1) return toolCallReply([{ id: 'call_late', name: 'changing__late', arguments: '{}' }])
      return textReply('Done.')
    })
    const job = await waitForJobEnd(client, await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Add a tool, then use it' }], _tools: ['changing__add_tool', 'changing__late'] }), 30_000)
    expect(job).toMatchObject({ status: 'complete', content: 'Done.' })
    expect(offered[0]).toEqual(['changing__add_tool'])
    expect(offered[1]).toEqual(['changing__add_tool', 'changing__late'])
    expect(job.toolRounds[1]!.toolCalls[0]).toMatchObject({ name: 'changing__late', result: 'late ran' })
  }, 60_000)

  it('writes to server-memory\'s graph through a model\'s call', async () => {
    const client = asRoot()
    await vi.waitFor(async () => expect((await client.json('/api/tools')).mcpServers.find((server: { name: string }) => server.name === 'memory')).toMatchObject({ state: 'ready', tools: 2 }), { timeout: 30_000, interval: 100 })
    callThenAnswer('memory__create_entities', { entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }] }, 'Remembered.')
    const job = await waitForJobEnd(client, await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Remember Ada' }], _tools: ['memory__create_entities'] }), 30_000)
    expect(job).toMatchObject({ status: 'complete', content: 'Remembered.' })
    expect(readFileSync(memoryFile, 'utf8')).toContain('wrote the first program')
  }, 60_000)
})

describe('MCP servers an admin adds, and open pages', () => {
  it('runs a server an admin adds at run time, keeps its header secret masked, tells open pages, and removes it', async () => {
    const admin = asRoot()
    const watching = new AbortController()
    const events = await admin.fetch('/api/tools/events', { signal: watching.signal })
    expect(events.headers.get('content-type')).toContain('text/event-stream')
    const received: string[] = []
    const reading = (async () => {
      const reader = events.body!.pipeThrough(new TextDecoderStream()).getReader()
      for (;;) {
        const { value, done } = await reader.read()
        if (done) return
        received.push(value)
      }
    })().catch(() => {})
    await vi.waitFor(() => expect(received.join('')).toContain('event: ready'), { timeout: 30_000, interval: 20 })

    // Commands are the operator's unless NUXT_MCP_ADMIN_COMMANDS allows them.
    const refused = await admin.fetch('/api/admin/mcp-servers/local', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ command: 'node', args: ['server.js'] }) })
    expect(refused.status).toBe(403)
    expect(await refused.text()).toContain('NUXT_MCP_ADMIN_COMMANDS')
    // A name of the config file is the file's.
    expect((await admin.fetch('/api/admin/mcp-servers/remote', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: remote.url }) })).status).toBe(409)

    const saved = await admin.fetch('/api/admin/mcp-servers/extra', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: remote.url, headers: { Authorization: 'Bearer admin-secret-123' }, tools: ['get-sum'] }) })
    expect(saved.status).toBe(200)
    expect(await saved.json()).toMatchObject({ name: 'extra', origin: 'admin', headers: { Authorization: '••••••••' } })
    await vi.waitFor(async () => {
      const { tools } = await admin.json('/api/tools')
      expect(tools.find((tool: { name: string }) => tool.name === 'extra__get-sum')).toMatchObject({ source: { kind: 'mcp', name: 'extra' } })
    }, { timeout: 30_000, interval: 100 })
    await vi.waitFor(() => expect(received.join('')).toContain('event: tools-changed'), { timeout: 30_000, interval: 20 })
    const listed = await admin.json('/api/admin/mcp-servers')
    expect(listed.servers.map((server: { name: string, origin: string }) => `${server.name}:${server.origin}`)).toEqual(['everything:file', 'broken:file', 'remote:file', 'memory:file', 'changing:file', 'secure:file', 'extra:admin'])
    expect(JSON.stringify(listed)).not.toContain('admin-secret-123')
    expect(app.logs()).not.toContain('admin-secret-123')

    callThenAnswer('extra__get-sum', { a: 2, b: 3 }, 'Five.')
    const job = await waitForJobEnd(admin, await admin.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: '2 + 3?' }], _tools: ['extra__get-sum'] }), 30_000)
    expect(job.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'extra__get-sum', result: expect.stringMatching(/5/) })

    // Reconnect answers the state after the attempt; a signed-in user who is not an admin is refused.
    expect(await admin.json('/api/admin/mcp-servers/extra/reconnect', { method: 'POST' })).toMatchObject({ name: 'extra', state: 'ready' })
    expect((await new SessionClient(app.url).fetch('/api/admin/mcp-servers')).status).toBe(403)

    expect(await admin.json('/api/admin/mcp-servers/extra', { method: 'DELETE' })).toEqual({ deleted: true })
    expect((await admin.json('/api/tools')).tools.some((tool: { name: string }) => tool.name === 'extra__get-sum')).toBe(false)
    watching.abort()
    await reading
  }, 90_000)
})

describe('the tool policy', () => {
  it('offers a guest no MCP tools, refuses a forced call naming why, and refuses a workflow that uses one when saved', async () => {
    const guest = new SessionClient(app.url)
    const { tools } = await guest.json('/api/tools')
    expect(tools.find((tool: { name: string }) => tool.name === 'everything__echo')).toMatchObject({ unavailable: expect.stringMatching(/guests may use only the built-in tools/) })
    expect(tools.find((tool: { name: string }) => tool.name === 'calculate').unavailable).toBeUndefined()

    const before = fake.requests.length
    callThenAnswer('everything__echo', { message: 'sneaky' }, 'Could not.')
    const job = await waitForJobEnd(guest, await guest.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Echo' }], _tools: ['everything__echo', 'calculate'] }), 30_000)
    expect(fake.requests[before]!.body.tools!.map(tool => tool.function.name)).toEqual(['calculate'])
    expect(job.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'everything__echo', result: expect.stringContaining('guests may use only the built-in tools') })

    const saved = await guest.post('/api/workflows', { definition: {
      version: 1,
      name: 'Sneaky',
      defaultModel: 'openai/gpt-4o-mini',
      nodes: [{ id: 'start', kind: 'start' }, { id: 'echo', kind: 'tool', tool: 'everything__echo', arguments: { message: 'x' } }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'echo' }, { from: 'echo', to: 'out' }],
    } })
    expect(saved.status).toBe(400)
    expect((await saved.json()).data.problems).toEqual([{ nodeId: 'echo', message: expect.stringMatching(/^Node "echo" uses the tool "everything__echo", which you cannot use: guests may use only/) }])
  }, 60_000)

  it('applies an admin\'s change to a running job from its next round', async () => {
    const client = asRoot()
    const offered: string[][] = []
    fake.script((request) => {
      offered.push((request.body.tools ?? []).map(tool => tool.function.name))
      const results = request.body.messages.filter(message => message.role === 'tool').length
      if (results === 0) return toolCallReply([{ id: 'call_slow', name: 'remote__trigger-long-running-operation', arguments: '{"duration":1,"steps":2}' }])
      if (results === 1) return toolCallReply([{ id: 'call_echo', name: 'everything__echo', arguments: '{"message":"after"}' }])
      return textReply('Done.')
    })
    const jobId = await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Slow, then echo' }], _tools: ['remote__trigger-long-running-operation', 'everything__echo'] })
    await vi.waitFor(async () => expect((await client.json(`/api/jobs/${jobId}`)).activeToolCalls?.[0]?.status).toBe('running'), { timeout: 10_000, interval: 20 })
    const rules = { rules: [{ name: 'no everything for admins', effect: 'deny', tools: ['everything__*'], roles: ['admin'] }] }
    expect(await client.json('/api/admin/tool-policy', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify(rules) })).toMatchObject({ adminRules: rules.rules })
    const job = await waitForJobEnd(client, jobId, 30_000)
    expect(job).toMatchObject({ status: 'complete', content: 'Done.' })
    expect(offered[0]).toContain('everything__echo')
    expect(offered[1]).not.toContain('everything__echo')
    expect(job.toolRounds[1]!.toolCalls[0]).toMatchObject({ name: 'everything__echo', result: expect.stringContaining('denied by the tool policy "no everything for admins"') })
    expect((await client.json('/api/tools')).tools.find((tool: { name: string }) => tool.name === 'everything__echo').unavailable).toMatch(/no everything for admins/)

    const bad = await client.fetch('/api/admin/tool-policy', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules: [{ effect: 'deny', tools: ['(a+)+$'] }] }) })
    expect(bad.status).toBe(400)
    expect((await bad.json()).message).toMatch(/rules\.0\.tools\.0: must be a tool name/)
    await client.json('/api/admin/tool-policy', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ rules: [] }) })
  }, 60_000)
})

describe('tool credentials', () => {
  it('ends a call with what to set where, works once the user saves the credential, keeps it sealed, and never lends it to another user', async () => {
    writeFileSync(join(toolsDir, 'github-whoami.ts'), `
export default {
  name: 'github_whoami',
  description: 'Says which GitHub token it would use.',
  requiresCredentials: ['github/token'],
  handler: (_args: Record<string, never>, context: { credentials: { get: (service: string, key: string) => string | undefined } }) => ({ tokenLength: context.credentials.get('github', 'token')!.length }),
}
`)
    const client = asRoot()
    await vi.waitFor(async () => expect((await client.json('/api/tools')).tools.some((tool: { name: string }) => tool.name === 'github_whoami')).toBe(true), { timeout: 15_000, interval: 100 })
    const ask = async (who: SessionClient) => {
      callThenAnswer('github_whoami', {}, 'Answered.')
      return waitForJobEnd(who, await who.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Who am I on GitHub?' }], _tools: ['github_whoami'] }), 30_000)
    }

    const missing = await ask(client)
    expect(missing.toolRounds[0]!.toolCalls[0]!.result).toMatch(/needs the credential "github\/token", which is not set\. Tell the user to add it in Settings → Credentials \(\/settings#credentials\)/)
    expect((await client.json('/api/credentials')).services).toContainEqual({ service: 'github', tools: ['github_whoami'], keys: [{ key: 'token', set: null }] })
    expect((await client.json('/api/tools')).tools.find((tool: { name: string }) => tool.name === 'github_whoami').unavailable).toBe('It needs "github/token": add it in Settings → Credentials.')

    const saved = await client.fetch('/api/credentials/github', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: { token: 'ghp_e2e_secret_value' } }) })
    expect(saved.status).toBe(200)
    const savedText = await saved.text()
    expect(savedText).not.toContain('ghp_e2e_secret_value')
    expect(JSON.parse(savedText).services).toContainEqual({ service: 'github', tools: ['github_whoami'], keys: [{ key: 'token', set: 'mine' }] })
    expect((await ask(client)).toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'github_whoami', result: '{"tokenLength":20}' })
    expect((await client.json('/api/tools')).tools.find((tool: { name: string }) => tool.name === 'github_whoami').unavailable).toBeUndefined()

    // Another account does not get it; a guest cannot save one.
    expect((await client.post('/api/admin/users', { name: 'Bea', password: 'another long password' })).status).toBe(201)
    const bea = new SessionClient(app.url)
    expect((await bea.post('/api/auth/login', { name: 'Bea', password: 'another long password' })).status).toBe(200)
    expect((await ask(bea)).toolRounds[0]!.toolCalls[0]!.result).toContain('needs the credential "github/token"')
    const guestSave = await new SessionClient(app.url).fetch('/api/credentials/github', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: { token: 'x' } }) })
    expect(guestSave.status).toBe(403)

    // An admin's value for everyone serves Bea until she sets her own; a non-admin cannot set one.
    expect((await bea.fetch('/api/admin/credentials/github', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: { token: 'x' } }) })).status).toBe(403)
    expect((await client.fetch('/api/admin/credentials/github', { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: { token: 'team-token' } }) })).status).toBe(200)
    expect((await ask(bea)).toolRounds[0]!.toolCalls[0]).toMatchObject({ result: '{"tokenLength":10}' })
    expect((await bea.json('/api/credentials')).services).toContainEqual({ service: 'github', tools: ['github_whoami'], keys: [{ key: 'token', set: 'everyone' }] })
    await client.json('/api/admin/credentials/github', { method: 'DELETE' })

    // Nowhere in the database files in plain text, nor in the log.
    for (const file of readdirSync(dataDir)) {
      if (/\.(db|sqlite)(-wal|-shm)?$|\.sqlite3?$/.test(file)) expect(readFileSync(join(dataDir, file)).includes('ghp_e2e_secret_value'), file).toBe(false)
    }
    expect(readdirSync(dataDir).some(file => /\.(db|sqlite)/.test(file))).toBe(true)
    expect(app.logs()).not.toContain('ghp_e2e_secret_value')
  }, 90_000)
})

describe('an OAuth-protected MCP server', () => {
  it('serves the app\'s client ID metadata document to anyone (authorization servers fetch it), naming its callback', async () => {
    const answer = await fetch(`${app.url}/api/mcp-oauth/client-metadata.json`)
    expect(answer.status).toBe(200)
    expect(await answer.json()).toMatchObject({
      client_id: `${app.url}/api/mcp-oauth/client-metadata.json`,
      client_name: 'or3-chat',
      redirect_uris: [`${app.url}/api/mcp-oauth/callback`],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
    })
  })

  it('is authorised from Settings, runs calls with the person\'s token, refreshes once for parallel calls, and asks to re-authorise when the refresh is refused', async () => {
    const client = asRoot()
    expect((await client.json('/api/mcp-oauth')).servers).toEqual([{ server: 'secure', state: 'not-connected' }])

    /** Connect as a browser would: the app's connect answer, the authorization server's redirect, the app's callback. */
    const connect = async (who: SessionClient, as: string) => {
      secure.approveAs(as)
      const { authorizationUrl } = await who.json('/api/mcp-oauth/secure/connect', { method: 'POST' })
      const approved = await fetch(authorizationUrl, { redirect: 'manual' })
      const callback = new URL(approved.headers.get('location')!)
      expect(callback.origin).toBe(app.url)
      const back = await who.fetch(callback.pathname + callback.search, { redirect: 'manual' })
      expect(back.status).toBe(302)
      return back.headers.get('location')!
    }
    // A script's Bearer request (exempt from the cross-site check) cannot point the callback at
    // another origin, and a null Origin is no 500: the callback is always this app's.
    const { token } = await client.json('/api/auth/tokens', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'oauth-check', password: 'a long enough password' }) })
    for (const origin of ['https://collector.example', 'null']) {
      const started = await fetch(`${app.url}/api/mcp-oauth/secure/connect`, { method: 'POST', headers: { authorization: `Bearer ${token}`, origin } })
      expect(started.status).toBe(200)
      const redirect = new URL(new URL((await started.json()).authorizationUrl).searchParams.get('redirect_uri')!)
      expect(redirect.origin).toBe(app.url)
    }
    expect(await connect(client, 'root@idp')).toBe('/settings?connected=secure#connections')
    expect((await client.json('/api/mcp-oauth')).servers).toEqual([{ server: 'secure', state: 'connected', connectedAt: expect.any(Number) }])
    await vi.waitFor(async () => expect((await client.json('/api/tools')).tools.find((tool: { name: string }) => tool.name === 'secure__whoami')).toBeDefined(), { timeout: 15_000, interval: 100 })

    const ask = async (who: SessionClient) => {
      callThenAnswer('secure__whoami', {}, 'Answered.')
      return (await waitForJobEnd(who, await who.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Who am I there?' }], _tools: ['secure__whoami'] }), 30_000)).toolRounds[0]!.toolCalls[0]!
    }
    expect(await ask(client)).toMatchObject({ result: 'authorised as root@idp' })

    // Someone who has not connected is told where to, and nothing is sent for them.
    expect((await client.post('/api/admin/users', { name: 'Cleo', password: 'a third long password' })).status).toBe(201)
    const cleo = new SessionClient(app.url)
    expect((await cleo.post('/api/auth/login', { name: 'Cleo', password: 'a third long password' })).status).toBe(200)
    expect((await cleo.json('/api/tools')).tools.find((tool: { name: string }) => tool.name === 'secure__whoami').unavailable).toMatch(/Connect your account for "secure" in Settings → Connections/)
    expect((await ask(cleo)).result).toMatch(/needs the user's authorisation.*Settings → Connections \(\/settings#connections\)/)
    // A callback that is not the one a person started sends them back with the reason.
    expect(decodeURIComponent((await cleo.fetch('/api/mcp-oauth/callback?state=secure.forged&code=x', { redirect: 'manual' })).headers.get('location')!)).toMatch(/connection_error=This\+authorisation\+is\+not/)

    // The server stops accepting the tokens it issued: three answers at once, one refresh between them.
    secure.expireAccessTokens()
    const refreshesBefore = secure.stats.refreshes
    callThenAnswer('secure__whoami', {}, 'Answered.')
    const parallel = await Promise.all([0, 1, 2].map(async () => {
      const job = await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Who am I there?' }], _tools: ['secure__whoami'] })
      return (await waitForJobEnd(client, job, 30_000)).toolRounds[0]!.toolCalls[0]!
    }))
    for (const call of parallel) expect(call).toMatchObject({ result: 'authorised as root@idp' })
    expect(secure.stats.refreshes - refreshesBefore).toBe(1)
    expect(secure.stats.refreshReuse).toBe(0)

    // Revoked: the call says to re-authorise, Settings shows why, and connecting again works.
    secure.revokeRefreshTokens()
    secure.expireAccessTokens()
    expect((await ask(client)).result).toMatch(/expired or was revoked \(invalid_grant.*re-authorise it in Settings → Connections/)
    expect((await client.json('/api/mcp-oauth')).servers).toEqual([{ server: 'secure', state: 'reauthorize', connectedAt: expect.any(Number), problem: expect.stringMatching(/invalid_grant/) }])
    await connect(client, 'root@idp')
    expect(await ask(client)).toMatchObject({ result: 'authorised as root@idp' })

    // Sealed at rest: no token field in plain text in the database files.
    for (const file of readdirSync(dataDir)) {
      if (/\.(db|sqlite)(-wal|-shm)?$|\.sqlite3?$/.test(file)) expect(readFileSync(join(dataDir, file)).includes('refresh_token'), file).toBe(false)
    }
  }, 120_000)
})

describe('the dynamic tools directory', () => {
  it('loads a TypeScript tool file dropped in while the server runs, and a model\'s call reaches it', async () => {
    const client = asRoot()
    writeFileSync(join(toolsDir, 'word-count.ts'), `
const countWords = (text: string): number => text.trim().split(/\\s+/).filter(Boolean).length
export default {
  name: 'word_count',
  description: 'Counts the words of a text.',
  parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  idempotent: true,
  handler: ({ text }: { text: string }) => ({ words: countWords(text) }),
}
`)
    await vi.waitFor(async () => {
      const { tools } = await client.json('/api/tools')
      expect(tools.find((tool: { name: string }) => tool.name === 'word_count')).toMatchObject({ source: { kind: 'dynamic', name: 'word-count.ts' } })
    }, { timeout: 15_000, interval: 100 })

    fake.script(request => request.body.messages.some(message => message.role === 'tool')
      ? textReply('Four words.')
      : toolCallReply([{ id: 'call_wc', name: 'word_count', arguments: '{"text":"one two three four"}' }]))
    const jobId = await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Count: one two three four' }], _tools: ['word_count'] })
    const job = await waitForJobEnd(client, jobId, 30_000)
    expect(job).toMatchObject({ status: 'complete', content: 'Four words.' })
    expect(job.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'word_count', result: '{"words":4}' })
  }, 60_000)
})
