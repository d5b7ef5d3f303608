/**
 * Tool sources in the built server. MCP servers from the operator's config file: a model calls a
 * tool of the real server-everything (stdio) through the fake OpenRouter and gets its result; a
 * server with a bad command shows its error while the other works; the state is in GET /api/tools
 * and health. The dynamic tools directory: a TypeScript file dropped in while the server runs is
 * loaded (jiti in the built server) and a model's call reaches it.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { startFakeOpenRouter, textReply, toolCallReply, type FakeOpenRouter } from '../support/fake-openrouter'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { EVERYTHING_ENTRY, startEverythingOverHttp } from '../support/mcp-servers'
import { buildApp, startApp, type RunningApp } from './helpers/built-app'

let app: RunningApp
let fake: FakeOpenRouter
let toolsDir: string
let remote: Awaited<ReturnType<typeof startEverythingOverHttp>>

beforeAll(async () => {
  fake = await startFakeOpenRouter()
  remote = await startEverythingOverHttp()
  const dir = mkdtempSync(join(tmpdir(), 'or3-mcp-e2e-'))
  const configFile = join(dir, 'mcp.json')
  writeFileSync(configFile, JSON.stringify({
    mcpServers: {
      everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'], timeoutMs: 5_000 },
      broken: { command: join(dir, 'no-such-server') },
      remote: { url: remote.url, timeoutMs: 1_000, tools: ['echo', 'trigger-long-running-operation'] },
    },
  }))
  toolsDir = join(dir, 'tools')
  mkdirSync(toolsDir)
  app = await startApp(await buildApp(), { NUXT_OPENROUTER_BASE_URL: fake.url, NUXT_OPENROUTER_API_KEY: 'sk-or-test', NUXT_MCP_CONFIG_FILE: configFile, NUXT_TOOLS_DYNAMIC_DIR: toolsDir })
}, 240_000)
afterAll(async () => {
  await app?.stop()
  await fake?.close()
  await remote?.stop()
})

/** Scripts the fake model to call `name` with `args` once, then answer `answer`. */
function callThenAnswer(name: string, args: Record<string, unknown>, answer: string): void {
  fake.script(request => request.body.messages.some(message => message.role === 'tool')
    ? textReply(answer)
    : toolCallReply([{ id: `call_${name}`, name, arguments: JSON.stringify(args) }]))
}

describe('MCP servers', () => {
  it('offers a ready server\'s tools to the model and runs its call, while a broken server shows its error', async () => {
    const client = new SessionClient(app.url)
    await vi.waitFor(async () => {
      const { mcpServers } = await client.json('/api/tools')
      expect(mcpServers.find((server: { name: string }) => server.name === 'everything')).toMatchObject({ state: 'ready' })
      expect(mcpServers.find((server: { name: string }) => server.name === 'broken')).toMatchObject({ state: 'failed', error: expect.stringMatching(/ENOENT|spawn/) })
    }, { timeout: 30_000, interval: 200 })
    const { tools } = await client.json('/api/tools')
    expect(tools.find((tool: { name: string }) => tool.name === 'everything__get-sum')).toMatchObject({ runtime: 'server', source: { kind: 'mcp', name: 'everything' } })
    const health = await client.json('/api/health')
    expect(health.tools.mcpServers).toEqual([{ name: 'everything', state: 'ready' }, { name: 'broken', state: 'failed' }, { name: 'remote', state: 'ready' }])

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
    const client = new SessionClient(app.url)
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

  it('reconnects to an HTTP server that restarted: the next call goes through', async () => {
    const client = new SessionClient(app.url)
    await remote.restart()
    callThenAnswer('remote__echo', { message: 'after restart' }, 'Echoed.')
    const job = await waitForJobEnd(client, await client.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Echo' }], _tools: ['remote__echo'] }), 30_000)
    expect(job).toMatchObject({ status: 'complete', content: 'Echoed.' })
    expect(job.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'remote__echo', result: 'Echo: after restart' })
  }, 60_000)
})

describe('the dynamic tools directory', () => {
  it('loads a TypeScript tool file dropped in while the server runs, and a model\'s call reaches it', async () => {
    const client = new SessionClient(app.url)
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
