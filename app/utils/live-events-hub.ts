/**
 * What the shared worker of the app (app/workers/live-events.ts) does for every tab of one browser:
 * it keeps the browser's one live connection (`GET /api/events`, shared/types/live-events.ts),
 * asks the server to carry the jobs any tab watches (once each, however many tabs watch it), hands
 * each tab the events of the jobs it watches, and the tools' changes. It keeps each watched job
 * folded (shared/job-state.ts) with the id of its last event, so a tab that starts watching a job
 * another tab already watches gets a snapshot at once, and a new connection (after a drop or a
 * server restart) asks for every job from the last id it has: exactly the events missed, no gap
 * and no repeat in any tab. Plain TypeScript with its effects passed in, so tests drive it directly.
 */
import { applyJobEvent, emptyPublicJob } from '#shared/job-state'
import type { PublicJob } from '../../shared/types/job'
import type { JobStreamEvent } from '../../shared/types/job-events'
import type { LiveEventsChange, LiveGoneFrame, LiveJobFrame, LiveReadyFrame } from '../../shared/types/live-events'

/** What a tab tells the worker. `read`: the tab has handled the worker's messages up to number `n`. */
export type TabMessage =
  | { type: 'watch', jobId: string }
  | { type: 'unwatch', jobId: string }
  | { type: 'tools', on: boolean }
  | { type: 'read', n: number }

/**
 * What the worker tells a tab, each numbered (`n`, per tab) so the tab can say how far it has read.
 * `lagging`: the tab fell too far behind; its jobs' events are held back until it has read this
 * far, and then it gets a snapshot of each.
 */
export type HubMessage = { n?: number } & (
  | { type: 'job', jobId: string, id: string, event: JobStreamEvent }
  | { type: 'gone', jobId: string }
  | { type: 'tools-changed', version: number }
  | { type: 'connection', open: boolean }
  | { type: 'lagging' }
)

/** A tab says how far it has read after this many messages (and at once on `lagging`). */
export const READ_EVERY = 50
/**
 * Messages a tab may leave unread (a frozen background tab, a busy one) before its jobs' events
 * are held back for it: a tab that does not read holds neither the others nor the browser's
 * memory, and once it reads again it starts from a snapshot of each job it watches.
 */
export const MAX_UNREAD_PER_TAB = 1_000

/** How far one tab has read what the hub sent it. */
interface TabReading {
  sent: number
  read: number
  /** Set while its jobs' events are held back: the number of the `lagging` message it must read first. */
  laggingAt?: number
}

/** A tab's end of the channel. */
export interface TabPort { postMessage: (message: HubMessage) => void }

/** The effects the hub uses (the worker's EventSource and fetch). */
export interface LiveEventsHubDeps {
  createEventSource: (url: string) => EventSource
  post: (url: string, body: LiveEventsChange) => Promise<{ status: number }>
  /** Wait before opening a connection the browser gave up on (default 1.5 s). */
  retryMs?: number
}

/** The hub's effects in a browser (a worker or the elected tab): its EventSource and its fetch. */
export const BROWSER_EFFECTS: LiveEventsHubDeps = {
  createEventSource: url => new EventSource(url),
  post: (url, body) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), credentials: 'same-origin' }),
}

/** The Web Lock a tab holds while it lives, so whoever holds the connection learns when it closes. */
export function tabLockName(tabId: string): string {
  return `or3-live-tab-${tabId}`
}

/** Jobs one change names at most (the server's bound). */
const CHANGE_BATCH = 50

interface WatchedJob {
  tabs: Set<TabPort>
  /** The job as its events so far describe it (none before the first). */
  job?: PublicJob
  lastEventId?: string
  /** The server carries it on the current connection (or has been asked to). */
  carried: boolean
  finished: boolean
}

/** The browser's live connection, shared by its tabs. */
export class LiveEventsHub {
  private readonly tabs = new Map<TabPort, TabReading>()
  private readonly jobs = new Map<string, WatchedJob>()
  private readonly toolTabs = new Set<TabPort>()
  private source: EventSource | undefined
  private streamId: string | undefined
  private toolsVersion: number | undefined
  private retryTimer: ReturnType<typeof setTimeout> | undefined
  private pending: { watch: Map<string, string | undefined>, unwatch: Set<string> } = { watch: new Map(), unwatch: new Set() }
  private flushing: Promise<void> | undefined

  constructor(private readonly deps: LiveEventsHubDeps) {}

