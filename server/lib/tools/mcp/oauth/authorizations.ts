/**
 * People's authorisations with OAuth-protected MCP servers (Streamable HTTP servers configured
 * with `oauth`). A person connects from Settings: `begin` registers the app with the server's
 * authorization server when needed (dynamic client registration) and returns where to send the
 * browser; the authorization server sends it back to `/api/mcp-oauth/callback`, where `complete`
 * exchanges the code (PKCE) for tokens. The MCP SDK's `auth()` does discovery, registration and
 * both legs; this module keeps each grant sealed in the store (AES-256-GCM, key derived from the
 * server secret), per person and server, never returned to the browser and deleted with the
 * person.
 *
 * Calls get a valid access token from `accessToken`: one refreshed shortly before it expires (or
 * after the server rejected it), **one refresh at a time per person and server**: parallel calls
 * in this process share one refresh, and a lock in the store makes other instances wait and use
 * the tokens the holder saved, so a refresh token that rotates is never presented twice. A refresh
 * the authorization server refuses (`invalid_grant`: expired or revoked) marks the grant
 * "re-authorise"; calls then end with a message saying so and Settings offers the button. A
 * refresh that fails for another reason (the server unreachable) keeps the grant and fails only
 * that call.
 */
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto'
import { auth, computeScopeUnion, extractWWWAuthenticateParams, IssuerMismatchError, OAuthError, OAuthErrorCode, refreshAuthorization, type AuthProvider, type FetchLike, type OAuthClientMetadata } from '@modelcontextprotocol/client'
import { LRUCache } from 'lru-cache'
import type { SecretBox } from '../../../security/secret-box'
import { clientMetadataFor, GrantProvider, preRegisteredInformation, type McpOAuthGrant, type PreRegisteredClient } from './grant'
import type { McpAuthorization } from '../../../../../shared/types/credentials'
import { authorizationRequired, describeOAuthError, MAX_PROBLEM_CHARS, McpAuthorizationRequired, McpOAuthFlowError } from './errors'
import { grantKey, SealedGrants } from './sealed-grants'
import { isLegacyMetadataLayout, readChallenge } from './discovery'
import type { SettingsStore } from '../../../stores/settings/settings-store'


/** An OAuth-protected server as this module needs it. */
export interface OAuthServer {
  name: string
  url: string
  /** The operator's choice of scopes; without it, what the server's challenge names, else its metadata's `scopes_supported`. */
  scope?: string
  /** A client registered beforehand (no dynamic registration). */
  client?: PreRegisteredClient
  /** This app's client ID metadata document (https), for authorization servers that take a URL as the client id. */
  clientMetadataUrl?: string
}

export interface McpAuthorizationsOptions {
  /** Grants are sealed settings; a refresh holds a lock. */
  store: SettingsStore
  secretBox: SecretBox
  /** The OAuth-protected servers configured now. */
  servers: () => OAuthServer[]
  /** Told when a person's grant changed (connected, re-authorise, disconnected), so their connection is opened again. */
  onChange?: (userId: string, server: string) => void
  logger: { info: (message: string) => void, warn: (message: string) => void }
  now?: () => number
  fetchFn?: FetchLike
}

/** Where the authorization server sends the browser back to. */
export const OAUTH_CALLBACK_PATH = '/api/mcp-oauth/callback'
/** Where the app serves its client ID metadata document. */
export const CLIENT_METADATA_PATH = '/api/mcp-oauth/client-metadata.json'

/** A token this close to expiring is refreshed before it is used. */
const EXPIRY_SKEW_MS = 60_000
/** How long an authorisation started in Settings may take. */
const PENDING_TTL_MS = 10 * 60_000
/** The refresh lock outlives a holder that died mid-refresh by this much at most. */
const LOCK_TTL_MS = 30_000
/** How long a call waits for another instance's refresh before giving up. */
const LOCK_WAIT_MS = 15_000
const LOCK_POLL_MS = 100


function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a)
  const right = Buffer.from(b)
  return left.length === right.length && timingSafeEqual(left, right)
}

