import { ref } from 'vue'
import type { ToolCatalog } from '../../shared/types/tool'

/** The names of the tools whose calls show an MCP App (read once per page, when a call is first shown). */
const withApps = ref<ReadonlySet<string>>(new Set())
let asked = false

/** Whether a tool call shows its MCP server's interactive page (MCP Apps) under it. */
export function useToolApps() {
  function load(): void {
    if (asked || typeof window === 'undefined') return
    asked = true
    // Component tests have no $fetch: no app is shown there unless a test provides it.
    Promise.resolve()
      .then(() => $fetch<ToolCatalog>('/api/tools'))
      .then((catalog) => {
        withApps.value = new Set(catalog.tools.filter(tool => tool.app).map(tool => tool.name))
      }, () => {
        // Not known now (offline): asked again when the next call is shown.
        asked = false
      })
  }
  return {
    hasApp: (toolName: string): boolean => {
      load()
      return withApps.value.has(toolName)
    },
  }
}
