/**
 * MCP servers through the registry, against the real server-everything (no mock of the
 * protocol): over stdio and over Streamable HTTP.
 */
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { McpServerConnection } from '../../../../server/lib/tools/mcp/connection'
import { McpServers } from '../../../../server/lib/tools/mcp/servers'
import { clearServerTools, getEnabledDefinitions, getServerTool } from '../../../../server/lib/tools/registry'
import { executeServerTool } from '../../../../server/lib/tools/execute-tool'
import { everythingOverStdio, startEverythingOverHttp } from '../../../support/mcp-servers'
import type { ToolQuestion } from '../../../../server/lib/tools/tool-types'

const logger = { info: () => {}, warn: () => {} }
const fastRetry = { baseDelayMs: 50, maxDelayMs: 200, breakerAfter: 100, breakerCooldownMs: 60_000 }
const open: Array<{ close: () => Promise<void> }> = []

async function ready(connection: McpServerConnection): Promise<void> {
  await vi.waitFor(() => expect(connection.status().state).toBe('ready'), { timeout: 20_000, interval: 50 })
}

beforeEach(() => clearServerTools())
afterEach(async () => {
  await Promise.all(open.splice(0).map(item => item.close()))
  clearServerTools()
})

describe('an MCP server over stdio', () => {
  it('registers its tools as <server>__<tool> with their schemas and annotations, and calls them', async () => {
    const connection = new McpServerConnection(everythingOverStdio(), { logger, connectTimeoutMs: 20_000, retry: fastRetry })
    open.push(connection)
    connection.start()
    await ready(connection)
    expect(connection.status()).toMatchObject({ name: 'everything', transport: 'stdio', state: 'ready', failures: 0, circuit: 'closed', skipped: [] })
    expect(connection.status().tools).toBeGreaterThanOrEqual(10)
    const sum = getServerTool('everything__get-sum')!
    expect(sum).toMatchObject({ runtime: 'server', idempotent: true, source: { kind: 'mcp', name: 'everything' }, parameters: { type: 'object', required: ['a', 'b'] } })
    expect(getServerTool('everything__toggle-simulated-logging')!.idempotent).toBe(false)
    expect(getEnabledDefinitions().map(tool => tool.function.name)).toContain('everything__echo')

    expect(await executeServerTool('everything__get-sum', JSON.stringify({ a: 2, b: 40 }))).toMatchObject({ result: expect.stringMatching(/42/) })
    expect(await executeServerTool('everything__get-sum', JSON.stringify({ a: 'x' }))).toMatchObject({ errorCode: 'invalid_arguments' })
    // An image cannot be read by a chat model as tool output: it is described instead.
    expect((await executeServerTool('everything__get-tiny-image', '{}')).result).toMatch(/\[image image\/png, [\d,]+ bytes, not shown to the model\]/)
  })

  it('lets a long operation that reports progress outlive the base timeout, and cancels a call on abort', async () => {
    // Progress every 250 ms against a 1.2 s base timeout: a busy machine can delay a notification a
    // good deal before the call would time out, and the whole operation still outlasts the timeout.
    const connection = new McpServerConnection({ ...everythingOverStdio(), timeoutMs: 1_200 }, { logger, connectTimeoutMs: 20_000, retry: fastRetry })
    open.push(connection)
    connection.start()
    await ready(connection)
    const long = await executeServerTool('everything__trigger-long-running-operation', JSON.stringify({ duration: 3, steps: 12 }))
    expect(long).toMatchObject({ result: expect.stringMatching(/Long running operation completed/) })
    expect(long.executionTimeMs).toBeGreaterThan(1_200)

    const controller = new AbortController()
    const call = executeServerTool('everything__trigger-long-running-operation', JSON.stringify({ duration: 20, steps: 20 }), { signal: controller.signal })
    setTimeout(() => controller.abort(), 200)
    expect(await call).toMatchObject({ result: null, errorCode: 'aborted' })
    // The session is fine afterwards.
    expect(await executeServerTool('everything__echo', JSON.stringify({ message: 'still here' }))).toMatchObject({ result: 'Echo: still here' })
  })

  it('withdraws its tools when the child dies, says why to a caller, and restarts it', async () => {
    const connection = new McpServerConnection(everythingOverStdio(), { logger, connectTimeoutMs: 20_000, retry: { ...fastRetry, baseDelayMs: 1_000 } })
    open.push(connection)
    connection.start()
    await ready(connection)
    const firstPid = connection.pid!
    process.kill(firstPid, 'SIGKILL')
    await vi.waitFor(() => expect(connection.status().state).toBe('failed'), { timeout: 10_000, interval: 20 })
    expect(connection.status()).toMatchObject({ error: 'its process exited', failures: 1, nextRetryAt: expect.any(Number) })
    expect(getEnabledDefinitions().some(tool => tool.function.name.startsWith('everything__'))).toBe(false)
    expect(await executeServerTool('everything__echo', JSON.stringify({ message: 'x' }))).toMatchObject({ errorCode: 'unavailable', error: expect.stringMatching(/MCP server "everything" is unavailable \(its process exited\)/) })

    await ready(connection)
    expect(connection.pid).not.toBe(firstPid)
    expect(connection.status().failures).toBe(0)
    expect(await executeServerTool('everything__echo', JSON.stringify({ message: 'back' }))).toMatchObject({ result: 'Echo: back' })
  })

  it('keeps the others working when one server cannot start, and shows its error', async () => {
    const servers = new McpServers({ logger, connectTimeoutMs: 20_000, retry: fastRetry })
    open.push(servers)
    await servers.apply([
      { name: 'broken', transport: 'stdio' as const, command: '/nonexistent/mcp-server', args: [], env: {}, enabled: true, timeoutMs: 5_000, maxTotalTimeoutMs: 10_000 },
      { ...everythingOverStdio(), tools: ['echo'] },
      { ...everythingOverStdio('off'), enabled: false },
    ].map(config => ({ config, origin: 'file' as const })))
    await vi.waitFor(() => expect(servers.statuses()[1]!.state).toBe('ready'), { timeout: 20_000, interval: 50 })
    await vi.waitFor(() => expect(servers.statuses()[0]!.failures).toBeGreaterThanOrEqual(1), { timeout: 10_000, interval: 20 })
    const [broken, everything, off] = servers.statuses()
    expect(broken).toMatchObject({ name: 'broken', state: 'failed', error: expect.stringMatching(/ENOENT|not found|spawn/i) })
    // Its retries (every 50–200 ms here) do not flap it back to "connecting": it stays failed.
    await vi.waitFor(() => expect(servers.statuses()[0]!.failures).toBeGreaterThanOrEqual(3), { timeout: 10_000, interval: 5 })
    const seen = new Set<string>()
    await vi.waitFor(() => {
      seen.add(servers.statuses()[0]!.state)
      expect(servers.statuses()[0]!.failures).toBeGreaterThanOrEqual(5)
    }, { timeout: 10_000, interval: 1 })
    expect([...seen]).toEqual(['failed'])
    // The allowlist keeps only echo.
    expect(everything).toMatchObject({ state: 'ready', tools: 1 })
    expect(off).toMatchObject({ state: 'disabled', tools: 0 })
    expect(await executeServerTool('everything__echo', JSON.stringify({ message: 'ok' }))).toMatchObject({ result: 'Echo: ok' })
    await servers.close()
    expect(getServerTool('everything__echo')).toBeUndefined()
  })
})