/** Refusals that mean the grant itself is gone: only a new authorisation helps. */
const GRANT_REFUSALS: ReadonlySet<string> = new Set([OAuthErrorCode.InvalidGrant, OAuthErrorCode.InvalidClient, OAuthErrorCode.UnauthorizedClient])

export class McpAuthorizations {
  /** Access tokens this process may use without reading the store: until shortly before they expire. */
  private readonly tokens = new LRUCache<string, { token: string, expiresAt: number }>({ max: 10_000 })
  /** Refreshes under way in this process, by person and server. */
  private readonly refreshing = new Map<string, Promise<string>>()
  /** Counters for the health of the feature (and tests). */
  readonly stats = { refreshes: 0, refreshWaits: 0 }

  /** Each person's grant per server, sealed in the settings store. */
  private readonly grants: SealedGrants

  constructor(private readonly options: McpAuthorizationsOptions) {
    this.grants = new SealedGrants(options.store, options.secretBox)
  }

  private now(): number {
    return (this.options.now ?? Date.now)()
  }

  private server(name: string): OAuthServer | undefined {
    return this.options.servers().find(server => server.name === name)
  }

  /**
   * This app's client ID metadata document as served from `appOrigin`: its own URL is the client
   * id, the callback there is its one redirect URI, and it is a public client (PKCE, no secret).
   */
  clientMetadataDocument(appOrigin: string): OAuthClientMetadata & { client_id: string } {
    return { client_id: new URL(CLIENT_METADATA_PATH, appOrigin).href, ...clientMetadataFor(new URL(OAUTH_CALLBACK_PATH, appOrigin).href, undefined) }
  }

  /** Each OAuth-protected server and where `userId` stands with it. */
  async list(userId: string): Promise<McpAuthorization[]> {
    return Promise.all(this.options.servers().map(async ({ name }) => this.describeGrant(name, await this.grants.read(userId, name))))
  }

  /** What `userId` must do before a call to `server` goes out (connect, re-authorise), or undefined when nothing. */
  async required(userId: string, server: string): Promise<McpAuthorizationRequired | undefined> {
    const grant = await this.grants.read(userId, server)
    return grant?.status === 'connected' && grant.tokens ? undefined : authorizationRequired(server, grant)
  }

  private describeGrant(server: string, grant: McpOAuthGrant | undefined): McpAuthorization {
    const state = grant?.status === 'connected' && grant.tokens ? 'connected' : grant?.status === 'reauthorize' ? 'reauthorize' : 'not-connected'
    return {
      server,
      state,
      ...(grant?.connectedAt ? { connectedAt: grant.connectedAt } : {}),
      ...(grant?.problem ? { problem: grant.problem } : {}),
      ...(state === 'reauthorize' && grant?.requiredScope ? { scope: grant.requiredScope } : {}),
    }
  }

