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
}

/** Where a tool comes from. */
export interface ToolSourceRef {
  kind: 'builtin' | 'file' | 'mcp' | 'dynamic'
  /** The MCP server's name, or the tool file's path. */
  name?: string
}

/** An MCP server as `GET /api/tools`, settings and `GET /api/health` show it. */
export interface McpServerStatus {
  name: string
  transport: 'stdio' | 'http'
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
