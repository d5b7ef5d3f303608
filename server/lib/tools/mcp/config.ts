/**
 * The operator's MCP servers: a JSON or YAML file (`mcp.configFile`) in the shape most MCP
 * clients use, `{ "mcpServers": { "<name>": { … } } }`, validated at start-up with messages that
 * name the server and the field. A server is either a command run over stdio (`command`, `args`,
 * `env`, `cwd`) or a Streamable HTTP endpoint (`url`, `headers`). Users never supply commands:
 * only this file does.
 */
import { dirname, isAbsolute, resolve } from 'node:path'
import { readOperatorFile } from '../../config/operator-file'
import { z } from 'zod'

/** A server name: it prefixes its tools' names (`<server>__<tool>`), so it is short and plain. */
export const MCP_SERVER_NAME = /^[a-zA-Z0-9_-]{1,32}$/

const common = {
  /** Off: not connected, its tools not offered. */
  enabled: z.boolean().default(true),
  /** Longest a call waits without a reply or a progress notification (progress resets it). */
  timeoutMs: z.number().int().min(100).max(3_600_000).default(60_000),
  /** Longest a call may take whatever progress it reports. */
  maxTotalTimeoutMs: z.number().int().min(100).max(3_600_000).default(600_000),
  /** How often an idle connection is checked with an MCP ping, so a server that went away is noticed before a call (0: never; default 30 s). */
  pingIntervalMs: z.number().int().min(0).max(3_600_000).optional(),
  /** Only these of its tools are registered (default: all). */
  tools: z.array(z.string().min(1).max(128)).max(1_000).optional(),
  /** Offered only to members of these groups (Admin → Groups; admins too); default: everyone the tool policy lets. */
  groups: z.array(z.string().trim().min(1).max(64)).min(1).max(50).optional(),
}

const stdioServer = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().trim().min(1, 'must name the program to run, such as npx or node'),
  args: z.array(z.string().max(4_096)).max(200).default([]),
  /** The child's whole environment besides PATH: the server's own variables (its secrets) are never passed. */
  env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'), z.string().max(32_768)).default({}),
  cwd: z.string().min(1).optional(),
  ...common,
}).strict()

/**
 * How a server protected by OAuth is signed in to. By default each person connects their own
 * account (the authorization code flow, the app registering itself dynamically); a client
 * registered beforehand is given with `clientId` (and `clientSecret`); `client_credentials` signs
 * the app in as itself, one connection for everyone (machine to machine).
 */
const oauthSettings = z.object({
  /** Scopes to ask for; default: what the server's challenge names, else its metadata's `scopes_supported`, else none. */
  scope: z.string().trim().min(1).max(1_000).optional(),
  grant: z.enum(['authorization_code', 'client_credentials']).optional(),
  /** A client registered beforehand with the authorization server (for servers without dynamic registration). */
  clientId: z.string().trim().min(1).max(2_000).optional(),
  clientSecret: z.string().min(1).max(8_192).optional(),
  /** How the client authenticates at the token endpoint (default: what the authorization server supports). */
  tokenEndpointAuthMethod: z.enum(['client_secret_basic', 'client_secret_post', 'none']).optional(),
  /** The authorization server (its issuer) a client registered beforehand belongs to: its secret is sent to no other. */
  issuer: z.url({ protocol: /^https?$/ }).optional(),
  /** `client_credentials` with a signed assertion (private_key_jwt) instead of a secret: a PEM private key. */
  privateKey: z.string().min(1).max(16_384).optional(),
  signingAlgorithm: z.enum(['ES256', 'ES384', 'RS256', 'RS384', 'RS512', 'PS256', 'EdDSA']).optional(),
  /**
   * An https URL where this app's client ID metadata document is served (the app serves one at
   * /api/mcp-oauth/client-metadata.json): used as the client id by authorization servers that
   * support such documents, instead of registering.
   */
  clientMetadataUrl: z.url({ protocol: /^https$/, error: 'must be an https URL with a path, such as https://chat.example.com/api/mcp-oauth/client-metadata.json' }).optional(),
}).strict().superRefine((oauth, context) => {
  const problem = (path: string, message: string) => context.addIssue({ code: 'custom', path: [path], message })
  if (oauth.grant === 'client_credentials') {
    if (!oauth.clientId) problem('clientId', 'is needed for "client_credentials" (the client the authorization server knows this app as)')
    if (!oauth.clientSecret && !oauth.privateKey) problem('clientSecret', 'or "privateKey" is needed for "client_credentials"')
    if (oauth.clientMetadataUrl) problem('clientMetadataUrl', 'is for people\'s sign-in, not "client_credentials"')
  } else if (oauth.privateKey) {
    problem('privateKey', 'is only for "grant": "client_credentials"')
  }
  if ((oauth.clientSecret || oauth.tokenEndpointAuthMethod) && !oauth.clientId) problem('clientId', 'must be given with "clientSecret" or "tokenEndpointAuthMethod" (a client registered beforehand)')
})