  /**
   * Starts `userId`'s authorisation with `serverName`: returns the authorization server's URL to
   * send the browser to. `appOrigin` is this app's origin as the browser reached it (the callback
   * goes there).
   */
  async begin(userId: string, serverName: string, appOrigin: string): Promise<URL> {
    const server = this.server(serverName)
    if (!server) throw new McpOAuthFlowError(404, `There is no MCP server "${serverName}" that signs in with OAuth.`)
    const redirectUrl = new URL(OAUTH_CALLBACK_PATH, appOrigin).href
    const grant: McpOAuthGrant = (await this.grants.read(userId, serverName)) ?? { status: 'none' }
    // A client registered for another callback (the app moved) is registered again.
    if (grant.redirectUrl !== redirectUrl) {
      grant.client = undefined
      grant.redirectUrl = redirectUrl
    }
    const state = `${serverName}.${randomBytes(24).toString('base64url')}`
    grant.pending = { state, startedAt: this.now() }
    // Discovery runs again (the server may have moved its authorization server since).
    grant.discovery = undefined
    grant.legacyIssuer = undefined
    // What the server says when asked without a token: where its metadata is, which scopes it wants.
    const challenge = await readChallenge(server.url, this.options.fetchFn ?? fetch)
    const scope = computeScopeUnion(grant.requiredScope, server.scope ?? challenge.scope)
    const provider = new GrantProvider(grant, { redirectUrl, scope, state, now: () => this.now(), ignoreTokens: true, client: server.client, clientMetadataUrl: server.clientMetadataUrl })
    const start = () => auth(provider, { serverUrl: server.url, scope, resourceMetadataUrl: challenge.resourceMetadataUrl, fetchFn: this.options.fetchFn, skipIssuerMetadataValidation: grant.legacyIssuer })
    try {
      await start().catch(async (error: unknown) => {
        if (!isLegacyMetadataLayout(error, server.url)) throw error
        // The 2025-03-26 layout: no protected-resource metadata, the server's own origin is its
        // authorization server, and its metadata names an issuer with a path. That spec did not
        // check the issuer; the metadata still comes from the server's own origin.
        this.options.logger.warn(`MCP server "${serverName}" uses the 2025-03-26 authorization layout (its metadata names the issuer ${(error as IssuerMismatchError).received}); accepted for its own origin.`)
        grant.legacyIssuer = true
        await start()
      })
    } catch (error) {
      throw new McpOAuthFlowError(502, `Could not start the authorisation with MCP server "${serverName}": ${describeOAuthError(error)}`)
    }
    if (!provider.authorizationUrl) throw new McpOAuthFlowError(502, `MCP server "${serverName}" did not ask for an authorisation.`)
    // The scope actually asked for (the SDK picks the metadata's scopes_supported when none was given).
    grant.scope = provider.authorizationUrl.searchParams.get('scope') ?? undefined
    await this.grants.write(userId, serverName, grant)
    return provider.authorizationUrl
  }

  /**
   * The server refused a call of `userId` for want of scope (403 `insufficient_scope`): their
   * grant is marked "re-authorise" with the wider scope (what they granted plus what the server
   * named), so their calls stop until they authorise again from Settings, which asks for it.
   */
  async needsMoreScope(userId: string, server: string, challenged: string | undefined): Promise<void> {
    const grant = await this.grants.read(userId, server)
    if (grant?.status !== 'connected') return
    const requiredScope = computeScopeUnion(grant.tokens?.scope ?? grant.scope, challenged)
    const problem = `the server needs more access${challenged ? ` (scope "${challenged.slice(0, 200)}")` : ''}`
    await this.grants.write(userId, server, { ...grant, status: 'reauthorize', tokens: undefined, expiresAt: undefined, problem, ...(requiredScope ? { requiredScope } : {}) })
    this.tokens.delete(grantKey(userId, server))
    this.options.logger.warn(`MCP server "${server}": ${userId} needs to authorise more access (${problem}).`)
    this.options.onChange?.(userId, server)
  }

  /**
   * Finishes the authorisation the browser came back from (`/api/mcp-oauth/callback`): checks
   * the state against the one `userId` started, exchanges the code, saves the tokens. Returns
   * the server's name.
   */
  async complete(userId: string, query: { state?: string, code?: string, iss?: string, error?: string, error_description?: string }): Promise<string> {
    const serverName = query.state?.split('.')[0] ?? ''
    const server = this.server(serverName)
    const grant = server ? await this.grants.read(userId, serverName) : undefined
    const pending = grant?.pending
    if (!server || !grant || !pending || !query.state || !sameText(query.state, pending.state) || this.now() - pending.startedAt > PENDING_TTL_MS) {
      throw new McpOAuthFlowError(400, 'This authorisation is not (or no longer) the one you started. Start it again from Settings → Connections.')
    }
    grant.pending = undefined
    if (query.error || !query.code) {
      grant.problem = `The authorization server answered: ${(query.error_description || query.error || 'no code').slice(0, MAX_PROBLEM_CHARS)}`
      await this.grants.write(userId, serverName, grant)
      throw new McpOAuthFlowError(400, `MCP server "${serverName}" was not connected. ${grant.problem}.`)
    }
    const provider = new GrantProvider({ ...grant, pending }, { redirectUrl: grant.redirectUrl ?? '', scope: grant.scope, now: () => this.now(), client: server.client, clientMetadataUrl: server.clientMetadataUrl })
    try {
      await auth(provider, { serverUrl: server.url, authorizationCode: query.code, iss: query.iss, scope: grant.scope, resourceMetadataUrl: grant.discovery?.resourceMetadataUrl ? new URL(grant.discovery.resourceMetadataUrl) : undefined, fetchFn: this.options.fetchFn, skipIssuerMetadataValidation: grant.legacyIssuer })
    } catch (error) {
      grant.problem = `The code could not be exchanged: ${describeOAuthError(error)}`
      await this.grants.write(userId, serverName, grant)
      throw new McpOAuthFlowError(502, `MCP server "${serverName}" was not connected. ${grant.problem}.`)
    }
    const connected: McpOAuthGrant = { ...provider.grant, pending: undefined, status: 'connected', connectedAt: this.now(), problem: undefined, requiredScope: undefined }
    await this.grants.write(userId, serverName, connected)
    this.tokens.delete(grantKey(userId, serverName))
    this.options.logger.info(`MCP server "${serverName}" was authorised for ${userId}.`)
    this.options.onChange?.(userId, serverName)
    return serverName
  }

