/**
 * One configured MCP server: its connection (the official SDK's client, over stdio or Streamable
 * HTTP), its tools in the registry, and its life. It connects without holding up start-up; a
 * connection that fails or drops (a crashed child, a server that went away) is retried with
 * exponential backoff and jitter, and after `breakerAfter` failures in a row the circuit opens:
 * attempts wait `breakerCooldownMs` apart until one succeeds. While it is down its tools stay in
 * the registry but are not offered to models, and a call gets "MCP server X is unavailable
 * (reason)". A server that forgot our session (it restarted) is reconnected transparently on the
 * next call. A stdio child gets only the environment its config gives it, plus PATH.
 *
 * Liveness: a stdio child's exit closes the connection at once. An HTTP server has no such signal,
 * so a request that cannot reach it, a server-sent stream that drops (checked with an MCP `ping`)
 * or the transport giving up its reconnects closes the connection and marks it failed with the
 * reason, into the same backoff and breaker; while idle, a `ping` every `pingIntervalMs` notices
 * a server that went away (or a child that hangs) before a call does.
 */
import { Client, type AuthProvider, type FetchLike, type OAuthClientProvider, type ReadResourceResult, type Tool } from '@modelcontextprotocol/client'
import type { StdioClientTransport } from '@modelcontextprotocol/client/stdio'
import { errorText, isStaleSession, networkCode, NEVER_SENT_CODES, STREAM_TROUBLE } from './connection-errors'
import { listAllTools, openTransport } from './transports'
import { MAX_TOOL_RESULT_BYTES } from '../tool-result'
import type { McpServerConfig } from './config'
import { mcpResultText } from './results'
import { McpToolSet } from './tool-set'
import type { McpServerStatus } from '../../../../shared/types/tool'
import { ToolUnavailableError, type ToolExecutionContext } from '../tool-types'
import { answerElicitation, type ElicitingCall } from './elicitation'
import { MCP_APP_MIME_TYPE, MCP_APPS_EXTENSION } from './apps'

/** Where log lines go (consola in the server). */
export interface McpLogger {
  info: (message: string) => void
  warn: (message: string, ...details: unknown[]) => void
}

/** Retry timing (defaults for the server; tests shorten them). */
export interface McpRetryPolicy {
  baseDelayMs: number
  maxDelayMs: number
  /** Failures in a row after which the circuit opens. */
  breakerAfter: number
  breakerCooldownMs: number
}

export const DEFAULT_RETRY_POLICY: McpRetryPolicy = { baseDelayMs: 1_000, maxDelayMs: 60_000, breakerAfter: 8, breakerCooldownMs: 5 * 60_000 }

/** What a connection needs besides its config. */
export interface McpConnectionOptions {
  logger: McpLogger
  /** Longest the handshake and the first tool list may take. */
  connectTimeoutMs: number
  retry?: McpRetryPolicy
  random?: () => number
  /** Called whenever its state changes (ready, failed, connecting, closed), for open pages. */
  onStateChange?: () => void
  /** Set for a connection whose owner registers the tools (one user's connection): it gets each tool list instead. */
  onTools?: (tools: readonly Tool[]) => void
  /** Shown in log lines after the server's name (whose connection this is). */
  label?: string
  /** Told when a tool call to the server ended: how long it took, and whether it failed (for the metrics). */
  onCallEnded?: (server: string, ms: number, failed: boolean) => void
  /** How an HTTP connection authenticates (one person's OAuth tokens), when it does. */
  auth?: { authProvider: AuthProvider | OAuthClientProvider, fetch?: FetchLike }
}

/** How often an idle connection is pinged when its config does not say. */
export const DEFAULT_PING_INTERVAL_MS = 30_000

/** One MCP server and its tools. */
export class McpServerConnection {
  private state: McpServerStatus['state'] = 'connecting'
  private client: Client | undefined
  private lastError: string | undefined
  private failures = 0
  private nextRetryAt: number | undefined
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  /** Its tools in the registry; none for a per-user connection, whose owner registers them. */
  private readonly toolSet: McpToolSet | undefined
  private connecting: Promise<void> | undefined
  private stdio: StdioClientTransport | undefined
  private closing = false
  private refreshing: Promise<void> | undefined
  private toolCount = 0
  private readonly retry: McpRetryPolicy
  /** Calls under way, for the server's questions (elicitations) to find whom they are for. */
  private readonly inFlight = new Set<ElicitingCall>()
  private pinger: ReturnType<typeof setInterval> | undefined
  /** A liveness check under way (one at a time). */
  private probing: Promise<void> | undefined
  /** The stdio child's last line on stderr (shown when it exits). */
  private lastStderr: string | undefined

