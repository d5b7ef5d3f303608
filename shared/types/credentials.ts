/** A credential service as Settings shows it: which tools need it, and which of its keys are set where (values are never sent back). */
export interface CredentialService {
  service: string
  /** Tools that declare they need it. */
  tools: string[]
  /** Each key: `mine` (set by this person), `group` (set by an admin for a group of theirs, `group` naming it), `everyone` (set by an admin for everyone), `server` (set server-wide by the operator), or null (not set). */
  keys: Array<{ key: string, set: 'mine' | 'group' | 'everyone' | 'server' | null, group?: string }>
}

/** A person's authorisation with an OAuth-protected MCP server, as Settings → Connections shows it (tokens never leave the server). */
export interface McpAuthorization {
  server: string
  /** `connected`; `not-connected` (never, or disconnected); `reauthorize` (a refresh was refused: the grant expired or was revoked). */
  state: 'connected' | 'not-connected' | 'reauthorize'
  /** When the person last authorised (ms since the epoch). */
  connectedAt?: number
  /** Why it needs re-authorising, or why the last attempt failed. */
  problem?: string
  /** The wider access the server asked for (`reauthorize` after "insufficient scope"): re-authorising asks for these scopes. */
  scope?: string
}

/** A person's consent to send their own credentials to an MCP server an admin added (Settings → Connections). */
export interface McpCredentialConsent {
  server: string
  /** Where the server sends them: its URL's origin, or its command. A new address asks again. */
  target: string
  /** The credentials (`service/key`) it would send. */
  credentials: string[]
  allowed: boolean
}
