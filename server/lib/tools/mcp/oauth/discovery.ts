/**
 * What the app reads from an MCP server before the SDK's discovery: the `WWW-Authenticate`
 * challenge of a request without a token (its resource metadata URL and scope), and whether an
 * issuer mismatch only means an authorization server on the same origin with the legacy layout.
 */
import { extractWWWAuthenticateParams, IssuerMismatchError, LATEST_PROTOCOL_VERSION, type FetchLike } from '@modelcontextprotocol/client'

/** Longest the unauthenticated first request (to read the server's challenge) may take. */
const CHALLENGE_TIMEOUT_MS = 10_000

/** An issuer mismatch of metadata found at the MCP server's own origin (the 2025-03-26 fallback), where accepting it is safe. */
export function isLegacyMetadataLayout(error: unknown, serverUrl: string): boolean {
  if (!(error instanceof IssuerMismatchError) || error.kind !== 'metadata' || !error.expected || !error.received) return false
  const origin = new URL(serverUrl).origin
  try {
    return new URL(error.expected).origin === origin && new URL(error.received).origin === origin
  } catch {
    return false
  }
}

/**
 * The server's answer to a request without a token: the `resource_metadata` URL and `scope` of
 * its `WWW-Authenticate` challenge (the MCP authorization spec has clients read these first).
 * A server that answers otherwise, or not in time, gives nothing: discovery falls back to the
 * well-known paths.
 */
export async function readChallenge(url: string, send: FetchLike): Promise<{ resourceMetadataUrl?: URL, scope?: string }> {
  try {
    const response = await send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'accept': 'application/json, text/event-stream', 'mcp-protocol-version': LATEST_PROTOCOL_VERSION },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'or3-chat', version: '1.0.0' } } }),
      signal: AbortSignal.timeout(CHALLENGE_TIMEOUT_MS),
      redirect: 'manual',
    })
    await response.body?.cancel().catch(() => {})
    if (response.status !== 401 && response.status !== 403) return {}
    const { resourceMetadataUrl, scope } = extractWWWAuthenticateParams(response)
    return { ...(resourceMetadataUrl ? { resourceMetadataUrl } : {}), ...(scope ? { scope } : {}) }
  } catch {
    return {}
  }
}
