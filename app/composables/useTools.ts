import { onScopeDispose } from 'vue'
import type { ToolCatalog, ToolSummary } from '../../shared/types/tool'
import { liveEvents } from '../utils/live-events'

export type { ToolCatalog }

/** The tools the server offers models, the state of the sources they come from, and word when they change. */
export function useTools() {
  function catalog(): Promise<ToolCatalog> {
    return $fetch<ToolCatalog>('/api/tools')
  }
  async function list(): Promise<ToolSummary[]> {
    return (await catalog()).tools
  }
  /**
   * Calls `onChange` whenever the server's tools change (a tool file added, an MCP server down or
   * back), while the calling component lives: through the browser's one shared live connection
   * where there is one, else its own EventSource. Either reconnects by itself after a drop, and a
   * reconnect that finds the tools changed calls `onChange` too.
   */
  function watchChanges(onChange: () => void): void {
    const shared = liveEvents()
    if (shared) {
      onScopeDispose(shared.onToolsChanged(onChange))
      return
    }
    if (typeof EventSource === 'undefined') return
    const source = new EventSource('/api/tools/events')
    let seen: number | undefined
    const onVersion = (event: MessageEvent<string>) => {
      const version = Number((JSON.parse(event.data) as { version: number }).version)
      if (seen !== undefined && version !== seen) onChange()
      seen = version
    }
    source.addEventListener('ready', onVersion as EventListener)
    source.addEventListener('tools-changed', onVersion as EventListener)
    onScopeDispose(() => source.close())
  }
  return { list, catalog, watchChanges }
}
