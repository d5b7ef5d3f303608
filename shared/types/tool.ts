/** A tool as `GET /api/tools` lists it: what a model may be offered and what the UI describes. */
export interface ToolSummary {
  name: string
  description: string
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>
  /** Where it runs: `server`, `client` (the browser) or `hybrid` (either). */
  runtime: 'client' | 'server' | 'hybrid'
  /** Where it comes from (absent: registered by code without saying). */
  source?: ToolSourceRef
  /** Why it cannot run right now (its MCP server is down). */
  unavailable?: string
  /** What it can reach beyond answering (the policy's `capability:<name>` patterns). */
  capabilities?: ToolCapability[]
  /** An MCP tool with an app: its calls show the server's interactive page under them. */
  app?: true
}

/**
 * What a tool can reach beyond computing an answer, named so policy rules can gate it
 * (`capability:internet_access`): the open internet, the conversation's workspace files, code
 * execution in a sandbox, starting subagents, keeping memories about the person, searching knowledge bases, making images (which cost credits). Guests get none of these unless a rule allows it.
 */
export type ToolCapability = 'internet_access' | 'workspace' | 'code_execution' | 'subagents' | 'memory' | 'knowledge' | 'image_generation'

export const TOOL_CAPABILITIES: readonly ToolCapability[] = ['internet_access', 'workspace', 'code_execution', 'subagents', 'memory', 'knowledge', 'image_generation']

/**
 * A tool the browser runs, as the app declares it when it starts a job: offered to the model like
 * any tool; a call waits until a tab of the same user runs it and posts the result.
 */
export interface ClientToolDeclaration {
  name: string
  description: string
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>
  /** JSON Schema the result must match (none: any JSON value). */
  resultSchema?: Record<string, unknown>
}

/** Where a tool comes from. */
export interface ToolSourceRef {
  kind: 'builtin' | 'file' | 'mcp' | 'dynamic'
  /** The MCP server's name, or the tool file's path. */
  name?: string
}

/** Who configured an MCP server: the operator's config file, or an admin in the UI. */
export type McpServerOrigin = 'file' | 'admin'

/** An MCP server as `GET /api/tools`, settings and `GET /api/health` show it. */
export interface McpServerStatus {
  name: string
  transport: 'stdio' | 'http'
  origin?: McpServerOrigin
  /** `connecting` (first time or again), `ready`, `failed` (waiting to retry), `disabled` in the config, `closed` at shutdown. */
  state: 'connecting' | 'ready' | 'failed' | 'disabled' | 'closed'
  /** Tools registered from it (offered to models while it is ready). */
  tools: number
  /** Why it is not ready, when it is not. */
  error?: string
  /** When the next connection attempt is due (ms since the epoch), while failed. */
  nextRetryAt?: number
  /** Connection attempts that failed in a row. */
  failures: number
  /** `open` after many failures in a row: attempts wait minutes apart until one succeeds. */
  circuit: 'closed' | 'open'
  /** Tools it lists that could not be registered, with why. */
  skipped: Array<{ tool: string, reason: string }>
}

/** A file of the dynamic tools directory, as `GET /api/tools` and settings show it. */
export interface DynamicToolFile {
  /** Relative to the directory. */
  path: string
  /** The tool it registered (kept when a later version fails to load). */
  tool?: string
  loadedAt?: number
  /** Why its latest version did not load. */
  error?: string
}

/** What stands in for a saved secret (a header or environment value) when a server's settings are shown; sent back unchanged, it keeps the saved value. */
export const MCP_SECRET_MASK = '••••••••'

/** A server's OAuth settings (the config file's `oauth` object), its client secret and private key masked when shown. */
export interface McpOAuthSettingsView {
  scope?: string
  grant?: 'authorization_code' | 'client_credentials'
  clientId?: string
  clientSecret?: string
  tokenEndpointAuthMethod?: 'client_secret_basic' | 'client_secret_post' | 'none'
  issuer?: string
  privateKey?: string
  signingAlgorithm?: string
  clientMetadataUrl?: string
}

/** An MCP server's settings as the admin page shows and edits them (secret values masked). */
export interface McpServerSettings {
  name: string
  origin: McpServerOrigin
  /** Streamable HTTP: the endpoint, and header names with masked values. */
  url?: string
  headers?: Record<string, string>
  /** It signs in with OAuth: each person in Settings → Connections, or the app itself (`client_credentials`); secrets masked. */
  oauth?: boolean | McpOAuthSettingsView
  /** stdio: the program, its arguments, working directory, and variable names with masked values. */
  command?: string
  args?: string[]
  cwd?: string
  env?: Record<string, string>
  enabled: boolean
  timeoutMs: number
  maxTotalTimeoutMs: number
  /** Only these of its tools are registered (absent: all). */
  tools?: string[]
  /** Offered only to members of these groups (and admins); absent: everyone the policy lets. */
  groups?: string[]
  /** Its connection state (absent while it is not running, e.g. a saved secret could not be read). */
  status?: McpServerStatus
  /** Why it is not running, when the cause is its saved settings. */
  problem?: string
}

/** `GET /api/admin/mcp-servers`. */
export interface McpServerSettingsList {
  servers: McpServerSettings[]
  /** Whether admins may add servers that run a command (`NUXT_MCP_ADMIN_COMMANDS`). */
  commandsAllowed: boolean
  /** The operator's config file, when one is set. */
  configFile: string | null
}

/** What `GET /api/tools` answers. */
export interface ToolCatalog {
  tools: ToolSummary[]
  mcpServers: McpServerStatus[]
  /** The dynamic tools directory (admins only; null for others or when it is off). */
  dynamicTools: { dir: string, files: DynamicToolFile[] } | null
}
