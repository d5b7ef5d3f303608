/**
 * A local OAuth-protected MCP server for tests: an authorization server (dynamic client
 * registration, authorization code with PKCE S256, refresh tokens that rotate, reuse detection)
 * and, on the same origin, an MCP resource server guarded by the SDK's own resource-server
 * helpers (`requireBearerAuth`, `oauthMetadataResponse`, `createMcpHandler`). Its `whoami` tool
 * says whose grant the call's token belongs to.
 *
 * The authorization endpoint approves at once (no login page) as `approveAs` (default "alice"), so
 * a test plays the browser by following the authorization URL to its redirect.
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createMcpHandler, McpServer, OAuthError, OAuthErrorCode, oauthMetadataResponse, requireBearerAuth } from '@modelcontextprotocol/server'

interface AccessToken { user: string, clientId: string, expiresAt: number, resource: string, scopes: string[] }
interface RefreshToken { user: string, clientId: string, used: boolean, family: string, scopes: string[] }

export interface OAuthMcpServer {
  /** The MCP endpoint (`…/mcp`). */
  url: string
  issuer: string
  /** Counts of what the authorization server did. */
  stats: { registrations: number, authorizations: number, codeExchanges: number, refreshes: number, refreshReuse: number, rejectedCalls: number }
  /** Who the next authorization approves. */
  approveAs: (user: string) => void
  /** Access tokens issued from now on live this long. */
  setAccessTokenTtl: (seconds: number) => void
  /** Every access token issued so far stops working (as if they expired). */
  expireAccessTokens: () => void
  /** Every refresh token issued so far is revoked (a refresh gets invalid_grant). */
  revokeRefreshTokens: () => void
  /** Token requests wait this long before answering (to make parallel refreshes overlap). */
  setTokenDelay: (ms: number) => void
  /** MCP requests need this scope from now on (403 insufficient_scope naming it otherwise); undefined: none. */
  requireScope: (scope: string | undefined) => void
  /** The scope each authorization asked for, in order. */
  askedScopes: Array<string | null>
  close: () => Promise<void>
}

function base64url(bytes: Buffer): string {
  return bytes.toString('base64url')
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks)
}

function json(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store' })
  response.end(JSON.stringify(body))
}

async function sendWeb(response: ServerResponse, answer: Response): Promise<void> {
  response.writeHead(answer.status, Object.fromEntries(answer.headers))
  if (!answer.body) {
    response.end()
    return
  }
  for await (const chunk of answer.body as unknown as AsyncIterable<Uint8Array>) response.write(chunk)
  response.end()
}