  /** Forgets `userId`'s authorisation with `server` (the tokens are deleted here; the authorization server is not told). */
  async disconnect(userId: string, server: string): Promise<void> {
    await this.grants.forget(userId, server)
    this.tokens.delete(grantKey(userId, server))
    this.options.onChange?.(userId, server)
  }

  /** Deletes every grant of `userId` (their account is being deleted). */
  async deleteUser(userId: string): Promise<void> {
    await this.grants.forgetUser(userId)
    for (const key of [...this.tokens.keys()]) if (key.startsWith(grantKey(userId, ''))) this.tokens.delete(key)
  }

  /**
   * How a connection of `userId` to `server` authenticates: the current access token before each
   * request, refreshed when needed. Its `fetch` remembers which token each request carried, so a
   * 401 refreshes only when the refused token is still the current one (parallel requests refused
   * together cause one refresh, and one that was refused after it found the new token already).
   */
  transportAuthFor(userId: string, server: string): { authProvider: AuthProvider, fetch: FetchLike } {
    const key = grantKey(userId, server)
    const carried = new WeakMap<Response, string>()
    const send = this.options.fetchFn ?? fetch
    return {
      fetch: async (url, init) => {
        const response = await send(url, init)
        const authorization = new Headers(init?.headers).get('authorization')
        if (authorization) carried.set(response, authorization.replace(/^\S+\s+/, ''))
        // Step-up: the server wants more scope than this person granted. Asking again needs them.
        if (response.status === 403) {
          const challenge = extractWWWAuthenticateParams(response)
          if (challenge.error === 'insufficient_scope') await this.needsMoreScope(userId, server, challenge.scope)
        }
        return response
      },
      authProvider: {
        token: () => this.accessToken(userId, server),
        onUnauthorized: async ({ response }) => {
          const refused = carried.get(response) ?? this.tokens.get(key)?.token
          this.tokens.delete(key)
          await this.refresh(userId, server, refused)
        },
      },
    }
  }

  /** A valid access token of `userId` for `server`; throws `McpAuthorizationRequired` when they must (re)authorise. */
  async accessToken(userId: string, server: string): Promise<string> {
    const key = grantKey(userId, server)
    const cached = this.tokens.get(key)
    if (cached && cached.expiresAt - EXPIRY_SKEW_MS > this.now()) return cached.token
    const grant = await this.grants.read(userId, server)
    const usable = this.usableToken(grant)
    if (usable) return this.remember(key, grant!, usable)
    if (grant?.status !== 'connected' || !grant.tokens) throw authorizationRequired(server, grant)
    return this.refresh(userId, server, grant.tokens.access_token)
  }

  /** The grant's access token when it is connected and not about to expire. */
  private usableToken(grant: McpOAuthGrant | undefined): string | undefined {
    if (grant?.status !== 'connected' || !grant.tokens) return undefined
    if (grant.expiresAt !== undefined && grant.expiresAt - EXPIRY_SKEW_MS <= this.now()) return undefined
    return grant.tokens.access_token
  }

