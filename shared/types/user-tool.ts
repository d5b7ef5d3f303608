/**
 * A tool an agent wrote for its person (`propose_tool`): JavaScript run in the QuickJS sandbox,
 * usable (through `run_my_tool`) only once its person approved exactly this version.
 */
export interface UserTool {
  name: string
  description: string
  /** JSON Schema of its arguments (an object). */
  parameters: Record<string, unknown>
  /** Its JavaScript: `args` holds the arguments; the last expression's value is the result. */
  code: string
  /** Credentials it may read, as `service/key` (`credentials.get('github', 'token')`). */
  services: string[]
  /** Whether it may call `fetch` (through web_fetch's guard). */
  network: boolean
  /** Identifies this version (its description, schema, code, services and network together). */
  version: string
  /** The version its person approved, if any: it runs only while this is `version`. */
  approvedVersion?: string
  createdAt: number
  updatedAt: number
}

/** `GET /api/me/tools`. */
export interface UserToolList {
  tools: Array<UserTool & { approved: boolean }>
  max: number
}