describe('a stdio server that exits at start', () => {
  it('shows the last line it printed on stderr in its state (the real cause, not just "Connection closed")', async () => {
    const connection = new McpServerConnection({ name: 'exits', transport: 'stdio', command: process.execPath, args: ['-e', 'console.error("starting up"); console.error("Error: GITHUB_TOKEN is not set"); process.exit(1)'], env: {}, enabled: true, timeoutMs: 5_000, maxTotalTimeoutMs: 10_000 }, { logger, connectTimeoutMs: 20_000, retry: { ...fastRetry, baseDelayMs: 60_000, maxDelayMs: 60_000 } })
    open.push(connection)
    connection.start()
    await vi.waitFor(() => expect(connection.status().state).toBe('failed'), { timeout: 15_000, interval: 20 })
    expect(connection.status().error).toMatch(/; it last printed: Error: GITHUB_TOKEN is not set$/)
  })
})

describe('a server whose tools change', () => {
  it('registers a tool it adds while connected (tools/list_changed) before the adding call returns', async () => {
    const fixture = fileURLToPath(new URL('../../../fixtures/mcp/list-changed-server.mjs', import.meta.url))
    const connection = new McpServerConnection({ name: 'fixture', transport: 'stdio', command: process.execPath, args: [fixture], env: {}, enabled: true, timeoutMs: 5_000, maxTotalTimeoutMs: 10_000 }, { logger, connectTimeoutMs: 20_000, retry: fastRetry })
    open.push(connection)
    connection.start()
    await ready(connection)
    expect(getServerTool('fixture__late')).toBeUndefined()
    expect(await executeServerTool('fixture__add_tool', JSON.stringify({ name: 'late' }))).toMatchObject({ result: 'added late' })
    // The call's result waits for the list it changed: the new tool is there when the result is.
    expect(getServerTool('fixture__late')).toBeDefined()
    expect(await executeServerTool('fixture__late', '{}')).toMatchObject({ result: 'late ran' })
    expect(connection.status().tools).toBe(2)
  })
})