  /** Jobs watched by some tab now. */
  get watchedJobs(): string[] {
    return [...this.jobs.keys()]
  }

  /** A tab connected. */
  add(tab: TabPort): void {
    if (!this.tabs.has(tab)) this.tabs.set(tab, { sent: 0, read: 0 })
    this.send(tab, { type: 'connection', open: this.streamId !== undefined })
  }

  /** A tab closed: what it watched is let go when no other tab watches it. */
  remove(tab: TabPort): void {
    this.tabs.delete(tab)
    this.toolTabs.delete(tab)
    for (const jobId of [...this.jobs.keys()]) this.unwatch(tab, jobId)
    if (this.tabs.size === 0) this.disconnect()
  }

  /** A message from a tab. */
  receive(tab: TabPort, message: TabMessage): void {
    if (!this.tabs.has(tab)) this.add(tab)
    if (message.type === 'read') return this.read(tab, message.n)
    if (message.type === 'watch') this.watch(tab, message.jobId)
    else if (message.type === 'unwatch') this.unwatch(tab, message.jobId)
    else if (message.on) this.toolTabs.add(tab)
    else this.toolTabs.delete(tab)
    this.connect()
  }

  private watch(tab: TabPort, jobId: string): void {
    let entry = this.jobs.get(jobId)
    if (!entry) {
      entry = { tabs: new Set(), carried: false, finished: false }
      this.jobs.set(jobId, entry)
    }
    entry.tabs.add(tab)
    // Another tab watches it already: this one starts from what the worker has.
    this.sendSnapshot(tab, jobId, entry)
    if (!entry.carried && !entry.finished) {
      entry.carried = true
      this.queue(jobId, 'watch', entry.lastEventId)
    }
  }

  private unwatch(tab: TabPort, jobId: string): void {
    const entry = this.jobs.get(jobId)
    if (!entry?.tabs.delete(tab) || entry.tabs.size > 0) return
    this.jobs.delete(jobId)
    if (entry.carried && !entry.finished) this.queue(jobId, 'unwatch')
  }

  private queue(jobId: string, change: 'watch' | 'unwatch', lastEventId?: string): void {
    if (change === 'watch') {
      this.pending.unwatch.delete(jobId)
      this.pending.watch.set(jobId, lastEventId)
    } else {
      this.pending.watch.delete(jobId)
      this.pending.unwatch.add(jobId)
    }
    void this.flush()
  }

  /** Sends what changed to the current connection, in batches, one request at a time. */
  private flush(): Promise<void> {
    this.flushing ??= (async () => {
      // After the messages of this turn, so a burst of watches goes as one change.
      await Promise.resolve()
      while (this.streamId && (this.pending.watch.size > 0 || this.pending.unwatch.size > 0)) {
        const streamId = this.streamId
        const watch = [...this.pending.watch].slice(0, CHANGE_BATCH)
        const unwatch = [...this.pending.unwatch].slice(0, CHANGE_BATCH)
        for (const [jobId] of watch) this.pending.watch.delete(jobId)
        for (const jobId of unwatch) this.pending.unwatch.delete(jobId)
        const body: LiveEventsChange = {
          ...(watch.length > 0 ? { watch: watch.map(([jobId, lastEventId]) => (lastEventId ? { jobId, lastEventId } : { jobId })) } : {}),
          ...(unwatch.length > 0 ? { unwatch } : {}),
        }
        const answer = await this.deps.post(`/api/events/${encodeURIComponent(streamId)}`, body).catch(() => ({ status: 0 }))
        if (answer.status === 404 || answer.status === 0) {
          // The connection is gone (or the network is): a new one asks for everything again.
          if (this.streamId === streamId) this.reconnect()
          break
        }
      }
    })().finally(() => {
      this.flushing = undefined
    })
    return this.flushing
  }

  /** Opens the connection if a tab needs it. */
  private connect(): void {
    if (this.source || this.retryTimer || this.tabs.size === 0) return
    const source = this.deps.createEventSource('/api/events')
    this.source = source
    source.addEventListener('ready', event => this.onReady(JSON.parse((event as MessageEvent<string>).data) as LiveReadyFrame))
    source.addEventListener('job', event => this.onJob(JSON.parse((event as MessageEvent<string>).data) as LiveJobFrame))
    source.addEventListener('job-gone', event => this.onGone(JSON.parse((event as MessageEvent<string>).data) as LiveGoneFrame))
    source.addEventListener('tools-changed', event => this.onToolsVersion(Number((JSON.parse((event as MessageEvent<string>).data) as { version: number }).version)))
    source.addEventListener('error', () => {
      if (this.source !== source) return
      if (this.streamId !== undefined) this.tell({ type: 'connection', open: false })
      this.streamId = undefined
      // CONNECTING: the browser tries again by itself. CLOSED: it gave up; try again after a pause.
      if (source.readyState === 2) this.reconnect()
    })
  }

