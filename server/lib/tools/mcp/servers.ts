/**
 * Every MCP server this process connects to: the operator's (from the config file) and the
 * admin's (added in the UI). Each runs on its own (one broken server never affects the others);
 * `apply` makes the running set match a new list without touching servers whose config did not
 * change, so an admin's edit restarts only the server edited. Listed for `GET /api/tools`,
 * settings and the health report, and closed together at shutdown (stdio children stopped).
 */
import { isDeepStrictEqual } from 'node:util'
import { ClientCredentialsProvider, PrivateKeyJwtProvider, type OAuthClientProvider } from '@modelcontextprotocol/client'
import { credentialPlaceholders, fillCredentials, oauthOf, signsInPerPerson, type McpOAuthSettings, type McpServerConfig } from './config'
import { McpAuthorizations, type McpAuthorizationsOptions, type OAuthServer } from './oauth/authorizations'
import { McpServerConnection, type McpConnectionOptions } from './connection'
import { McpPerUserServer } from './per-user'
import type { McpAppChannel } from './app-calls'
import { mcpTarget, type McpCredentialConsents } from './consents'
import type { ToolCredentials } from '../tool-types'
import type { McpServerOrigin, McpServerStatus } from '../../../../shared/types/tool'

/** A server to run, and who configured it. */
export interface McpServerEntry {
  config: McpServerConfig
  origin: McpServerOrigin
}

/** One server as it runs: a shared connection, or one connection per person. */
type McpServerHandle = McpServerConnection | McpPerUserServer

interface Running {
  connection: McpServerHandle
  origin: McpServerOrigin
  /** The config as given (placeholders unfilled), to tell whether it changed. */
  config: McpServerConfig
}

/** What the set needs besides each server's connection options. */
export interface McpServersOptions extends McpConnectionOptions {
  /** The operator's server-wide credentials: placeholders they fill make one shared connection. */
  serverCredentials?: ToolCredentials
  /** How long a person's own connection stays open unused. */
  userConnectionIdleMs?: number
  /** The clock idle connections are measured by (tests move it). */
  now?: () => number
  /**
   * Where people's OAuth authorisations with servers configured with `oauth` are kept; the set
   * makes its `authorizations` from it (it tells them which servers sign in, they tell it when a
   * person's grant changed). Without it such servers cannot be used.
   */
  oauth?: Omit<McpAuthorizationsOptions, 'servers' | 'onChange'>
  /** People's consents to send their credentials to an admin's server (consents.ts); without it none is asked. */
  consents?: McpCredentialConsents
}

/** Longest a page or a job waits for a per-person server to list its tools the first time. */
const DISCOVERY_WAIT_MS = 5_000

export class McpServers {
  private running = new Map<string, Running>()
  private closed = false
  /** Applies run one after another: an admin's quick second edit waits for the first. */
  private applying: Promise<void> = Promise.resolve()

  /** People's OAuth authorisations with this set's servers (when `options.oauth` is given). */
  readonly authorizations: McpAuthorizations | undefined
  private readonly options: McpServersOptions & { authorizations?: McpAuthorizations }

  constructor(options: McpServersOptions) {
    this.authorizations = options.oauth
      ? new McpAuthorizations({ ...options.oauth, servers: () => this.oauthServers(), onChange: (userId, server) => this.authorizationChanged(userId, server) })
      : undefined
    this.options = { ...options, authorizations: this.authorizations }
  }

  /**
   * The handle for `config`: shared unless it names credentials that only people have. An admin's
   * server gets a person's credentials only with their consent to its address.
   */
  private open(config: McpServerConfig, origin: McpServerOrigin): McpServerHandle {
    const needs = credentialPlaceholders(config)
    const server = this.options.serverCredentials
    const { consents } = this.options
    const target = mcpTarget(config)
    const consented = origin === 'admin' && consents ? (userId: string) => consents.allowed(userId, config.name, target, needs) : undefined
    if (signsInPerPerson(config)) return new McpPerUserServer(config, needs, { ...this.options, idleMs: this.options.userConnectionIdleMs ?? 600_000, consented })
    // Signed in as the app itself (client_credentials): every connection to it carries the app's token, which the SDK gets and renews.
    const oauth = oauthOf(config)
    const options = oauth ? { ...this.options, auth: { authProvider: machineSignIn(oauth) } } : this.options
    if (needs.length === 0) return new McpServerConnection(config, options)
    const serverWide = (need: string) => server?.get(...(need.split('/') as [string, string])) !== undefined
    if (needs.every(serverWide)) return new McpServerConnection(fillCredentials(config, (service, key) => server!.get(service, key)), options)
    return new McpPerUserServer(config, needs, { ...options, idleMs: this.options.userConnectionIdleMs ?? 600_000, consented })
  }

  /** The admin's running servers that would send a person's own credentials, with where to and which. */
  consentServers(): Array<{ name: string, target: string, needs: string[] }> {
    return [...this.running.values()].flatMap(({ connection, origin, config }) =>
      origin === 'admin' && connection instanceof McpPerUserServer && connection.needs.length > 0 && config.enabled ? [{ name: config.name, target: mcpTarget(config), needs: [...connection.needs] }] : [])
  }

  /** `userId`'s consent to `server` changed: their connection is opened again on next use. */
  consentChanged(userId: string, server: string): void {
    this.authorizationChanged(userId, server)
  }