describe('an MCP server over Streamable HTTP', () => {
  it('calls its tools, and after the server restarts (our session unknown to it) it is back by itself', async () => {
    const http = await startEverythingOverHttp()
    open.push({ close: http.stop })
    const connection = new McpServerConnection({ name: 'remote', transport: 'http', url: http.url, headers: {}, enabled: true, timeoutMs: 5_000, maxTotalTimeoutMs: 30_000 }, { logger, connectTimeoutMs: 20_000, retry: fastRetry })
    open.push(connection)
    connection.start()
    await ready(connection)
    expect(await executeServerTool('remote__echo', JSON.stringify({ message: 'one' }))).toMatchObject({ result: 'Echo: one' })
    await http.restart()
    // The dropped stream is noticed and the connection opened again after a short backoff.
    await vi.waitFor(async () => expect(await executeServerTool('remote__echo', JSON.stringify({ message: 'two' }))).toMatchObject({ result: 'Echo: two' }), { timeout: 15_000, interval: 50 })
    expect(connection.status().state).toBe('ready')
  })
})

describe('a Streamable HTTP server that goes away', () => {
  const remote = (url: string, extra: Record<string, unknown> = {}) => ({ name: 'remote', transport: 'http' as const, url, headers: {}, enabled: true, timeoutMs: 5_000, maxTotalTimeoutMs: 30_000, ...extra })
  const remoteOffered = () => getEnabledDefinitions().some(tool => tool.function.name.startsWith('remote__'))
  /** server-everything over HTTP and a ready connection to it with these settings and retry timing. */
  async function connectedTo(extra: Record<string, unknown>, retry: Partial<typeof fastRetry>) {
    const http = await startEverythingOverHttp()
    // A server a test stopped (SIGSTOP) is let go on before it is killed; one already gone needs neither.
    open.push({ close: async () => {
      try {
        process.kill(http.pid(), 'SIGCONT')
      } catch {}
      await http.stop()
    } })
    const connection = new McpServerConnection(remote(http.url, extra), { logger, connectTimeoutMs: 20_000, retry: { ...fastRetry, ...retry } })
    open.push(connection)
    connection.start()
    await ready(connection)
    return { http, connection }
  }

  it('is marked failed with the reason when it stops and stays down, its tools are not offered, calls are told when the next attempt is, and it comes back by itself', async () => {
    const { http, connection } = await connectedTo({ pingIntervalMs: 0 }, { baseDelayMs: 400, maxDelayMs: 1_000 })
    expect(remoteOffered()).toBe(true)

    await http.stop()
    // No call needed: the dropped server-sent stream is checked with a ping, which nothing answers.
    await vi.waitFor(() => expect(connection.status().state).toBe('failed'), { timeout: 15_000, interval: 20 })
    expect(connection.status()).toMatchObject({ error: expect.stringMatching(/ECONNREFUSED|fetch failed|reach|answer/), failures: expect.any(Number), nextRetryAt: expect.any(Number) })
    expect(remoteOffered()).toBe(false)
    expect(await executeServerTool('remote__echo', JSON.stringify({ message: 'x' }))).toMatchObject({ errorCode: 'unavailable', error: expect.stringMatching(/MCP server "remote" is unavailable \(.+\); the next attempt is in \d+ s/) })
    // Still down after more attempts: the backoff keeps going (failures count up).
    await vi.waitFor(() => expect(connection.status().failures).toBeGreaterThanOrEqual(2), { timeout: 15_000, interval: 20 })

    await http.start()
    await ready(connection)
    expect(connection.status().failures).toBe(0)
    expect(remoteOffered()).toBe(true)
    expect(await executeServerTool('remote__echo', JSON.stringify({ message: 'back' }))).toMatchObject({ result: 'Echo: back' })
  })

  it('is noticed by the idle ping when it hangs (stopped, its sockets still open)', async () => {
    const { http, connection } = await connectedTo({ timeoutMs: 400, pingIntervalMs: 200 }, { baseDelayMs: 60_000, maxDelayMs: 60_000 })
    process.kill(http.pid(), 'SIGSTOP')
    await vi.waitFor(() => expect(connection.status().state).toBe('failed'), { timeout: 15_000, interval: 20 })
    expect(connection.status().error).toMatch(/stopped answering/)
    expect(remoteOffered()).toBe(false)
    process.kill(http.pid(), 'SIGCONT')
    // An admin's reconnect does not wait out the backoff.
    await connection.reconnect()
    expect(connection.status().state).toBe('ready')
  })

  it('a call that finds it gone closes the connection at once and is answered "unavailable"', async () => {
    // A server that cannot keep a server-sent stream open (405 on GET) gives no other sign; no ping either.
    const { http, connection } = await connectedTo({ pingIntervalMs: 0 }, { baseDelayMs: 60_000, maxDelayMs: 60_000 })
    ;(connection as unknown as { probe: () => Promise<void> }).probe = async () => {}
    await http.stop()
    const call = await executeServerTool('remote__echo', JSON.stringify({ message: 'x' }))
    expect(call).toMatchObject({ errorCode: 'unavailable', error: expect.stringMatching(/cannot be reached: (ECONNREFUSED|ECONNRESET|fetch failed)\); the next attempt is in \d+ s/) })
    expect(connection.status().state).toBe('failed')
  })
})