export async function startOAuthMcpServer(options: { accessTokenTtlSeconds?: number } = {}): Promise<OAuthMcpServer> {
  const clients = new Map<string, { redirectUris: string[] }>()
  const codes = new Map<string, { user: string, clientId: string, challenge: string, redirectUri: string, resource: string, scopes: string[] }>()
  let requiredScope: string | undefined
  const askedScopes: Array<string | null> = []
  const accessTokens = new Map<string, AccessToken>()
  const refreshTokens = new Map<string, RefreshToken>()
  const stats = { registrations: 0, authorizations: 0, codeExchanges: 0, refreshes: 0, refreshReuse: 0, rejectedCalls: 0 }
  let approveAs = 'alice'
  let ttlSeconds = options.accessTokenTtlSeconds ?? 3_600
  let tokenDelayMs = 0

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      if (!response.headersSent) json(response, 500, { error: 'server_error', error_description: String(error) })
      else response.end()
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const mcpUrl = new URL('/mcp', origin)

  const metadata = {
    issuer: origin,
    authorization_endpoint: `${origin}/authorize`,
    token_endpoint: `${origin}/token`,
    registration_endpoint: `${origin}/register`,
    response_types_supported: ['code'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: ['none'],
    scopes_supported: ['tools'],
  }
  const metadataOptions = { oauthMetadata: metadata, resourceServerUrl: mcpUrl, scopesSupported: ['tools'], resourceName: 'OAuth fixture', dangerouslyAllowInsecureIssuerUrl: true }
  const gateOptions: Parameters<typeof requireBearerAuth>[0] = {
    resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
    verifier: {
      async verifyAccessToken(token) {
        const known = accessTokens.get(token)
        if (!known || known.expiresAt <= Date.now()) {
          stats.rejectedCalls++
          throw new OAuthError(OAuthErrorCode.InvalidToken, 'The access token is unknown or expired')
        }
        return { token, clientId: known.clientId, scopes: known.scopes, expiresAt: Math.floor(known.expiresAt / 1000), resource: new URL(known.resource), extra: { user: known.user } }
      },
    },
  }
  const gate = requireBearerAuth(gateOptions)
  const mcp = createMcpHandler(() => {
    const server = new McpServer({ name: 'oauth-fixture', version: '1.0.0' })
    server.registerTool('whoami', { description: 'Says whose authorisation this call carries.', annotations: { readOnlyHint: true } }, async (context) => {
      const user = (context.http?.authInfo?.extra as { user?: string } | undefined)?.user ?? '(nobody)'
      return { content: [{ type: 'text', text: `authorised as ${user}` }] }
    })
    return server
  })

  function issueTokens(user: string, clientId: string, resource: string, family = base64url(randomBytes(8)), scopes = ['tools']) {
    const access = base64url(randomBytes(24))
    const refresh = base64url(randomBytes(24))
    accessTokens.set(access, { user, clientId, expiresAt: Date.now() + ttlSeconds * 1000, resource, scopes })
    refreshTokens.set(refresh, { user, clientId, used: false, family, scopes })
    return { access_token: access, token_type: 'Bearer', expires_in: ttlSeconds, refresh_token: refresh, scope: scopes.join(' ') }
  }

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', origin)
    const body = await readBody(request)
    const web = new Request(url, { method: request.method, headers: request.headers as Record<string, string>, ...(body.length > 0 ? { body: new Uint8Array(body) } : {}) })
    const discovery = oauthMetadataResponse(web, metadataOptions)
    if (discovery) return sendWeb(response, discovery)

    if (url.pathname === '/register' && request.method === 'POST') {
      const registration = JSON.parse(body.toString('utf8')) as { redirect_uris?: string[] }
      const clientId = `client-${base64url(randomBytes(6))}`
      clients.set(clientId, { redirectUris: registration.redirect_uris ?? [] })
      stats.registrations++
      return json(response, 201, { ...registration, client_id: clientId, client_id_issued_at: Math.floor(Date.now() / 1000), token_endpoint_auth_method: 'none' })
    }
    if (url.pathname === '/authorize' && request.method === 'GET') {
      const query = url.searchParams
      const client = clients.get(query.get('client_id') ?? '')
      const redirectUri = query.get('redirect_uri') ?? ''
      if (!client || !client.redirectUris.includes(redirectUri)) return json(response, 400, { error: 'invalid_request', error_description: 'unknown client or redirect_uri' })
      if (query.get('code_challenge_method') !== 'S256' || !query.get('code_challenge')) return json(response, 400, { error: 'invalid_request', error_description: 'PKCE S256 required' })
      const code = base64url(randomBytes(16))
      askedScopes.push(query.get('scope'))
      codes.set(code, { user: approveAs, clientId: query.get('client_id')!, challenge: query.get('code_challenge')!, redirectUri, resource: query.get('resource') ?? mcpUrl.href, scopes: (query.get('scope') ?? 'tools').split(' ').filter(Boolean) })
      stats.authorizations++
      const target = new URL(redirectUri)
      target.searchParams.set('code', code)
      if (query.get('state')) target.searchParams.set('state', query.get('state')!)
      response.writeHead(302, { location: target.href })
      response.end()
      return
    }
    if (url.pathname === '/token' && request.method === 'POST') {
      if (tokenDelayMs > 0) await new Promise(resolve => setTimeout(resolve, tokenDelayMs))
      const form = new URLSearchParams(body.toString('utf8'))
      const clientId = form.get('client_id') ?? ''
      if (form.get('grant_type') === 'authorization_code') {
        const grant = codes.get(form.get('code') ?? '')
        codes.delete(form.get('code') ?? '')
        const challenge = base64url(createHash('sha256').update(form.get('code_verifier') ?? '').digest())
        if (!grant || grant.clientId !== clientId || grant.challenge !== challenge || grant.redirectUri !== form.get('redirect_uri')) {
          return json(response, 400, { error: 'invalid_grant', error_description: 'bad authorization code or verifier' })
        }
        stats.codeExchanges++
        return json(response, 200, issueTokens(grant.user, clientId, grant.resource, undefined, grant.scopes))
      }
      if (form.get('grant_type') === 'refresh_token') {
        const presented = form.get('refresh_token') ?? ''
        const known = refreshTokens.get(presented)
        if (!known || known.clientId !== clientId) return json(response, 400, { error: 'invalid_grant', error_description: 'unknown or revoked refresh token' })
        if (known.used) {
          // A rotated token presented again: the whole family is revoked (what real servers do).
          stats.refreshReuse++
          for (const [token, value] of refreshTokens) if (value.family === known.family) refreshTokens.delete(token)
          return json(response, 400, { error: 'invalid_grant', error_description: 'refresh token reuse detected' })
        }
        known.used = true
        stats.refreshes++
        return json(response, 200, issueTokens(known.user, clientId, form.get('resource') ?? mcpUrl.href, known.family, known.scopes))
      }
      return json(response, 400, { error: 'unsupported_grant_type' })
    }
    if (url.pathname === '/mcp') {
      const auth = await (requiredScope ? requireBearerAuth({ ...gateOptions, requiredScopes: [requiredScope] }) : gate)(web)
      if (auth instanceof Response) return sendWeb(response, auth)
      return sendWeb(response, await mcp.fetch(web, { authInfo: auth }))
    }
    json(response, 404, { error: 'not_found' })
  }

  return {
    url: mcpUrl.href,
    issuer: origin,
    stats,
    approveAs: (user) => {
      approveAs = user
    },
    setAccessTokenTtl: (seconds) => {
      ttlSeconds = seconds
    },
    expireAccessTokens: () => {
      for (const token of accessTokens.values()) token.expiresAt = 0
    },
    revokeRefreshTokens: () => refreshTokens.clear(),
    requireScope: (scope) => {
      requiredScope = scope
    },
    askedScopes,
    setTokenDelay: (ms) => {
      tokenDelayMs = ms
    },
    close: async () => {
      await mcp.close()
      server.closeAllConnections()
      await new Promise<void>(resolve => server.close(() => resolve()))
    },
  }
}