/** A server's OAuth settings, as the config gives them. */
export type McpOAuthSettings = z.infer<typeof oauthSettings>

const httpServer = z.object({
  type: z.enum(['http', 'streamable-http', 'streamableHttp']).optional(),
  url: z.url({ protocol: /^https?$/, error: 'must be an http(s) URL such as http://localhost:3001/mcp' }),
  headers: z.record(z.string().regex(/^[!#$%&'*+.^`|~\w-]+$/, 'must be an HTTP header name'), z.string().max(8_192)).default({}),
  /**
   * The server is protected by OAuth: each person connects their own account in Settings and
   * calls carry their token (`true`, or the settings above).
   */
  oauth: z.union([z.boolean(), oauthSettings]).optional(),
  ...common,
}).strict().refine(server => !server.oauth || !Object.keys(server.headers).some(header => header.toLowerCase() === 'authorization'), {
  path: ['headers'],
  message: 'must not set Authorization on a server that uses "oauth" (each person\'s token is sent instead)',
})

const EITHER_KIND = 'must have either "command" (a program run over stdio) or "url" (a Streamable HTTP endpoint), with only the fields that kind takes'

/** One server as the file (or an admin's form) gives it, without its name. */
export const mcpServerSchema = z.union([stdioServer, httpServer], { error: EITHER_KIND })

/** One problem of a server entry: the field (empty for the entry itself) and what is wrong. */
export interface McpServerProblem {
  field: string[]
  message: string
}

/**
 * What is wrong with one server entry, field by field. zod reports a union that fits neither kind
 * as one generic issue; the entry's own `command` or `url` says which kind was meant, so that
 * kind's issues are the ones reported ("field "args": expected array, received string").
 */
export function mcpServerProblems(issues: readonly z.core.$ZodIssue[], entry: unknown): McpServerProblem[] {
  const fields = entry && typeof entry === 'object' ? entry as Record<string, unknown> : {}
  const meant = 'command' in fields && !('url' in fields) ? 0 : 'url' in fields && !('command' in fields) ? 1 : undefined
  return issues.flatMap((issue) => {
    if (issue.code === 'invalid_union' && issue.path.length === 0 && meant !== undefined && issue.errors[meant]?.length) {
      return issue.errors[meant]!.map(inner => ({ field: inner.path.map(String), message: inner.message }))
    }
    return [{ field: issue.path.map(String), message: issue.code === 'invalid_union' ? EITHER_KIND : issue.message }]
  })
}

export const mcpConfigSchema = z.object({
  mcpServers: z.record(z.string().regex(MCP_SERVER_NAME, 'server names are 1-32 letters, digits, "_" or "-"'), mcpServerSchema).default({}),
}).strict()

/** One configured server, as the connection uses it. */
export type McpServerConfig = { name: string } & (
  | ({ transport: 'stdio' } & Omit<z.infer<typeof stdioServer>, 'type'>)
  | ({ transport: 'http' } & Omit<z.infer<typeof httpServer>, 'type'>)
)

/** Raised for a config file that cannot be used; the message names the file, the server and the field. */
export class McpConfigError extends Error {
  override name = 'McpConfigError'
}

/** Validates a parsed config (from `source`, for messages) into the servers to connect. */
export function parseMcpConfig(raw: unknown, source: string): McpServerConfig[] {
  const parsed = mcpConfigSchema.safeParse(raw)
  if (!parsed.success) {
    const entries = (raw as { mcpServers?: Record<string, unknown> } | null)?.mcpServers ?? {}
    const problems = parsed.error.issues.flatMap((issue) => {
      const [root, server, ...rest] = issue.path.map(String)
      // zod reports a bad record key without the key schema's own message.
      if (issue.code === 'invalid_key' && root === 'mcpServers') return [`- ${issue.path.join('.')}: server names are 1-32 letters, digits, "_" or "-"`]
      if (root !== 'mcpServers' || server === undefined) return [`- ${issue.path.join('.') || 'the file'}: ${issue.message}`]
      return mcpServerProblems([{ ...issue, path: rest }], entries[server]).map(({ field, message }) => `- server "${server}"${field.length > 0 ? `, field "${field.join('.')}"` : ''}: ${message}`)
    })
    throw new McpConfigError(`Invalid MCP server config ${source}:\n${problems.join('\n')}`)
  }
  return Object.entries(parsed.data.mcpServers).map(([name, server]) => toMcpServerConfig(name, server))
}

/** A validated server entry as the connection uses it. */
export function toMcpServerConfig(name: string, server: z.infer<typeof mcpServerSchema>): McpServerConfig {
  const { type: _type, ...rest } = server
  return 'command' in rest ? { name, transport: 'stdio' as const, ...rest } : { name, transport: 'http' as const, ...rest }
}

/** A server config back in the file's shape (what `mcpServerSchema` reads). */
export function toMcpServerEntry(config: McpServerConfig): z.input<typeof mcpServerSchema> {
  const { name: _name, transport: _transport, ...rest } = config
  return rest
}

/**
 * Reads and validates the config file at `path` (`.yaml`/`.yml` as YAML, anything else as JSON).
 * A stdio server's relative paths mean the file's folder, wherever the app was started from.
 */
export function loadMcpConfigFile(path: string): McpServerConfig[] {
  const servers = parseMcpConfig(readOperatorFile(path, { name: 'MCP server config', variable: 'NUXT_MCP_CONFIG_FILE' }, message => new McpConfigError(message)), path)
  return servers.map(server => resolvePathsFrom(dirname(resolve(path)), server))
}

/** A relative path: `./x`, `../x` or `dir/x` (a bare name such as `npx` is looked up on PATH, and `-y` or `@scope/pkg` are not paths). */
function isRelativePath(value: string): boolean {
  return !isAbsolute(value) && /^\.{1,2}[/\\]/.test(value)
}

/**
 * A stdio server with its paths made absolute against `folder`: `cwd` (default: `folder` itself),
 * a `command` with a folder in it, and `args` that start with `./` or `../`.
 */
export function resolvePathsFrom(folder: string, config: McpServerConfig): McpServerConfig {
  if (config.transport !== 'stdio') return config
  const cwd = config.cwd === undefined ? folder : resolve(folder, config.cwd)
  // A command with a folder in it (`./bin/server`, `bin/server`) is a path; a bare name is looked up on PATH.
  const command = !isAbsolute(config.command) && /[/\\]/.test(config.command) ? resolve(folder, config.command) : config.command
  return { ...config, cwd, command, args: config.args.map(arg => (isRelativePath(arg) ? resolve(folder, arg) : arg)) }
}

/** The server's OAuth settings when it signs in with OAuth (each person, or the app itself), else undefined. */
export function oauthOf(config: McpServerConfig): McpOAuthSettings | undefined {
  if (config.transport !== 'http' || !config.oauth) return undefined
  return config.oauth === true ? {} : config.oauth
}

/** Whether each person connects their own account to it (OAuth other than `client_credentials`). */
export function signsInPerPerson(config: McpServerConfig): boolean {
  const oauth = oauthOf(config)
  return oauth !== undefined && oauth.grant !== 'client_credentials'
}

/** `${credentials:<service>/<key>}` in an env or header value: filled from the credentials of whoever the connection is for. */
const PLACEHOLDER = /\$\{credentials:([a-z0-9_-]{1,40})\/([a-z0-9_-]{1,40})\}/g

function secretValues(config: McpServerConfig): Record<string, string> {
  return config.transport === 'stdio' ? config.env : config.headers
}

/** The credentials a server's env or headers name (`service/key`), each once. */
export function credentialPlaceholders(config: McpServerConfig): string[] {
  const needs = new Set<string>()
  for (const value of Object.values(secretValues(config))) for (const match of value.matchAll(PLACEHOLDER)) needs.add(`${match[1]}/${match[2]}`)
  return [...needs]
}

/** The config with every placeholder replaced by its value from `lookup` (missing: empty). */
export function fillCredentials(config: McpServerConfig, lookup: (service: string, key: string) => string | undefined): McpServerConfig {
  const fill = (values: Record<string, string>) => Object.fromEntries(Object.entries(values).map(([name, value]) => [name, value.replace(PLACEHOLDER, (_match, service: string, key: string) => lookup(service, key) ?? '')]))
  return config.transport === 'stdio' ? { ...config, env: fill(config.env) } : { ...config, headers: fill(config.headers) }
}
