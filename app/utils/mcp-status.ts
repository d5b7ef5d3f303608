import type { McpServerStatus } from '../../shared/types/tool'

/** How an MCP server's state reads in plain words. */
export function mcpStateText(server: McpServerStatus): string {
  if (server.state === 'ready') return `ready, ${server.tools} tool${server.tools === 1 ? '' : 's'}`
  if (server.state === 'failed') {
    const retry = server.nextRetryAt ? `, next attempt ${new Date(server.nextRetryAt).toLocaleTimeString()}` : ''
    return `unavailable: ${server.error ?? 'unknown error'}${retry}${server.circuit === 'open' ? ' (failing repeatedly: attempts are minutes apart)' : ''}`
  }
  return server.state === 'connecting' ? 'connecting…' : server.state
}