describe('questions an MCP server asks while its tool runs (elicitation)', () => {
  it('brings the form to the person the call runs for, and their answer back to the server', async () => {
    const connection = new McpServerConnection(everythingOverStdio(), { logger, connectTimeoutMs: 20_000, retry: fastRetry })
    open.push(connection)
    connection.start()
    await ready(connection)
    const asked: ToolQuestion[] = []
    const accepted = await executeServerTool('everything__trigger-elicitation-request', '{}', {
      askUser: async (question) => {
        asked.push(question)
        return { action: 'accept', content: { name: 'Ada Lovelace', check: true, integer: 7 } }
      },
    })
    expect(asked).toHaveLength(1)
    expect(asked[0]).toMatchObject({ message: 'Please provide inputs for the following fields:', origin: 'mcp:everything', schema: { type: 'object', required: ['name'] } })
    expect(asked[0]!.timeoutMs).toBeGreaterThan(0)
    expect(accepted.result).toMatch(/Name: Ada Lovelace/)
    expect(accepted.result).toMatch(/Favorite Integer: 7/)

    const declined = await executeServerTool('everything__trigger-elicitation-request', '{}', { askUser: async () => ({ action: 'decline' }) })
    expect(declined.result).toMatch(/declined/)
    // Nobody to ask (a call outside a job): the server is told no, at once.
    const nobody = await executeServerTool('everything__trigger-elicitation-request', '{}')
    expect(nobody.result).toMatch(/declined/)
  })
})
