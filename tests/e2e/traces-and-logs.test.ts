/**
 * Traces and logs of the built app. With OTEL_EXPORTER_OTLP_ENDPOINT pointing at a small OTLP/HTTP
 * receiver, a job that calls an MCP tool over HTTP sends its spans: the job's root span, a child per
 * model request and per tool call, spans of its store calls, all with the job's id; the MCP server
 * receives the tool call's trace context. The server's log is JSON lines (production), the lines
 * about the job carry its id, its user's id and its trace id, and no secret the test gave the
 * server appears anywhere in it.
 */
import { createServer, request, type IncomingMessage, type Server } from 'node:http'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startFakeOpenRouter, textReply, toolCallReply, type FakeOpenRouter } from '../support/fake-openrouter'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { startEverythingOverHttp } from '../support/mcp-servers'
import { startBuiltApp, type RunningApp } from '../support/built-app'
import { freePort } from '../support/free-port'

/** Secrets the server is given; none may reach its log. */
const API_KEY = 'sk-or-v1-e2e0secret0key0that0must0never0be0logged0123456789'
const METRICS_TOKEN = 'scrape-token-of-the-traces-test-0123456789abcdef'
const PASSWORD = 'a password that never reaches the log'

interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  attributes: Array<{ key: string, value: { stringValue?: string, intValue?: string | number, boolValue?: boolean } }>
  status?: { code?: number }
}

/** A span's attribute as a plain value. */
function attribute(span: OtlpSpan, key: string): string | number | boolean | undefined {
  const value = span.attributes.find(item => item.key === key)?.value
  return value?.stringValue ?? (value?.intValue !== undefined ? Number(value.intValue) : value?.boolValue)
}

let app: RunningApp
let fake: FakeOpenRouter
let remote: Awaited<ReturnType<typeof startEverythingOverHttp>>
let receiver: Server
let proxy: Server
let dir: string
const spans: OtlpSpan[] = []
const serviceNames = new Set<string>()
/** The `traceparent` header of each request the MCP server got (undefined: none). */
const mcpTraceparents: Array<string | undefined> = []

function readBody(incoming: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = ''
    incoming.on('data', (chunk) => { body += String(chunk) })
    incoming.on('end', () => resolve(body))
    incoming.on('error', reject)
  })
}

