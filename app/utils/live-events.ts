/**
 * A tab's end of the browser's one live connection: components watch jobs and the tools' changes
 * through it instead of opening an EventSource each, so any number of tabs stays within the
 * browser's six HTTP/1.1 connections per host. The connection is held by a shared worker
 * (app/workers/live-events.ts); where the browser has none, by one tab the tabs elect with a Web
 * Lock, relaying through a BroadcastChannel (live-events-leader.ts). Where neither can be had,
 * `liveEvents()` is null and callers use their own EventSource.
 */
import { READ_EVERY, tabLockName, type HubMessage, type TabMessage } from './live-events-hub'
import { leaderChannel } from './live-events-leader'

/** How a tab's client talks to whoever holds the connection. */
export interface LiveChannel {
  send: (message: TabMessage) => void
  listen: (receive: (message: HubMessage) => void) => void
}

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

  constructor(private readonly channel: LiveChannel) {
    channel.listen(message => this.receive(message))
  }

  /** Asks again for everything this tab watches (a new holder of the connection knows nothing of it). */
  resubscribe(): void {
    for (const jobId of this.watchers.keys()) this.send({ type: 'watch', jobId })
    if (this.toolListeners.size > 0) this.send({ type: 'tools', on: true })
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
    this.channel.send(message)
  }

  private receive(message: HubMessage): void {
    this.handle(message)
    // Said after handling, so a tab that cannot keep up (frozen in the background, busy) says so by its silence.
    if (message.n !== undefined && (message.type === 'lagging' || message.n % READ_EVERY === 0)) this.send({ type: 'read', n: message.n })
  }

  private handle(message: HubMessage): void {
    if (message.type === 'lagging') return
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

/** This tab's client of the browser's live connection, made on first use; null where it cannot be shared. */
export function liveEvents(): LiveEventsClient | null {
  if (client !== undefined) return client
  if (typeof window === 'undefined') return (client = null)
  try {
    client = typeof SharedWorker === 'undefined' ? leaderClient() : workerClient()
  } catch {
    client = null
  }
  return client
}

function workerClient(): LiveEventsClient {
  const worker = new SharedWorker(new URL('../workers/live-events.ts', import.meta.url), { type: 'module', name: 'or3-live-events' })
  const port = worker.port
  const made = new LiveEventsClient({
    send: message => port.postMessage(message),
    listen: (receive) => {
      port.addEventListener('message', (message: MessageEvent<HubMessage>) => receive(message.data))
      port.start()
    },
  })
  const tabId = crypto.randomUUID()
  const hello = () => port.postMessage({ type: 'hello', tabId })
  // Held while this tab lives (the worker waits on it to learn that the tab closed), and held
  // before the worker hears of it, so the worker's wait cannot be granted first.
  if (navigator.locks) {
    void navigator.locks.request(tabLockName(tabId), () => {
      hello()
      return new Promise<void>(() => {})
    })
  } else {
    hello()
  }
  return made
}

function leaderClient(): LiveEventsClient | null {
  if (typeof BroadcastChannel === 'undefined' || !navigator.locks || typeof EventSource === 'undefined') return null
  let made: LiveEventsClient | undefined
  const channel = leaderChannel({ onNewLeader: () => made?.resubscribe() })
  made = new LiveEventsClient(channel)
  return made
}
