import type { ToolSummary } from '../../shared/types/tool'

/** The tools the server offers models. */
export function useTools() {
  async function list(): Promise<ToolSummary[]> {
    return (await $fetch<{ tools: ToolSummary[] }>('/api/tools')).tools
  }
  return { list }
}