beforeAll(async () => {
  fake = await startFakeOpenRouter()
  remote = await startEverythingOverHttp()
  // The OTLP/HTTP receiver: JSON bodies (the exporter's default encoding) at /v1/traces.
  receiver = createServer(async (incoming, response) => {
    const body = await readBody(incoming)
    if (incoming.url === '/v1/traces') {
      const payload = JSON.parse(body) as { resourceSpans: Array<{ resource: { attributes: OtlpSpan['attributes'] }, scopeSpans: Array<{ spans: OtlpSpan[] }> }> }
      for (const resource of payload.resourceSpans) {
        const service = resource.resource.attributes.find(item => item.key === 'service.name')?.value.stringValue
        if (service) serviceNames.add(service)
        for (const scope of resource.scopeSpans) spans.push(...scope.spans)
      }
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
  })
  const receiverPort = await freePort()
  await new Promise<void>(done => receiver.listen(receiverPort, '127.0.0.1', done))
  // A proxy in front of the MCP server that notes each request's trace context.
  const target = new URL(remote.url)
  proxy = createServer((incoming, response) => {
    mcpTraceparents.push(incoming.headers.traceparent as string | undefined)
    const forwarded = request({ host: target.hostname, port: target.port, path: incoming.url, method: incoming.method, headers: { ...incoming.headers, host: target.host } }, (upstream) => {
      response.writeHead(upstream.statusCode ?? 502, upstream.headers)
      upstream.pipe(response)
    })
    forwarded.on('error', () => response.destroy())
    incoming.pipe(forwarded)
  })
  const proxyPort = await freePort()
  await new Promise<void>(done => proxy.listen(proxyPort, '127.0.0.1', done))

  dir = mkdtempSync(join(tmpdir(), 'or3-traces-e2e-'))
  const configFile = join(dir, 'mcp.json')
  writeFileSync(configFile, JSON.stringify({ mcpServers: { remote: { url: `http://127.0.0.1:${proxyPort}${target.pathname}`, tools: ['echo'] } } }))
  app = await startBuiltApp({
    NUXT_OPENROUTER_BASE_URL: fake.url,
    NUXT_OPENROUTER_API_KEY: API_KEY,
    NUXT_MCP_CONFIG_FILE: configFile,
    NUXT_METRICS_ENABLED: 'true',
    NUXT_METRICS_TOKEN: METRICS_TOKEN,
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiverPort}`,
    OTEL_SERVICE_NAME: 'or3-e2e',
    // Spans leave within 100 ms of ending, not the default 5 s.
    OTEL_BSP_SCHEDULE_DELAY: '100',
  })
}, 240_000)

afterAll(async () => {
  await app?.stop()
  await fake?.close()
  await remote?.stop()
  await new Promise(done => receiver?.close(done))
  proxy?.closeAllConnections()
  await new Promise(done => proxy?.close(done))
  if (dir) rmSync(dir, { recursive: true, force: true })
})

describe('traces and logs', () => {
  it("sends a job's spans with their parents and the job's id, carries its trace into the MCP server, and logs JSON lines with its ids and no secret", async () => {
    const root = new SessionClient(app.url)
    const created = await root.post('/api/auth/register', { name: 'Root Person', password: PASSWORD })
    expect(created.status).toBe(201)
    await expect.poll(async () => ((await root.json('/api/tools')).mcpServers as Array<{ name: string, state: string }>).find(server => server.name === 'remote')?.state, { timeout: 30_000, interval: 100 }).toBe('ready')

    fake.script(incoming => incoming.body.messages.some(message => message.role === 'tool')
      ? textReply('Echoed.', { usage: { prompt: 40, completion: 3 } })
      : toolCallReply([{ id: 'call_echo', name: 'remote__echo', arguments: '{"message":"traced"}' }]))
    const jobId = await root.startJob({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Echo traced' }], _tools: ['remote__echo'] })
    const job = await waitForJobEnd(root, jobId, 30_000)
    expect(job).toMatchObject({ status: 'complete', content: 'Echoed.' })

    // The job's root span arrives once the run (and what follows it) has ended.
    await expect.poll(() => spans.find(span => span.name === 'or3.job chat' && attribute(span, 'or3.job.id') === jobId), { timeout: 20_000, interval: 50 }).toBeDefined()
    const jobSpan = spans.find(span => span.name === 'or3.job chat' && attribute(span, 'or3.job.id') === jobId)!
    expect(jobSpan.parentSpanId || undefined).toBeUndefined()
    expect(serviceNames).toContain('or3-e2e')
    const trace = () => spans.filter(span => span.traceId === jobSpan.traceId)
    // Its model requests (two: one asked for the tool, one answered) and its tool call are its children.
    await expect.poll(() => trace().filter(span => span.name === 'chat openai/gpt-4o-mini').length, { timeout: 10_000, interval: 50 }).toBe(2)
    const rounds = trace().filter(span => span.name === 'chat openai/gpt-4o-mini')
    for (const round of rounds) {
      expect(round.parentSpanId).toBe(jobSpan.spanId)
      expect(attribute(round, 'gen_ai.request.model')).toBe('openai/gpt-4o-mini')
      expect(attribute(round, 'gen_ai.operation.name')).toBe('chat')
    }
    expect(rounds.map(round => attribute(round, 'gen_ai.usage.output_tokens'))).toContain(3)
    const toolSpan = trace().find(span => span.name === 'execute_tool remote__echo')
    expect(toolSpan).toBeDefined()
    expect(toolSpan!.parentSpanId).toBe(jobSpan.spanId)
    expect(attribute(toolSpan!, 'gen_ai.tool.name')).toBe('remote__echo')
    // Its store calls (its progress and its end) are spans of the same trace.
    expect(trace().filter(span => span.name.startsWith('store jobs.')).length).toBeGreaterThan(0)
    // Every span of the trace carries the job's id and its user's id.
    for (const span of trace()) {
      expect(attribute(span, 'or3.job.id'), span.name).toBe(jobId)
      expect(attribute(span, 'enduser.id'), span.name).toEqual(expect.any(String))
    }

    // The MCP server got the tool call's trace context: W3C traceparent with the job's trace and the tool span as parent.
    expect(mcpTraceparents).toContain(`00-${jobSpan.traceId}-${toolSpan!.spanId}-01`)

    // The log: JSON lines; the job's lines carry its id, its user's id and its trace.
    const lines = app.logs().split('\n').filter(line => line.startsWith('{'))
    const entries = lines.map(line => JSON.parse(line) as Record<string, string>)
    const started = entries.find(entry => entry.msg === `Job ${jobId} (chat) started.`)
    expect(started).toMatchObject({ level: 'info', tag: 'jobs', jobId, userId: attribute(jobSpan, 'enduser.id'), traceId: jobSpan.traceId })
    expect(entries.find(entry => entry.msg === `Job ${jobId} (chat) ended: complete after 2 model requests.`)).toMatchObject({ jobId, traceId: jobSpan.traceId })
    expect(lines.join('\n')).not.toContain('Root Person')

    // A scrape with the token, so it has been sent once; then no secret the server was given is anywhere in its output.
    expect((await fetch(`${app.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).status).toBe(200)
    const everything = app.logs()
    for (const secret of [API_KEY, METRICS_TOKEN, PASSWORD, root.cookie.split('=')[1]!]) expect(everything).not.toContain(secret)
  }, 90_000)
})
