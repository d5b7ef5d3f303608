/**
 * Every MCP server this process connects to: the operator's (from the config file) and the
 * admin's (added in the UI). Each runs on its own (one broken server never affects the others);
 * `apply` makes the running set match a new list without touching servers whose config did not
 * change, so an admin's edit restarts only the server edited. Listed for `GET /api/tools`,
 * settings and the health report, and closed together at shutdown (stdio children stopped).
 */
import { isDeepStrictEqual } from 'node:util'
import type { McpServerConfig } from './config'
import { McpServerConnection, type McpConnectionOptions } from './connection'
import type { McpServerOrigin, McpServerStatus } from '../../../../shared/types/tool'

/** A server to run, and who configured it. */
export interface McpServerEntry {
  config: McpServerConfig
  origin: McpServerOrigin
}

interface Running {
  connection: McpServerConnection
  origin: McpServerOrigin
}

export class McpServers {
  private running = new Map<string, Running>()
  private closed = false
  /** Applies run one after another: an admin's quick second edit waits for the first. */
  private applying: Promise<void> = Promise.resolve()

  constructor(private readonly options: McpConnectionOptions) {}

  /**
   * Runs exactly `entries` (in their order): new servers start connecting, removed ones close,
   * those whose config changed close and start again; the rest are left as they are.
   */
  apply(entries: readonly McpServerEntry[]): Promise<void> {
    const next = this.applying.then(() => this.applyNow(entries))
    this.applying = next.catch(() => {})
    return next
  }

  private async applyNow(entries: readonly McpServerEntry[]): Promise<void> {
    if (this.closed) return
    const previous = this.running
    const running = new Map<string, Running>()
    const stopping: Array<Promise<void>> = []
    const starting: McpServerConnection[] = []
    for (const { config, origin } of entries) {
      const current = previous.get(config.name)
      if (current && isDeepStrictEqual(current.connection.config, config)) {
        running.set(config.name, { connection: current.connection, origin })
        continue
      }
      if (current) stopping.push(current.connection.close())
      const connection = new McpServerConnection(config, this.options)
      running.set(config.name, { connection, origin })
      starting.push(connection)
    }
    for (const [name, { connection }] of previous) if (!running.has(name)) stopping.push(connection.close())
    this.running = running
    // A replaced server's tools are withdrawn before its new connection registers them again.
    await Promise.all(stopping)
    for (const connection of starting) connection.start()
    if (stopping.length > 0 || starting.length > 0) this.options.onStateChange?.()
  }

  /** Each server's state, in the order given. */
  statuses(): McpServerStatus[] {
    return [...this.running.values()].map(({ connection, origin }) => ({ ...connection.status(), origin }))
  }

  /** The running server of that name. */
  get(name: string): McpServerConnection | undefined {
    return this.running.get(name)?.connection
  }

  /** Who configured the server of that name, if it runs. */
  originOf(name: string): McpServerOrigin | undefined {
    return this.running.get(name)?.origin
  }

  /** Closes every session and stops every child; later applies do nothing. */
  async close(): Promise<void> {
    this.closed = true
    await this.applying
    const running = [...this.running.values()]
    this.running = new Map()
    await Promise.all(running.map(({ connection }) => connection.close()))
  }
}