  private reconnect(): void {
    this.disconnect()
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined
      this.connect()
    }, this.deps.retryMs ?? 1_500)
  }

  private disconnect(): void {
    this.source?.close()
    this.source = undefined
    if (this.streamId !== undefined) this.tell({ type: 'connection', open: false })
    this.streamId = undefined
    if (this.retryTimer) clearTimeout(this.retryTimer)
    this.retryTimer = undefined
  }

  /** A (new) connection: every job still watched is asked for from the last event the worker has. */
  private onReady(frame: LiveReadyFrame): void {
    this.streamId = frame.streamId
    this.pending = { watch: new Map(), unwatch: new Set() }
    for (const [jobId, entry] of this.jobs) {
      entry.carried = !entry.finished
      if (entry.carried) this.pending.watch.set(jobId, entry.lastEventId)
    }
    void this.flush()
    this.onToolsVersion(frame.tools)
    this.tell({ type: 'connection', open: true })
  }

  private onJob(frame: LiveJobFrame): void {
    const entry = this.jobs.get(frame.jobId)
    if (!entry) return
    entry.job = applyJobEvent(entry.job ?? emptyPublicJob(frame.jobId), frame.event)
    entry.lastEventId = frame.id
    if (frame.event.type === 'status' || (frame.event.type === 'snapshot' && frame.event.job.status !== 'streaming')) {
      // The server stops carrying it after its status.
      entry.finished = true
      entry.carried = false
    }
    for (const tab of entry.tabs) this.sendJobEvent(tab, { type: 'job', jobId: frame.jobId, id: frame.id, event: frame.event })
  }

  /** A job's event for one tab, unless the tab is too far behind (then it is told so, once, and its events wait). */
  private sendJobEvent(tab: TabPort, message: Extract<HubMessage, { type: 'job' }>): void {
    const reading = this.tabs.get(tab)
    if (!reading || reading.laggingAt !== undefined) return
    if (reading.sent - reading.read >= MAX_UNREAD_PER_TAB) {
      this.send(tab, { type: 'lagging' })
      reading.laggingAt = reading.sent
      return
    }
    this.send(tab, message)
  }

  /** What the hub has of a job, for a tab that starts watching it or has caught up. */
  private sendSnapshot(tab: TabPort, jobId: string, entry: WatchedJob): void {
    if (entry.job && entry.lastEventId) this.send(tab, { type: 'job', jobId, id: entry.lastEventId, event: { type: 'snapshot', job: entry.job } })
  }

  /** A tab read up to `n`: once a lagging tab has read everything up to its `lagging`, it gets each job's snapshot. */
  private read(tab: TabPort, n: number): void {
    const reading = this.tabs.get(tab)
    if (!reading || !Number.isSafeInteger(n) || n <= reading.read || n > reading.sent) return
    reading.read = n
    if (reading.laggingAt === undefined || n < reading.laggingAt) return
    reading.laggingAt = undefined
    for (const [jobId, entry] of this.jobs) if (entry.tabs.has(tab)) this.sendSnapshot(tab, jobId, entry)
  }

  private send(tab: TabPort, message: HubMessage): void {
    const reading = this.tabs.get(tab)
    if (!reading) return
    tab.postMessage({ ...message, n: ++reading.sent })
  }

  private onGone(frame: LiveGoneFrame): void {
    const entry = this.jobs.get(frame.jobId)
    if (!entry) return
    this.jobs.delete(frame.jobId)
    for (const tab of entry.tabs) this.send(tab, { type: 'gone', jobId: frame.jobId })
  }

  /** The tools' version: a change (or a reconnect that may have missed one) is told to the tabs that listen. */
  private onToolsVersion(version: number): void {
    const changed = this.toolsVersion !== undefined && version !== this.toolsVersion
    this.toolsVersion = version
    if (changed) for (const tab of this.toolTabs) this.send(tab, { type: 'tools-changed', version })
  }

  private tell(message: HubMessage): void {
    for (const tab of this.tabs.keys()) this.send(tab, message)
  }
}
