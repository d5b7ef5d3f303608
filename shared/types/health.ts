/** What `GET /api/health` reports (200 when the server can serve, 503 when it cannot). */

/** The store behind jobs, conversations and workflows. */
export interface StoreHealth {
  provider: string
  /** Whether it took a write just now (sqlite: its write lock was free). */
  ok: boolean
  latencyMs: number
  /** Why not, when not ok. */
  error?: string
}

/** The job manager and its store. */
export interface JobsHealth {
  store: StoreHealth
  /**
   * `running`: jobs holding a running slot; `waiting`: jobs parked while they wait for a person;
   * `queued`: jobs whose person answered, waiting for a running slot again.
   */
  jobs: { running: number, waiting: number, queued: number, max: number, accepting: boolean }
}

/** The whole report. */
export interface HealthReport extends JobsHealth {
  status: 'ok' | 'unavailable'
  /** Tools registered, and each MCP server's state (its error is shown to signed-in users in GET /api/tools). */
  tools: { registered: number, mcpServers: Array<{ name: string, state: 'connecting' | 'ready' | 'failed' | 'disabled' | 'closed' }> }
}
