import type { DynamicToolFile, McpServerStatus, ToolSummary } from '../../shared/types/tool'

/** What `GET /api/tools` answers. */
export interface ToolCatalog {
  tools: ToolSummary[]
  mcpServers: McpServerStatus[]
  /** The dynamic tools directory (admins only; null for others or when it is off). */
  dynamicTools: { dir: string, files: DynamicToolFile[] } | null
}

/** The tools the server offers models, and the state of the sources they come from. */
export function useTools() {
  function catalog(): Promise<ToolCatalog> {
    return $fetch<ToolCatalog>('/api/tools')
  }
  async function list(): Promise<ToolSummary[]> {
    return (await catalog()).tools
  }
  return { list, catalog }
}
