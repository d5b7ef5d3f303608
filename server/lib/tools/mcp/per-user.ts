/**
 * An MCP server whose env or headers name credentials only people have (`${credentials:github/token}`
 * with no server-wide value): each person gets their own connection, opened with their values
 * when they first use it and closed after `idleMs` unused, so nobody's call ever goes out with
 * someone else's token. Its tools are registered once (the names and schemas are the same for
 * everyone), from the first connection that lists them, each needing the named credentials, so a
 * person without them is told what to set before anything is sent. A call goes through the
 * caller's own connection.
 *
 * A server configured with `oauth` works the same way with each person's OAuth authorisation
 * instead of (or besides) placeholders: a person who has not connected it in Settings is told so
 * before anything is sent, and their connection authenticates with their own tokens.
 */
import { isDeepStrictEqual } from 'node:util'
import type { ReadResourceResult, Tool } from '@modelcontextprotocol/client'
import type { ToolCredentials, ToolExecutionContext } from '../tool-types'
import { fillCredentials, signsInPerPerson, type McpServerConfig } from './config'
import type { McpAuthorizations } from './oauth/authorizations'
import { McpAuthorizationRequired } from './oauth/errors'
import { McpServerConnection, type McpConnectionOptions } from './connection'
import { McpToolSet } from './tool-set'
import { McpConsentRequired, mcpTarget } from './consents'
import type { McpServerStatus } from '../../../../shared/types/tool'

interface UserConnection {
  connection: McpServerConnection
  config: McpServerConfig
  lastUsed: number
  /** Calls under way (an idle sweep never closes a connection mid-call). */
  active: number
  /** Replaced while calls were under way: closed when the last one ends. */
  retired?: boolean
}

export class McpPerUserServer {
  private readonly users = new Map<string, UserConnection>()
  private readonly toolSet: McpToolSet
  private sweeper: ReturnType<typeof setInterval> | undefined
  private closed = false
  private lastError: string | undefined

  constructor(
    readonly config: McpServerConfig,
    /** The credentials its placeholders name (`service/key`). */
    readonly needs: string[],
    private readonly options: McpConnectionOptions & {
      idleMs: number
      now?: () => number
      /** Set for a server with `oauth`. */
      authorizations?: McpAuthorizations
      /** Set for a server an admin added: whether a person allowed it their credentials at its address (consents.ts). */
      consented?: (userId: string) => Promise<boolean>
    },
  ) {
    this.toolSet = new McpToolSet(config, (tool, args, context) => this.call(tool, args, context), () => undefined, options.logger, needs)
  }

  private now(): number {
    return (this.options.now ?? Date.now)()
  }

  /** Starts closing idle connections. */
  start(): void {
    if (!this.config.enabled || this.sweeper) return
    this.sweeper = setInterval(() => this.closeIdle(), Math.min(this.options.idleMs, 60_000))
    this.sweeper.unref?.()
  }

  status(): McpServerStatus {
    const known = this.toolSet.size > 0
    // The worst of the people's connections: one that keeps failing shows here, not "0 failures".
    const connections = [...this.users.values()].map(({ connection }) => connection.status())
    const failed = connections.filter(connection => connection.state === 'failed')
    const failing = failed.toSorted((a, b) => b.failures - a.failures)[0]
    return {
      name: this.config.name,
      transport: this.config.transport,
      state: !this.config.enabled ? 'disabled' : this.closed ? 'closed' : known ? 'ready' : this.lastError || failing ? 'failed' : 'connecting',
      tools: this.toolSet.size,
      failures: failing?.failures ?? 0,
      circuit: connections.some(connection => connection.circuit === 'open') ? 'open' : 'closed',
      ...(known && failing?.error ? { error: `${failed.length} of ${connections.length} people's connections are failing: ${failing.error}` } : {}),
      skipped: this.toolSet.skipped,
      ...(!known && this.config.enabled
        ? { error: this.lastError ?? failing?.error ?? (this.usesOAuth
          ? 'Each person connects their own account in Settings → Connections; its tools are listed once someone has.'
          : `Connects per person with their own ${this.needs.map(need => `"${need}"`).join(', ')}; its tools are listed once someone who has set ${this.needs.length === 1 ? 'it' : 'them'} uses it or opens Settings.`) }
        : {}),
    }
  }

  /** Open per-person connections now. */
  get connections(): number {
    return this.users.size
  }

  /** Whether each person authorises it with OAuth. */
  get usesOAuth(): boolean {
    return signsInPerPerson(this.config)
  }

  /** Why `userId` cannot use it yet (not connected, or to re-authorise), else undefined. */
  async authorizationNeeded(userId: string): Promise<McpAuthorizationRequired | undefined> {
    const { authorizations } = this.options
    if (!this.usesOAuth || !authorizations) return undefined
    return authorizations.required(userId, this.config.name)
  }