  constructor(readonly config: McpServerConfig, private readonly options: McpConnectionOptions) {
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY
    if (!config.enabled) this.state = 'disabled'
    this.toolSet = options.onTools
      ? undefined
      : new McpToolSet(config, (tool, args, context) => this.call(tool, args, context), () => this.unavailableReason(), options.logger)
  }

  /** Starts connecting in the background (no-op for a disabled server). */
  start(): void {
    if (this.state === 'disabled') return
    void this.connect()
  }

  status(): McpServerStatus {
    return {
      name: this.config.name,
      transport: this.config.transport,
      state: this.state,
      tools: this.toolSet?.size ?? this.toolCount,
      failures: this.failures,
      circuit: this.failures >= this.retry.breakerAfter ? 'open' : 'closed',
      skipped: this.toolSet?.skipped ?? [],
      ...(this.lastError !== undefined && this.state !== 'ready' ? { error: this.lastError } : {}),
      ...(this.nextRetryAt !== undefined && this.state === 'failed' ? { nextRetryAt: this.nextRetryAt } : {}),
    }
  }

  /** Resolves once the connection attempt under way (if any) has succeeded or failed. */
  async whenSettled(): Promise<void> {
    await this.connecting?.catch(() => {})
  }

  /** The stdio child's process id while it runs (for diagnostics and tests). */
  get pid(): number | null {
    return this.stdio?.pid ?? null
  }

  /** Why its tools cannot run now, or undefined when they can. */
  unavailableReason(): string | undefined {
    if (this.state === 'ready') return undefined
    const why = this.lastError ?? (this.state === 'connecting' ? 'still connecting' : this.state)
    const retry = this.state === 'failed' && this.nextRetryAt !== undefined ? `; the next attempt is in ${Math.max(1, Math.ceil((this.nextRetryAt - Date.now()) / 1000))} s` : ''
    return `MCP server "${this.config.name}" is unavailable (${why})${retry}. Try again later or answer without this tool.`
  }

  /**
   * Calls `tool` with `args`: the signal cancels it; progress notifications extend its timeout up
   * to the maximum total; a question the server asks meanwhile goes to `context.askUser`.
   */
  async call(tool: string, args: Record<string, unknown>, context: Pick<ToolExecutionContext, 'signal' | 'askUser'> = {}): Promise<string> {
    const { signal } = context
    const inFlight: ElicitingCall = { startedAt: Date.now(), askUser: context.askUser }
    this.inFlight.add(inFlight)
    const started = performance.now()
    let failed = true
    try {
      const result = await this.callOnce(tool, args, signal)
      failed = false
      return result
    } finally {
      this.inFlight.delete(inFlight)
      this.options.onCallEnded?.(this.config.name, performance.now() - started, failed)
    }
  }

  private async callOnce(tool: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
    for (let attempt = 0; ; attempt++) {
      const client = this.client
      if (this.state !== 'ready' || !client) throw new ToolUnavailableError(this.unavailableReason())
      try {
        const result = await client.callTool({ name: tool, arguments: args }, {
          signal,
          timeout: this.config.timeoutMs,
          resetTimeoutOnProgress: true,
          maxTotalTimeout: this.config.maxTotalTimeoutMs,
          onprogress: () => {},
        })
        // A tools/list_changed sent during the call is handled before its result is returned.
        await new Promise(resolve => setImmediate(resolve))
        await this.refreshing
        return mcpResultText(result as Parameters<typeof mcpResultText>[0], MAX_TOOL_RESULT_BYTES)
      } catch (error) {
        if (signal?.aborted) throw error
        const code = this.config.transport === 'http' ? networkCode(error) : undefined
        if (code) {
          // The server is gone: the connection closes now (not at the next call) and backs off.
          this.connectionLost(client, `it cannot be reached: ${code}`)
          if (NEVER_SENT_CODES.has(code)) throw new ToolUnavailableError(this.unavailableReason())
          throw new Error(`MCP server "${this.config.name}" went away during the call (${code}); it may or may not have run there.`)
        }
        // The server restarted and forgot our session: the call never ran there. Reconnect and send it again, once.
        if (attempt === 0 && this.config.transport === 'http' && isStaleSession(error)) {
          this.options.logger.info(`MCP server "${this.config.name}" lost its session; reconnecting.`)
          await this.reconnectNow()
          continue
        }
        if ((error as Error).name === 'McpToolError') throw error
        throw new Error(`MCP server "${this.config.name}": ${errorText(error)}`)
      }
    }
  }