  private remember(key: string, grant: McpOAuthGrant, token: string): string {
    // A token without a stated expiry is read from the store again after a minute.
    this.tokens.set(key, { token, expiresAt: grant.expiresAt ?? this.now() + 2 * EXPIRY_SKEW_MS })
    return token
  }

  /**
   * Replaces the access token `stale` (expiring, or refused by the server) with a fresh one: one
   * refresh at a time per person and server, in this process and across instances.
   */
  private refresh(userId: string, server: string, stale: string | undefined): Promise<string> {
    const key = grantKey(userId, server)
    const under = this.refreshing.get(key)
    if (under) return under
    const refresh = this.refreshUnderLock(userId, server, stale).finally(() => this.refreshing.delete(key))
    this.refreshing.set(key, refresh)
    return refresh
  }

  private async refreshUnderLock(userId: string, server: string, stale: string | undefined): Promise<string> {
    const key = grantKey(userId, server)
    const lock = `${key}:refresh`
    const owner = randomUUID()
    const { store } = this.options
    const giveUpAt = this.now() + LOCK_WAIT_MS
    // Another instance may be refreshing: wait for its tokens rather than present the same refresh token.
    while (!(await store.tryLock(lock, owner, LOCK_TTL_MS, this.now()))) {
      this.stats.refreshWaits++
      await new Promise(resolve => setTimeout(resolve, LOCK_POLL_MS))
      const grant = await this.grants.read(userId, server)
      const fresh = this.usableToken(grant)
      if (fresh && fresh !== stale) return this.remember(key, grant!, fresh)
      if (grant?.status !== 'connected') throw authorizationRequired(server, grant)
      if (this.now() > giveUpAt) throw new Error(`Refreshing the authorisation for MCP server "${server}" is taking too long; try again.`)
    }
    try {
      const grant = await this.grants.read(userId, server)
      if (grant?.status !== 'connected' || !grant.tokens) throw authorizationRequired(server, grant)
      // Refreshed meanwhile (by the holder we waited for, or just before us): use that.
      const fresh = this.usableToken(grant)
      if (fresh && fresh !== stale) return this.remember(key, grant, fresh)
      const { discovery, tokens } = grant
      const preRegistered = this.server(server)?.client
      const client = preRegistered ? preRegisteredInformation(preRegistered) : grant.client
      if (!tokens.refresh_token || !discovery || !client) return await this.needsReauthorizing(userId, server, grant, 'the server gave no refresh token')
      let next
      try {
        next = await refreshAuthorization(discovery.authorizationServerUrl, {
          metadata: discovery.authorizationServerMetadata,
          clientInformation: client,
          refreshToken: tokens.refresh_token,
          resource: grant.resource ? new URL(grant.resource) : undefined,
          fetchFn: this.options.fetchFn,
        })
      } catch (error) {
        if (error instanceof OAuthError && GRANT_REFUSALS.has(error.code)) return await this.needsReauthorizing(userId, server, grant, describeOAuthError(error))
        // Unreachable or a server error: the grant may still be good; only this call fails.
        throw new Error(`Could not refresh the authorisation for MCP server "${server}": ${describeOAuthError(error)}`)
      }
      this.stats.refreshes++
      const provider = new GrantProvider(grant, { redirectUrl: grant.redirectUrl ?? '', now: () => this.now() })
      provider.saveTokens({ ...next, issuer: tokens.issuer })
      grant.problem = undefined
      await this.grants.write(userId, server, grant)
      return this.remember(key, grant, next.access_token)
    } finally {
      await store.unlock(lock, owner).catch(() => {})
    }
  }

  private async needsReauthorizing(userId: string, server: string, grant: McpOAuthGrant, problem: string): Promise<never> {
    const refused: McpOAuthGrant = { ...grant, status: 'reauthorize', tokens: undefined, expiresAt: undefined, problem }
    await this.grants.write(userId, server, refused)
    this.tokens.delete(grantKey(userId, server))
    this.options.logger.warn(`MCP server "${server}": the authorisation of ${userId} needs renewing (${problem}).`)
    this.options.onChange?.(userId, server)
    throw new McpAuthorizationRequired(server, 'reauthorize', problem)
  }
}
