/**
 * A tab's end of the browser's one live connection (the shared worker, app/workers/live-events.ts):
 * components watch jobs and the tools' changes through it instead of opening an EventSource each,
 * so any number of tabs stays within the browser's six HTTP/1.1 connections per host. Where the
 * browser has no SharedWorker, `liveEvents()` is null and callers use their own EventSource.
 */
import type { HubMessage, TabMessage } from './live-events-hub'

/** What a watcher of one job hears: its events (with their ids), that it is gone, and whether the connection is up. */
export interface JobWatcher {
  event: (message: Extract<HubMessage, { type: 'job' }>) => void
  gone?: () => void
  connection?: (open: boolean) => void
}

/** A tab's client of the shared worker. */
export class LiveEventsClient {
  private readonly watchers = new Map<string, Set<JobWatcher>>()
  private readonly toolListeners = new Set<() => void>()
  private open = false

  constructor(private readonly port: MessagePort) {
    port.addEventListener('message', (message: MessageEvent<HubMessage>) => this.receive(message.data))
    port.start()
  }

  /** Whether the worker's connection is up now. */
  get connected(): boolean {
    return this.open
  }

  /** Watches `jobId` until the returned function is called. Each new watcher starts from a snapshot. */
  watchJob(jobId: string, watcher: JobWatcher): () => void {
    let set = this.watchers.get(jobId)
    if (!set) this.watchers.set(jobId, set = new Set())
    set.add(watcher)
    this.send({ type: 'watch', jobId })
    return () => {
      const current = this.watchers.get(jobId)
      if (!current?.delete(watcher) || current.size > 0) return
      this.watchers.delete(jobId)
      this.send({ type: 'unwatch', jobId })
    }
  }

  /** Calls `listener` when the server's tools change, until the returned function is called. */
  onToolsChanged(listener: () => void): () => void {
    this.toolListeners.add(listener)
    if (this.toolListeners.size === 1) this.send({ type: 'tools', on: true })
    return () => {
      if (this.toolListeners.delete(listener) && this.toolListeners.size === 0) this.send({ type: 'tools', on: false })
    }
  }

  private send(message: TabMessage): void {
    this.port.postMessage(message)
  }

  private receive(message: HubMessage): void {
    if (message.type === 'job') for (const watcher of this.watchers.get(message.jobId) ?? []) watcher.event(message)
    else if (message.type === 'gone') for (const watcher of this.watchers.get(message.jobId) ?? []) watcher.gone?.()
    else if (message.type === 'tools-changed') for (const listener of this.toolListeners) listener()
    else {
      this.open = message.open
      for (const set of this.watchers.values()) for (const watcher of set) watcher.connection?.(message.open)
    }
  }
}

let client: LiveEventsClient | null | undefined

/** This tab's client of the shared worker, made on first use; null where the browser has no SharedWorker. */
export function liveEvents(): LiveEventsClient | null {
  if (client !== undefined) return client
  if (typeof window === 'undefined' || typeof SharedWorker === 'undefined') return (client = null)
  try {
    const worker = new SharedWorker(new URL('../workers/live-events.ts', import.meta.url), { type: 'module', name: 'or3-live-events' })
    client = new LiveEventsClient(worker.port)
    const tabId = crypto.randomUUID()
    const hello = () => worker.port.postMessage({ type: 'hello', tabId })
    // Held while this tab lives (the worker waits on it to learn that the tab closed), and held
    // before the worker hears of it, so the worker's wait cannot be granted first.
    if (navigator.locks) {
      void navigator.locks.request(`or3-live-tab-${tabId}`, () => {
        hello()
        return new Promise<void>(() => {})
      })
    } else {
      hello()
    }
  } catch {
    client = null
  }
  return client
}