  /** Closes `userId`'s connection (their authorisation changed): the next call opens a new one. */
  forget(userId: string): void {
    const entry = this.users.get(userId)
    if (!entry) return
    this.users.delete(userId)
    // A call under way (the one whose refresh was just refused, say) ends with its own answer first.
    if (entry.active > 0) entry.retired = true
    else void entry.connection.close()
  }

  /** Lists the tools through `userId`'s connection when none are known yet and they have the credentials. */
  async discoverFor(userId: string, credentials: ToolCredentials): Promise<void> {
    if (this.toolSet.size > 0 || !this.config.enabled || this.closed) return
    if (this.needs.some(need => credentials.get(...(need.split('/') as [string, string])) === undefined)) return
    if (await this.authorizationNeeded(userId)) return
    if (this.options.consented && !await this.options.consented(userId)) return
    const { connection } = this.connectionFor(userId, credentials)
    await connection.whenSettled()
    if (connection.status().state === 'failed') this.lastError = connection.status().error
  }

  /** Connects every open per-person connection again. */
  async reconnect(): Promise<void> {
    await Promise.all([...this.users.values()].map(({ connection }) => connection.reconnect()))
  }

  /** Closes every connection and withdraws the tools. */
  async close(): Promise<void> {
    this.closed = true
    clearInterval(this.sweeper)
    const open = [...this.users.values()]
    this.users.clear()
    this.toolSet.clear()
    await Promise.all(open.map(({ connection }) => connection.close()))
  }

  /** Calls `tool` (its MCP name) through the caller's own connection. */
  call(tool: string, args: Record<string, unknown>, context: Pick<ToolExecutionContext, 'userId' | 'credentials' | 'signal' | 'askUser'>): Promise<string> {
    return this.throughOwnConnection(context, connection => connection.call(tool, args, context))
  }

  /** Reads a resource (an MCP App's page) through the caller's own connection. */
  readResource(uri: string, context: Pick<ToolExecutionContext, 'userId' | 'credentials' | 'signal'>): Promise<ReadResourceResult> {
    return this.throughOwnConnection(context, connection => connection.readResource(uri, context.signal))
  }

  private async throughOwnConnection<T>(context: Pick<ToolExecutionContext, 'userId' | 'credentials'>, run: (connection: McpServerConnection) => Promise<T>): Promise<T> {
    // Nothing is sent for a person who has not authorised it: the message says where to.
    const needed = await this.authorizationNeeded(context.userId)
    if (needed) {
      this.forget(context.userId)
      throw needed
    }
    // Nor anything with a person's credentials to an admin's server they have not allowed at its address.
    if (this.needs.length > 0 && this.options.consented && !await this.options.consented(context.userId)) {
      this.forget(context.userId)
      throw new McpConsentRequired(this.config.name, mcpTarget(this.config), this.needs)
    }
    const entry = this.connectionFor(context.userId, context.credentials)
    entry.active++
    try {
      await entry.connection.whenSettled()
      return await run(entry.connection)
    } catch (error) {
      // Refused for want of scope (or the refresh was refused) meanwhile: say what the person can do, not the transport's words.
      const needed = await this.authorizationNeeded(context.userId)
      throw needed ?? error
    } finally {
      entry.active--
      entry.lastUsed = this.now()
      if (entry.retired && entry.active === 0) void entry.connection.close()
    }
  }

  /** `userId`'s connection, opened (again, when their credentials changed) with their values. */
  private connectionFor(userId: string, credentials: ToolCredentials): UserConnection {
    if (this.closed) throw new Error(`MCP server "${this.config.name}" is shutting down.`)
    const config = fillCredentials(this.config, (service, key) => credentials.get(service, key))
    const current = this.users.get(userId)
    if (current && isDeepStrictEqual(current.config, config)) {
      current.lastUsed = this.now()
      return current
    }
    if (current) void current.connection.close()
    const connection = new McpServerConnection(config, {
      ...this.options,
      label: `for ${userId}`,
      onTools: tools => this.learnTools(tools),
      ...(this.usesOAuth && this.options.authorizations ? { auth: this.options.authorizations.transportAuthFor(userId, this.config.name) } : {}),
    })
    const entry = { connection, config, lastUsed: this.now(), active: 0 }
    this.users.set(userId, entry)
    connection.start()
    return entry
  }

  /** The first list (and any later change) registers the tools everyone is offered. */
  private learnTools(tools: readonly Tool[]): void {
    if (this.closed) return
    this.lastError = undefined
    this.toolSet.sync(tools)
    this.options.onStateChange?.()
  }

  private closeIdle(): void {
    const cutoff = this.now() - this.options.idleMs
    for (const [userId, entry] of this.users) {
      if (entry.lastUsed >= cutoff || entry.active > 0) continue
      this.users.delete(userId)
      void entry.connection.close()
    }
  }
}
