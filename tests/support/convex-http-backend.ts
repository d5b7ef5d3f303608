/**
 * A Convex deployment for multi-process tests: the project's own `convex/` functions run by
 * `convex-test` (with Convex's per-transaction limits on) behind the HTTP API `ConvexHttpClient`
 * speaks (`POST /api/query`, `/api/mutation`, `/api/action`; Convex's JSON encoding; status 560 for
 * a function that threw). Built servers pointed at its URL cross a process boundary on every call,
 * as in production. An optional delay stands for the round trip to a deployment far away.
 *
 * What it cannot show: write conflicts (convex-test runs one transaction at a time, a real
 * deployment retries conflicting mutations), real latency variance, and subscriptions (no
 * WebSocket sync protocol).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { convexTest } from 'convex-test'
import { makeFunctionReference } from 'convex/server'
import { convexToJson, jsonToConvex, type JSONValue } from 'convex/values'
import schema from '../../convex/schema'

const modules = import.meta.glob(['../../convex/**/*.ts', '../../convex/_generated/*.js', '!../../convex/**/*.test.ts'])

/** Convex's status for a function that threw (the client reads the body as the error). */
const FUNCTION_FAILED = 560

/** What the backend counted, per function path. */
export interface ConvexCallCounts {
  query: Map<string, number>
  mutation: Map<string, number>
  /** Function calls that threw, with their message. */
  failures: Array<{ path: string, message: string }>
}

export interface ConvexHttpBackend {
  url: string
  /** A real deployment (OR3_TEST_CONVEX_URL): no delay to set, no calls counted. */
  remote: boolean
  /** The server secret the functions check (give it to the app as NUXT_CONVEX_SERVER_SECRET). */
  secret: string
  /** Milliseconds added to every call (half before it runs, half after), the round trip to a far deployment. */
  setDelay: (ms: number) => void
  calls: ConvexCallCounts
  /** Total mutation calls so far. */
  mutationCount: () => number
  /** Runs a query of the deployment directly (the secret is added), to look at what the instances wrote. */
  query: (path: string, args: Record<string, unknown>) => Promise<any>
  close: () => Promise<void>
}

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = []
    request.on('data', (part: Buffer) => parts.push(part))
    request.on('end', () => resolve(Buffer.concat(parts).toString('utf8')))
    request.on('error', reject)
  })
}

const pause = (ms: number) => new Promise(resolve => setTimeout(resolve, ms))

/** Starts the backend on a free port of 127.0.0.1. */
export async function startConvexHttpBackend(options: { secret?: string, delayMs?: number } = {}): Promise<ConvexHttpBackend> {
  const secret = options.secret ?? `convex-http-backend-secret-${crypto.randomUUID()}`
  // The functions read the deployment's secret from their environment (convex/lib/serverGuard.ts).
  process.env.OR3_SERVER_SECRET = secret
  const backend = convexTest({ schema, modules, transactionLimits: true })
  let delayMs = options.delayMs ?? 0
  const calls: ConvexCallCounts = { query: new Map(), mutation: new Map(), failures: [] }

  async function run(kind: 'query' | 'mutation' | 'action', path: string, args: Record<string, unknown>): Promise<unknown> {
    // convex-test takes function references; the wire names the function by its path.
    const call = backend[kind] as (reference: unknown, args: Record<string, unknown>) => Promise<unknown>
    return call(makeFunctionReference(path), args)
  }

  async function answer(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const kind = request.url?.match(/^\/api\/(query|mutation|action)$/)?.[1] as 'query' | 'mutation' | 'action' | undefined
    if (request.method !== 'POST' || !kind) {
      response.writeHead(404).end('not found')
      return
    }
    const body = JSON.parse(await readBody(request)) as { path: string, args: JSONValue[] }
    if (delayMs) await pause(delayMs / 2)
    if (kind !== 'action') calls[kind].set(body.path, (calls[kind].get(body.path) ?? 0) + 1)
    let reply: { status: 'success', value: JSONValue } | { status: 'error', errorMessage: string }
    try {
      const value = await run(kind, body.path, jsonToConvex(body.args[0] ?? {}) as Record<string, unknown>)
      reply = { status: 'success', value: convexToJson(value as never) }
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error)
      calls.failures.push({ path: body.path, message })
      reply = { status: 'error', errorMessage: message }
    }
    if (delayMs) await pause(delayMs / 2)
    response.writeHead(reply.status === 'success' ? 200 : FUNCTION_FAILED, { 'content-type': 'application/json' })
    response.end(JSON.stringify({ ...reply, logLines: [] }))
  }

  const server = createServer((request, response) => {
    answer(request, response).catch((error) => {
      if (!response.headersSent) response.writeHead(500)
      response.end(String(error))
    })
  })
  server.keepAliveTimeout = 60_000
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    remote: false,
    secret,
    setDelay: (ms) => { delayMs = ms },
    calls,
    mutationCount: () => [...calls.mutation.values()].reduce((sum, count) => sum + count, 0),
    query: (path, args) => run('query', path, { ...args, secret }),
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}

/**
 * The deployment of a multi-process test: a real one when OR3_TEST_CONVEX_URL and
 * OR3_TEST_CONVEX_SECRET are set (see the README, "Testing several instances"), else the local
 * backend above.
 */
export async function startTestDeployment(options: { delayMs?: number } = {}): Promise<ConvexHttpBackend> {
  const url = process.env.OR3_TEST_CONVEX_URL
  const secret = process.env.OR3_TEST_CONVEX_SECRET
  if (!url || !secret) return startConvexHttpBackend(options)
  const { ConvexHttpClient } = await import('convex/browser')
  const client = new ConvexHttpClient(url)
  return {
    url,
    remote: true,
    secret,
    setDelay: () => {},
    calls: { query: new Map(), mutation: new Map(), failures: [] },
    mutationCount: () => 0,
    query: (path, args) => client.query(makeFunctionReference<'query'>(path), { ...args, secret }),
    close: async () => {},
  }
}
