import { currentServerRuntime } from '../lib/runtime'
import { listServerTools, whenServerToolsReady } from '../lib/tools/registry'
import type { DynamicToolFile, McpServerStatus, ToolSummary } from '../../shared/types/tool'

/**
 * The enabled tools as the UI lists them (each with its source, and why it cannot run when its
 * MCP server is down), once start-up discovery has registered them all, and each MCP server's state.
 */
export async function listToolSummaries(): Promise<{ tools: ToolSummary[], mcpServers: McpServerStatus[], dynamicTools: { dir: string, files: DynamicToolFile[] } | null }> {
  await whenServerToolsReady()
  const tools = listServerTools()
    .filter(tool => tool.enabled)
    .map((tool) => {
      const unavailable = tool.unavailable?.()
      return { name: tool.name, description: tool.description, parameters: tool.parameters, runtime: tool.runtime, ...(tool.source ? { source: tool.source } : {}), ...(unavailable ? { unavailable } : {}) }
    })
  const runtime = currentServerRuntime()
  const dynamic = runtime?.dynamicTools
  return { tools, mcpServers: runtime?.mcp?.statuses() ?? [], dynamicTools: dynamic ? { dir: dynamic.dir, files: dynamic.status() } : null }
}