  /** Reads a resource of the server (an MCP App's page), within the call timeout. */
  async readResource(uri: string, signal?: AbortSignal): Promise<ReadResourceResult> {
    const client = this.client
    if (this.state !== 'ready' || !client) throw new ToolUnavailableError(this.unavailableReason())
    try {
      return await client.readResource({ uri }, { signal, timeout: this.config.timeoutMs })
    } catch (error) {
      if (signal?.aborted) throw error
      throw new Error(`MCP server "${this.config.name}": ${errorText(error)}`)
    }
  }

  /** Closes the session (a stdio child is stopped) and withdraws its tools. */
  async close(): Promise<void> {
    this.closing = true
    clearTimeout(this.retryTimer)
    clearInterval(this.pinger)
    await this.connecting?.catch(() => {})
    const client = this.client
    this.client = undefined
    if (this.state !== 'disabled') this.setState('closed')
    await client?.close().catch(() => {})
    this.toolSet?.clear()
  }

  /**
   * Connects again now (an admin's "reconnect"): waits out no backoff, closes the circuit, and
   * resolves once the attempt has succeeded or failed.
   */
  async reconnect(): Promise<void> {
    if (this.state === 'disabled' || this.closing) return
    clearTimeout(this.retryTimer)
    this.failures = 0
    await this.connecting?.catch(() => {})
    await this.reconnectNow()
  }

  private setState(state: McpServerStatus['state']): void {
    if (this.state === state) return
    this.state = state
    this.options.onStateChange?.()
  }

  private connect(): Promise<void> {
    this.connecting ??= this.openConnection().finally(() => {
      this.connecting = undefined
    })
    return this.connecting
  }

  private async reconnectNow(): Promise<void> {
    const old = this.client
    this.client = undefined
    this.setState('connecting')
    if (old) {
      old.onclose = undefined
      await old.close().catch(() => {})
    }
    await this.connect()
  }

  private async openConnection(): Promise<void> {
    // A retry of a failed server stays "failed" (with its last error) until it succeeds: its
    // status does not flap between failed and connecting at every backoff step.
    if (this.failures === 0) this.setState('connecting')
    this.nextRetryAt = undefined
    const client = new Client({ name: 'or3-chat', version: '1.0.0' }, {
      // Questions a tool asks while it runs reach the person its job runs for (elicitation.ts).
      // MCP Apps: its tools' pages are shown under their calls (apps.ts).
      capabilities: { elicitation: { form: { applyDefaults: true }, url: {} }, extensions: { [MCP_APPS_EXTENSION]: { mimeTypes: [MCP_APP_MIME_TYPE] } } },
      listChanged: {
        // Refreshed here, at once: a call whose server changed its tools meanwhile waits for the
        // new list, so the job's next round is offered a tool the call just added.
        tools: { autoRefresh: false, debounceMs: 0, onChanged: () => this.refreshTools(client) },
      },
    })
    client.setRequestHandler('elicitation/create', request => answerElicitation(request.params, {
      server: this.config.name,
      calls: [...this.inFlight],
      callTimeoutMs: this.config.timeoutMs,
      logger: this.options.logger,
    }))
    client.onerror = (error) => {
      const text = errorText(error)
      // A last progress notification may arrive just after its call's result: nothing to report.
      if (/progress notification for an unknown token/i.test(text)) return
      this.options.logger.warn(`MCP server "${this.config.name}": ${text}`)
      // The server's stream dropped or could not come back: is the server still there?
      if (this.config.transport === 'http' && STREAM_TROUBLE.test(text)) void this.probe(client)
    }
    try {
      const onStderr = (line: string) => {
        this.lastStderr = line
      }
      const opened = openTransport(this.config, { ...this.options, onStderr })
      this.stdio = opened.stdio
      this.lastStderr = undefined
      await client.connect(opened.transport, { timeout: this.options.connectTimeoutMs })
      const tools = await listAllTools(client, this.options.connectTimeoutMs)
      if (this.closing) {
        await client.close().catch(() => {})
        return
      }
      this.client = client
      client.onclose = () => this.connectionLost(client)
      this.syncTools(tools)
      this.failures = 0
      this.lastError = undefined
      this.setState('ready')
      this.startPinging(client)
      this.options.logger.info(`MCP server "${this.config.name}"${this.options.label ? ` (${this.options.label})` : ''} is ready with ${this.toolCount} tool(s).`)
    } catch (error) {
      await client.close().catch(() => {})
      // With the stdio child's last stderr line when it said something (why it exited at start).
      const reason = errorText(error)
      this.failed(this.config.transport === 'stdio' && this.lastStderr ? `${reason}; it last printed: ${this.lastStderr.slice(0, 300)}` : reason)
    }
  }

