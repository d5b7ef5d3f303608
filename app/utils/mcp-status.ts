import type { McpServerStatus } from '../../shared/types/tool'
import { formatTime, tr } from './i18n'

/** How an MCP server's state reads in plain words. */
export function mcpStateText(server: McpServerStatus): string {
  if (server.state === 'ready') return tr('mcpState.ready', server.tools)
  if (server.state === 'failed') {
    const retry = server.nextRetryAt ? tr('mcpState.nextAttempt', { time: formatTime(server.nextRetryAt, { timeStyle: 'medium' }) }) : ''
    return `${tr('mcpState.unavailable', { error: server.error ?? tr('mcpState.unknownError') })}${retry}${server.circuit === 'open' ? ` ${tr('mcpState.circuitOpen')}` : ''}`
  }
  return server.state === 'connecting' ? tr('mcpState.connecting') : server.state
}
