/**
 * Every configured MCP server: started together without holding up start-up, each on its own
 * (one broken server never affects the others), listed for `GET /api/tools`, settings and the
 * health report, and closed together at shutdown (stdio children stopped).
 */
import type { McpServerConfig } from './config'
import { McpServerConnection, type McpConnectionOptions } from './connection'
import type { McpServerStatus } from '../../../../shared/types/tool'

export class McpServers {
  private readonly connections: McpServerConnection[]

  constructor(configs: readonly McpServerConfig[], options: McpConnectionOptions) {
    this.connections = configs.map(config => new McpServerConnection(config, options))
  }

  /** Starts every enabled server connecting. */
  start(): void {
    for (const connection of this.connections) connection.start()
  }

  /** Each server's state, in config order. */
  statuses(): McpServerStatus[] {
    return this.connections.map(connection => connection.status())
  }

  /** Closes every session and stops every child. */
  async close(): Promise<void> {
    await Promise.all(this.connections.map(connection => connection.close()))
  }
}