  /** The running servers each person authorises with OAuth. */
  oauthServers(): OAuthServer[] {
    return [...this.running.values()].flatMap(({ config }) => {
      const oauth = oauthOf(config)
      if (!oauth || !signsInPerPerson(config) || config.transport !== 'http' || !config.enabled) return []
      const { scope, clientId, clientSecret, tokenEndpointAuthMethod, issuer, clientMetadataUrl } = oauth
      return [{
        name: config.name,
        url: config.url,
        ...(scope ? { scope } : {}),
        ...(clientId ? { client: { clientId, ...(clientSecret ? { clientSecret } : {}), ...(tokenEndpointAuthMethod ? { tokenEndpointAuthMethod } : {}), ...(issuer ? { issuer } : {}) } } : {}),
        ...(clientMetadataUrl ? { clientMetadataUrl } : {}),
      }]
    })
  }

  /** `userId`'s authorisation with `server` changed: their connection is opened again on next use. */
  authorizationChanged(userId: string, server: string): void {
    const connection = this.get(server)
    if (connection instanceof McpPerUserServer) connection.forget(userId)
    this.options.onStateChange?.()
  }

  /** Why `userId` cannot use each OAuth server's tools yet (by server name). */
  async authorizationNotes(userId: string): Promise<Map<string, string>> {
    const notes = new Map<string, string>()
    await Promise.all([...this.running.values()].map(async ({ connection }) => {
      if (!(connection instanceof McpPerUserServer)) return
      const needed = await connection.authorizationNeeded(userId)
      if (needed) notes.set(connection.config.name, needed.reason === 'connect' ? `Connect your account for "${needed.server}" in Settings → Connections.` : `Your authorisation for "${needed.server}" expired or was revoked: re-authorise it in Settings → Connections.`)
    }))
    return notes
  }

  /**
   * Lets per-person servers that know no tools yet list them through `userId`'s connection (when
   * they have the credentials), waiting a few seconds at most.
   */
  async discoverFor(userId: string, credentials: ToolCredentials): Promise<void> {
    const pending = [...this.running.values()].flatMap(({ connection }) => connection instanceof McpPerUserServer ? [connection.discoverFor(userId, credentials).catch(() => {})] : [])
    if (pending.length === 0) return
    let timer: ReturnType<typeof setTimeout> | undefined
    await Promise.race([Promise.all(pending), new Promise<void>((resolve) => {
      timer = setTimeout(resolve, DISCOVERY_WAIT_MS)
      timer.unref?.()
    })])
    clearTimeout(timer)
  }

  /**
   * Runs exactly `entries` (in their order): new servers start connecting, removed ones close,
   * those whose config changed close and start again; the rest are left as they are.
   */
  apply(entries: readonly McpServerEntry[]): Promise<void> {
    const next = this.applying.then(() => this.applyNow(entries))
    this.applying = next.catch(() => {})
    return next
  }

  private async applyNow(entries: readonly McpServerEntry[]): Promise<void> {
    if (this.closed) return
    const previous = this.running
    const running = new Map<string, Running>()
    const stopping: Array<Promise<void>> = []
    const starting: McpServerHandle[] = []
    for (const { config, origin } of entries) {
      const current = previous.get(config.name)
      if (current && isDeepStrictEqual(current.config, config)) {
        running.set(config.name, { connection: current.connection, origin, config })
        continue
      }
      if (current) stopping.push(current.connection.close())
      const connection = this.open(config, origin)
      running.set(config.name, { connection, origin, config })
      starting.push(connection)
    }
    for (const [name, { connection }] of previous) if (!running.has(name)) stopping.push(connection.close())
    this.running = running
    // A replaced server's tools are withdrawn before its new connection registers them again.
    await Promise.all(stopping)
    for (const connection of starting) connection.start()
    if (stopping.length > 0 || starting.length > 0) this.options.onStateChange?.()
  }

  /** Each server's state, in the order given. */
  statuses(): McpServerStatus[] {
    return [...this.running.values()].map(({ connection, origin }) => ({ ...connection.status(), origin }))
  }

  /** The running server of that name. */
  get(name: string): McpServerHandle | undefined {
    return this.running.get(name)?.connection
  }

  /** How an MCP App of the server of that name reads its page and calls its tools for a person (through their own connection where they have one). */
  appChannel(name: string): McpAppChannel | undefined {
    const connection = this.get(name)
    if (!connection) return undefined
    if (connection instanceof McpPerUserServer) return connection
    return {
      readResource: (uri, context) => connection.readResource(uri, context.signal),
      call: (tool, args, context) => connection.call(tool, args, { signal: context.signal }),
    }
  }

  /** Who configured the server of that name, if it runs. */
  originOf(name: string): McpServerOrigin | undefined {
    return this.running.get(name)?.origin
  }

  /** Closes every session and stops every child; later applies do nothing. */
  async close(): Promise<void> {
    this.closed = true
    await this.applying
    const running = [...this.running.values()]
    this.running = new Map()
    await Promise.all(running.map(({ connection }) => connection.close()))
  }
}

/** The SDK's provider for a server the app signs in to as itself (`client_credentials`, with a secret or a signed assertion). */
function machineSignIn(oauth: McpOAuthSettings): OAuthClientProvider {
  const common = { clientId: oauth.clientId!, clientName: 'or3-chat', ...(oauth.scope ? { scope: oauth.scope } : {}), ...(oauth.issuer ? { expectedIssuer: oauth.issuer } : {}) }
  return oauth.privateKey
    ? new PrivateKeyJwtProvider({ ...common, privateKey: oauth.privateKey, algorithm: oauth.signingAlgorithm ?? 'RS256' })
    : new ClientCredentialsProvider({ ...common, clientSecret: oauth.clientSecret! })
}
