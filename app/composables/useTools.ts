import type { McpServerStatus, ToolSummary } from '../../shared/types/tool'

/** The tools the server offers models, and the state of the MCP servers some come from. */
export function useTools() {
  function catalog(): Promise<{ tools: ToolSummary[], mcpServers: McpServerStatus[] }> {
    return $fetch<{ tools: ToolSummary[], mcpServers: McpServerStatus[] }>('/api/tools')
  }
  async function list(): Promise<ToolSummary[]> {
    return (await catalog()).tools
  }
  return { list, catalog }
}
