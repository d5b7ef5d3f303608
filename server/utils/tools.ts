import { listServerTools, whenServerToolsReady } from '../lib/tools/registry'
import type { ToolSummary } from '../../shared/types/tool'

/** The enabled tools as the UI lists them, once start-up discovery has registered them all. */
export async function listToolSummaries(): Promise<ToolSummary[]> {
  await whenServerToolsReady()
  return listServerTools()
    .filter(tool => tool.enabled)
    .map(tool => ({ name: tool.name, description: tool.description, parameters: tool.parameters, runtime: tool.runtime }))
}
