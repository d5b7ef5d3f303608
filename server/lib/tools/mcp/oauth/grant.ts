/**
 * One person's authorisation with one OAuth-protected MCP server (a "grant"): the client the app
 * registered with the authorization server, what discovery found, the tokens, and an
 * authorisation under way. Kept sealed in the store; `GrantProvider` lets the MCP SDK's `auth()`
 * read and fill one in memory, and the caller saves it afterwards.
 */
import type {
  OAuthClientMetadata,
  OAuthClientProvider,
  OAuthDiscoveryState,
  StoredOAuthClientInformation,
  StoredOAuthTokens,
} from '@modelcontextprotocol/client'

export interface McpOAuthGrant {
  /** `connected` once tokens were obtained; `reauthorize` after a refresh was refused; `none` before. */
  status: 'none' | 'connected' | 'reauthorize'
  /** The app's callback URL this grant's client was registered with. */
  redirectUrl?: string
  client?: StoredOAuthClientInformation
  discovery?: OAuthDiscoveryState
  /** The resource indicator (RFC 8707) tokens are asked for. */
  resource?: string
  tokens?: StoredOAuthTokens
  /** When the access token expires (ms since the epoch); absent when the server did not say. */
  expiresAt?: number
  /** An authorisation started from Settings and not finished yet. */
  pending?: { state: string, verifier?: string, startedAt: number }
  connectedAt?: number
  /** Why it needs re-authorising, or why the last attempt failed (shown in Settings). */
  problem?: string
  /** The scope the last authorisation asked for. */
  scope?: string
  /** The server uses the 2025-03-26 layout whose metadata names another issuer on its own origin (accepted for it). */
  legacyIssuer?: boolean
  /** The wider scope the server asked for since ("insufficient scope"): the next authorisation asks for it. */
  requiredScope?: string
}

/** A client registered beforehand with the authorization server (from the server's config, never stored in a grant). */
export interface PreRegisteredClient {
  clientId: string
  clientSecret?: string
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'none'
  /** The authorization server it belongs to: the SDK sends its secret to no other. */
  issuer?: string
}

/** A pre-registered client as the SDK reads client information. */
export function preRegisteredInformation(client: PreRegisteredClient): StoredOAuthClientInformation {
  return {
    client_id: client.clientId,
    ...(client.clientSecret ? { client_secret: client.clientSecret } : {}),
    ...(client.tokenEndpointAuthMethod ? { token_endpoint_auth_method: client.tokenEndpointAuthMethod } : {}),
    ...(client.issuer ? { issuer: client.issuer } : {}),
  } as StoredOAuthClientInformation
}

/** What the app tells authorization servers about itself when it registers (RFC 7591). */
export function clientMetadataFor(redirectUrl: string, scope: string | undefined): OAuthClientMetadata {
  return {
    client_name: 'or3-chat',
    redirect_uris: [redirectUrl],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(scope ? { scope } : {}),
  }
}

/** The SDK's view of a grant during one `auth()` call: reads from it and writes into it. */
export class GrantProvider implements OAuthClientProvider {
  /** Where `auth()` asked to send the person, when it did. */
  authorizationUrl: URL | undefined

  constructor(
    readonly grant: McpOAuthGrant,
    private readonly options: {
      redirectUrl: string
      scope?: string
      state?: string
      now: () => number
      /** Hide stored tokens (starting a new authorisation, not refreshing). */
      ignoreTokens?: boolean
      /** A client registered beforehand: used instead of registering. */
      client?: PreRegisteredClient
      /** This app's client ID metadata document, for authorization servers that take a URL as the client id. */
      clientMetadataUrl?: string
    },
  ) {}

  get clientMetadataUrl(): string | undefined {
    return this.options.client ? undefined : this.options.clientMetadataUrl
  }

  get redirectUrl(): string {
    return this.options.redirectUrl
  }

  get clientMetadata(): OAuthClientMetadata {
    return clientMetadataFor(this.options.redirectUrl, this.options.scope)
  }

  state(): string {
    if (!this.options.state) throw new Error('No authorisation state was prepared')
    return this.options.state
  }

  clientInformation(): StoredOAuthClientInformation | undefined {
    return this.options.client ? preRegisteredInformation(this.options.client) : this.grant.client
  }

  saveClientInformation(client: StoredOAuthClientInformation): void {
    // A pre-registered client's secret stays in the config, not in every person's grant.
    if (!this.options.client) this.grant.client = client
  }

  tokens(): StoredOAuthTokens | undefined {
    return this.options.ignoreTokens ? undefined : this.grant.tokens
  }

  saveTokens(tokens: StoredOAuthTokens): void {
    this.grant.tokens = tokens
    this.grant.expiresAt = typeof tokens.expires_in === 'number' ? this.options.now() + tokens.expires_in * 1000 : undefined
  }

  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url
  }

  saveCodeVerifier(verifier: string): void {
    if (this.grant.pending) this.grant.pending.verifier = verifier
  }

  codeVerifier(): string {
    const verifier = this.grant.pending?.verifier
    if (!verifier) throw new Error('No authorisation is under way')
    return verifier
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.grant.discovery = state
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.grant.discovery
  }

  saveResourceUrl(resource: string): void {
    this.grant.resource = resource
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    if (scope === 'all' || scope === 'client') this.grant.client = undefined
    if (scope === 'all' || scope === 'tokens') this.grant.tokens = undefined
    if (scope === 'all' || scope === 'discovery') this.grant.discovery = undefined
  }
}