  /** Pings the server while no call is under way, every `pingIntervalMs` (0: never). */
  private startPinging(client: Client): void {
    clearInterval(this.pinger)
    const every = this.config.pingIntervalMs ?? DEFAULT_PING_INTERVAL_MS
    if (every === 0) return
    this.pinger = setInterval(() => {
      if (this.client !== client) return clearInterval(this.pinger)
      if (this.inFlight.size === 0) void this.probe(client)
    }, every)
    this.pinger.unref?.()
  }

  /**
   * Checks that the server still answers (an MCP `ping`, bounded by the call timeout): a server
   * that forgot our session is reconnected; one that does not answer closes the connection.
   */
  private probe(client: Client): Promise<void> {
    this.probing ??= client.ping({ timeout: Math.min(this.config.timeoutMs, 10_000) })
      .then(() => {})
      .catch(async (error: unknown) => {
        if (this.client !== client || this.closing) return
        if (this.config.transport === 'http' && isStaleSession(error)) {
          this.options.logger.info(`MCP server "${this.config.name}" lost its session; reconnecting.`)
          await this.reconnectNow()
          return
        }
        this.connectionLost(client, `it stopped answering: ${networkCode(error) ?? errorText(error)}`)
      })
      .finally(() => {
        this.probing = undefined
      })
    return this.probing
  }

  /** The connection is gone: it is closed (an HTTP transport stops its own retries) and backs off. */
  private connectionLost(client: Client, reason?: string): void {
    if (this.closing || this.client !== client) return
    this.client = undefined
    clearInterval(this.pinger)
    client.onclose = undefined
    void client.close().catch(() => {})
    this.failed(reason ?? (this.config.transport === 'stdio' ? 'its process exited' : 'the connection closed'))
  }

  private failed(reason: string): void {
    if (this.closing) return
    this.failures++
    this.lastError = reason
    this.setState('failed')
    const { baseDelayMs, maxDelayMs, breakerAfter, breakerCooldownMs } = this.retry
    const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(this.failures - 1, 30))
    const jittered = Math.round(backoff * (0.5 + (this.options.random ?? Math.random)() / 2))
    const delay = this.failures >= breakerAfter ? breakerCooldownMs : jittered
    this.nextRetryAt = Date.now() + delay
    this.options.logger.warn(`MCP server "${this.config.name}" is unavailable (${reason}); retrying in ${Math.round(delay / 1000)} s.`)
    clearTimeout(this.retryTimer)
    this.retryTimer = setTimeout(() => void this.connect(), delay)
    this.retryTimer.unref?.()
  }

  /** Reads the tool list again after tools/list_changed; `refreshing` holds it until done. */
  private refreshTools(client: Client): void {
    if (this.client !== client) return
    const refresh: Promise<void> = listAllTools(client, this.options.connectTimeoutMs)
      .then((tools) => {
        if (this.client === client) this.syncTools(tools)
      })
      .catch(error => this.options.logger.warn(`MCP server "${this.config.name}": refreshing its tools failed: ${errorText(error)}`))
      .finally(() => {
        if (this.refreshing === refresh) this.refreshing = undefined
      })
    this.refreshing = refresh
  }

  /** Its current tools: to its tool set when it registers its own, and to `onTools` when its owner does. */
  private syncTools(tools: readonly Tool[]): void {
    this.toolCount = tools.length
    this.toolSet?.sync(tools)
    this.options.onTools?.(tools)
  }
}
