/**
 * How a connection reaches its MCP server: Streamable HTTP (each request carrying the trace of the
 * tool call it serves, and the person's OAuth sign-in when there is one), or a stdio child that gets
 * only the environment its config gives it plus PATH, its stderr logged line by line (bounded); and
 * reading a server's whole tool list, page by page (bounded).
 */
import { StreamableHTTPClientTransport, type AuthProvider, type Client, type FetchLike, type OAuthClientProvider, type Tool, type Transport } from '@modelcontextprotocol/client'
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import type { McpServerConfig } from './config'
import { withTraceHeaders } from '../../tracing'

/** Pages of a tool list read at most (a server paging forever does not hold a connection). */
const MAX_TOOL_PAGES = 20

/** Longest stderr line logged (a child printing megabytes does not fill the log). */
const MAX_LOG_LINE = 2_000

/** What opening a transport needs besides the server's config. */
export interface TransportOptions {
  logger: { info: (message: string) => void }
  /** How an HTTP connection authenticates (one person's OAuth tokens), when it does. */
  auth?: { authProvider: AuthProvider | OAuthClientProvider, fetch?: FetchLike }
  /** Each line a stdio child prints on stderr (trimmed, bounded): the last says why it died. */
  onStderr?: (line: string) => void
}

/** A transport to the server `config` names (`stdio`: the child's transport, for its pid). */
export function openTransport(config: McpServerConfig, options: TransportOptions): { transport: Transport, stdio?: StdioClientTransport } {
  if (config.transport === 'http') {
    const base: FetchLike = options.auth?.fetch ?? fetch
    const traced: FetchLike = (url, init) => base(url, { ...init, headers: withTraceHeaders(init?.headers) })
    return { transport: new StreamableHTTPClientTransport(new URL(config.url), { requestInit: { headers: config.headers }, ...options.auth, fetch: traced }) }
  }
  const transport = new StdioClientTransport({
    command: config.command,
    args: config.args,
    // Only what the config gives, plus PATH to find programs: never this server's own secrets.
    env: { PATH: process.env.PATH ?? '', ...config.env },
    cwd: config.cwd,
    stderr: 'pipe',
  })
  let pending = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8')
    const lines = pending.split('\n')
    pending = (lines.pop() ?? '').slice(-MAX_LOG_LINE)
    for (const line of lines) {
      if (!line.trim()) continue
      options.onStderr?.(line.trim().slice(0, MAX_LOG_LINE))
      options.logger.info(`[mcp:${config.name}] ${line.slice(0, MAX_LOG_LINE)}`)
    }
  })
  return { transport, stdio: transport }
}

/** Every tool the server lists, page by page (at most `MAX_TOOL_PAGES` pages), each page within `timeoutMs`. */
export async function listAllTools(client: Client, timeoutMs: number): Promise<Tool[]> {
  const tools: Tool[] = []
  let cursor: string | undefined
  for (let page = 0; page < MAX_TOOL_PAGES; page++) {
    const result = await client.listTools(cursor ? { cursor } : undefined, { timeout: timeoutMs })
    tools.push(...result.tools)
    cursor = result.nextCursor
    if (!cursor) break
  }
  return tools
}
