/**
 * "The tools changed": one signal for open pages, whatever changed them (a tool registered,
 * replaced or removed by any source, an MCP server going down or coming back, a tool file that
 * failed to load). Bursts (a server registering forty tools) are coalesced into one signal per
 * `debounceMs`, each with a version number that only grows, so a page can tell it missed none.
 */

export type ToolChangeListener = (version: number) => void

export class ToolChangeFeed {
  private version = 0
  private timer: ReturnType<typeof setTimeout> | undefined
  private readonly listeners = new Set<ToolChangeListener>()
  private readonly endListeners = new Set<() => void>()
  private closed = false

  constructor(private readonly debounceMs = 250) {}

  /** The current version (grows by one per coalesced change). */
  get current(): number {
    return this.version
  }

  /** Listeners now attached (open pages). */
  get size(): number {
    return this.listeners.size
  }

  /** Something changed: listeners hear of it once the burst settles. */
  notify = (): void => {
    if (this.closed || this.timer) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      this.version++
      for (const listener of this.listeners) {
        try {
          listener(this.version)
        } catch {
          // One page's failure is its own.
        }
      }
    }, this.debounceMs)
    this.timer.unref?.()
  }

  /** Attaches `listener` (and `onEnd`, called at shutdown so open streams can end); returns the idempotent removal. */
  subscribe(listener: ToolChangeListener, onEnd?: () => void): () => void {
    this.listeners.add(listener)
    if (onEnd) this.endListeners.add(onEnd)
    return () => {
      this.listeners.delete(listener)
      if (onEnd) this.endListeners.delete(onEnd)
    }
  }

  /** Drops any pending signal and ends every subscription (shutdown). */
  close(): void {
    this.closed = true
    clearTimeout(this.timer)
    this.timer = undefined
    this.listeners.clear()
    const ends = [...this.endListeners]
    this.endListeners.clear()
    for (const end of ends) end()
  }
}
