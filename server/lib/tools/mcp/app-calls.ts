/**
 * What an MCP App's page may do through the app, for the person it is shown to: read its own page
 * (the `ui://` resource its tool names) and call tools of its own server, each call checked as if
 * the model had made it (the person's tool policy, its approvals: a call that needs one is refused
 * until the person confirms it in the app) and bounded (a rate per person, the arguments' size, the
 * tool's time). A page never reaches another server's tools, nor a tool whose visibility leaves out
 * the app.
 */
import type { ReadResourceResult } from '@modelcontextprotocol/client'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import { DomainError, type HttpAnswer } from '../../domain-error'
import { takePoint, type LimiterFactory } from '../../stores/rate-limits/limiters'
import { getServerTool, listServerTools } from '../registry'
import { approvalNeeded, type ToolAccessCheck } from '../policy/tool-policy'
import type { ToolCredentials } from '../tool-types'
import { appPageOf, type AppPage } from './apps'

/** How the app reaches one server for a person: its page, and its tools. */
export interface McpAppChannel {
  readResource(uri: string, context: AppCallContext): Promise<ReadResourceResult>
  call(tool: string, args: Record<string, unknown>, context: AppCallContext): Promise<string>
}

export interface AppCallContext {
  userId: string
  credentials: ToolCredentials
  signal?: AbortSignal
}

export interface McpAppsOptions {
  channel: (server: string) => McpAppChannel | undefined
  credentialsFor: (userId: string) => Promise<ToolCredentials>
  accessFor: (userId: string) => Promise<ToolAccessCheck>
  limiterFor: LimiterFactory
  /** Calls one person's pages may make per minute. */
  callsPerMinute: number
  /** Longest a page's read or call may take. */
  timeoutMs: number
}

/** What a page's `tools/call` is answered with (an MCP `CallToolResult`). */
export interface AppToolResult {
  content: Array<{ type: 'text', text: string }>
  structuredContent?: Record<string, unknown>
  isError?: boolean
}

/** Why a page's request was refused: 403 (the policy, or not this app's), 404, 409 (the person must confirm), 429, 502. */
export class McpAppError extends DomainError {
  override name = 'McpAppError'
  constructor(message: string, readonly statusCode: 403 | 404 | 409 | 429 | 502, readonly data?: Record<string, unknown>, readonly retryAfterSeconds?: number) {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    const texts = { 403: 'Not allowed', 404: 'No such app', 409: 'Confirm first', 429: 'Too many requests', 502: 'MCP server failed' }
    return { statusCode: this.statusCode, statusMessage: texts[this.statusCode], message: this.message, ...(this.data ? { data: this.data } : {}), ...(this.retryAfterSeconds ? { retryAfterSeconds: this.retryAfterSeconds, refusedBy: 'mcp_app_calls_user' } : {}) }
  }
}

/** The structured content a text result carries, when it is (or ends with) a JSON object (results.ts adds it so). */
function structuredIn(text: string): Record<string, unknown> | undefined {
  for (const candidate of [text, text.slice(text.lastIndexOf('\n\n') + 2)]) {
    if (!candidate.trimStart().startsWith('{')) continue
    try {
      const parsed = JSON.parse(candidate) as unknown
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>
    } catch {
      // not JSON
    }
  }
  return undefined
}

export class McpApps {
  private readonly limiter: RateLimiterAbstract

  constructor(private readonly options: McpAppsOptions) {
    this.limiter = options.limiterFor({ keyPrefix: 'mcp-app-calls', points: options.callsPerMinute, duration: 60 })
  }

  /** Whether the tool of that (registry) name shows a page. */
  hasPage(toolName: string): boolean {
    return Boolean(getServerTool(toolName)?.app?.resourceUri)
  }

  /** The page of `toolName`'s app, read through `userId`'s connection to its server. */
  async page(userId: string, toolName: string): Promise<AppPage> {
    const app = getServerTool(toolName)?.app
    if (!app?.resourceUri) throw new McpAppError(`The tool ${toolName} has no app page.`, 404)
    const channel = this.channelOf(app.server)
    const result = await this.reach(app.server, () => this.options.credentialsFor(userId).then(credentials => channel.readResource(app.resourceUri!, { userId, credentials, signal: AbortSignal.timeout(this.options.timeoutMs) })))
    try {
      return appPageOf(result, app.resourceUri)
    } catch (error) {
      throw new McpAppError((error as Error).message, 502)
    }
  }

  /**
   * A call the page of `toolName` asks for: `name` (a tool of the same server, by its name there)
   * with `args`, as `userId`. `confirmed`: the person confirmed it in the app (a call that needs
   * approval is refused with 409 until they do).
   */
  async callTool(userId: string, toolName: string, name: string, args: Record<string, unknown>, confirmed: boolean): Promise<AppToolResult> {
    const app = getServerTool(toolName)?.app
    if (!app?.resourceUri) throw new McpAppError(`The tool ${toolName} has no app page.`, 404)
    const target = listServerTools().find(tool => tool.app?.server === app.server && tool.app.tool === name)
    if (!target?.app?.visibility.includes('app')) throw new McpAppError(`The app of ${toolName} may not call "${name.slice(0, 100)}": it is not a tool of its server that apps may call.`, 403)
    const access = await this.options.accessFor(userId)
    const denied = access({ name: target.name, source: target.source, capabilities: target.capabilities, ...(target.groups ? { groups: target.groups } : {}) })
    if (denied) throw new McpAppError(`You cannot use ${target.name}: ${denied}.`, 403)
    if (!confirmed && approvalNeeded(target.name, access)) throw new McpAppError(`${target.name} runs only once you confirm it.`, 409, { confirm: { tool: target.name, arguments: args } })
    const wait = await takePoint(this.limiter, userId)
    if (wait !== undefined) throw new McpAppError(`At most ${this.options.callsPerMinute} calls from apps a minute; try again in ${wait} s.`, 429, undefined, wait)
    const channel = this.channelOf(app.server)
    try {
      const text = await this.reach(app.server, () => this.options.credentialsFor(userId).then(credentials => channel.call(name, args, { userId, credentials, signal: AbortSignal.timeout(this.options.timeoutMs) })))
      const structured = structuredIn(text)
      return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: structured } : {}) }
    } catch (error) {
      // The tool ran and said it failed: the page gets that as its result, as the model would.
      if ((error as Error).name === 'McpToolError') return { content: [{ type: 'text', text: (error as Error).message }], isError: true }
      throw error
    }
  }

  private channelOf(server: string): McpAppChannel {
    const channel = this.options.channel(server)
    if (!channel) throw new McpAppError(`MCP server "${server}" is not running.`, 502)
    return channel
  }

  private async reach<T>(server: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run()
    } catch (error) {
      if (DomainError.isDomainError(error) || (error as Error).name === 'McpToolError') throw error
      const reason = (error as Error).name === 'TimeoutError' ? 'it did not answer in time' : (error as Error).message
      throw new McpAppError(`MCP server "${server}": ${reason.slice(0, 500)}`, 502)
    }
  }
}
