/**
 * The browser's one live connection (shared/types/live-events.ts): `GET /api/events` opens it, and
 * `POST /api/events/:streamId` changes which jobs it carries. Each watched job is one viewer of
 * that job (job-viewer.ts): exactly the events after the id the browser has, then live ones, each
 * framed once for every connection that carries it; it stops carrying a job after its status. A
 * job not live here yet (being resumed after a restart) is attached again a second later, from
 * the last id sent. The tool list's changes ride along. A connection counts as one stream against
 * the per-user, per-address and server caps (stream-slots.ts), however many jobs it carries.
 */
import { randomBytes } from 'node:crypto'
import type { H3Event } from 'h3'
import type { BackgroundJobManager } from '../jobs/manager'
import { formatEventId, parseEventId, type SequencedJobEvent } from '../jobs/stream-events'
import type { ToolChangeFeed } from '../tools/tool-changes'
import type { BackgroundJob } from '../../../shared/types/job'
import type { LiveEventsChange } from '../../../shared/types/live-events'
import { attachJobViewer } from './job-viewer'
import { serveToolChanges } from './serve-tool-changes'
import { SseConnection } from './sse-connection'
import type { StreamSlots } from './stream-slots'
import { throwHttpError } from './domain-errors'
import { DomainError, type HttpAnswer } from '../domain-error'

/** Unsent bytes one browser may fall behind before it is disconnected (it resumes every job on reconnect). */
const MAX_QUEUED_BYTES = 2 * 1024 * 1024
const KEEP_ALIVE_MS = 15_000
/** Jobs one connection carries at once at most. */
export const MAX_WATCHED_JOBS = 200
/** How long before a job not live here yet (being resumed) is attached again. */
const RETRY_MS = 1_000

/** What the connections need. */
export interface LiveEventsOptions {
  jobs: BackgroundJobManager
  slots: StreamSlots
  toolChanges: ToolChangeFeed
  /** The job `jobId` if `userId` may watch it (their own), else null. */
  findJob: (userId: string, jobId: string) => Promise<BackgroundJob | null>
}

/** A change named no open connection of this person's (it closed, or another person's): 404. */
export class LiveStreamGoneError extends DomainError {
  override name = 'LiveStreamGoneError'
  httpAnswer(): HttpAnswer {
    return { statusCode: 404, statusMessage: 'No such stream', message: 'This live connection is closed; open GET /api/events again and send the change to its new id.' }
  }
}

/** A change past what one connection may carry: 409. */
export class LiveStreamFullError extends DomainError {
  override name = 'LiveStreamFullError'
  httpAnswer(): HttpAnswer {
    return { statusCode: 409, statusMessage: 'Too many jobs', message: `One live connection carries at most ${MAX_WATCHED_JOBS} jobs; stop watching some first.` }
  }
}

/** One job a connection carries. */
interface Watch {
  /** The id of the last event sent (where to attach again from). */
  lastEventId: string | undefined
  detach: () => void
  retryTimer?: ReturnType<typeof setTimeout>
}

/** One open connection. */
class BrowserStream {
  readonly watches = new Map<string, Watch>()
  constructor(readonly id: string, readonly userId: string, readonly connection: SseConnection) {}
}

/** Every browser's live connection on this server process. */
export class LiveEventStreams {
  private readonly streams = new Map<string, BrowserStream>()

  constructor(private readonly options: LiveEventsOptions) {}

  /** Connections open now. */
  get size(): number {
    return this.streams.size
  }

  /** Serves `GET /api/events` for `userId`. */
  open(event: H3Event, userId: string, address?: string): Promise<void> {
    const id = randomBytes(16).toString('base64url')
    let release: () => void
    try {
      release = this.options.slots.acquire(userId, `events:${id}`, address)
    } catch (error) {
      throwHttpError(event, error)
    }
    const connection = new SseConnection(event, { maxQueuedBytes: MAX_QUEUED_BYTES, keepAliveMs: KEEP_ALIVE_MS })
    const stream = new BrowserStream(id, userId, connection)
    this.streams.set(id, stream)
    const stopTools = this.options.toolChanges.subscribe(version => connection.write(`event: tools-changed\ndata: {"version":${version}}\n\n`), () => this.end(stream, 2_000))
    connection.onClose(() => {
      stopTools()
      this.streams.delete(id)
      for (const watch of stream.watches.values()) this.stopWatch(watch)
      stream.watches.clear()
      release()
    })
    connection.write(`event: ready\ndata: ${JSON.stringify({ streamId: id, tools: this.options.toolChanges.current })}\n\n`)
    return connection.send()
  }

  /** Serves `POST /api/events/:streamId`: 404 unless it is an open connection of `userId`'s. */
  async change(streamId: string, userId: string, change: LiveEventsChange): Promise<{ watching: number }> {
    const stream = this.streams.get(streamId)
    if (!stream || stream.userId !== userId) throw new LiveStreamGoneError('No such stream.')
    for (const jobId of change.unwatch ?? []) {
      const watch = stream.watches.get(jobId)
      if (watch) this.stopWatch(watch)
      stream.watches.delete(jobId)
    }
    const added = (change.watch ?? []).filter(item => !stream.watches.has(item.jobId))
    if (stream.watches.size + new Set(added.map(item => item.jobId)).size > MAX_WATCHED_JOBS) throw new LiveStreamFullError('Too many jobs.')
    await Promise.all(added.map(item => this.watch(stream, item.jobId, item.lastEventId)))
    return { watching: stream.watches.size }
  }

  /** Serves the tools-only feed (`GET /api/tools/events`) for `userId`, counted like a connection. */
  serveToolChanges(event: H3Event, userId: string, address?: string): Promise<void> {
    return serveToolChanges(event, this.options.toolChanges, this.options.slots, { userId, address })
  }

  /** Ends every connection (the server is stopping: browsers come back in a moment). */
  close(): void {
    for (const stream of [...this.streams.values()]) this.end(stream, 2_000)
  }

  private end(stream: BrowserStream, retryMs: number): void {
    stream.connection.write(`retry: ${retryMs}\n\n`)
    stream.connection.close()
  }

  private stopWatch(watch: Watch): void {
    if (watch.retryTimer) clearTimeout(watch.retryTimer)
    watch.retryTimer = undefined
    watch.detach()
  }

  /** Starts carrying `jobId` on `stream` from `lastEventId`; a job that is not the person's is said to be gone. */
  private async watch(stream: BrowserStream, jobId: string, lastEventId: string | undefined): Promise<void> {
    const watch: Watch = { lastEventId, detach: () => {} }
    stream.watches.set(jobId, watch)
    const job = await this.options.findJob(stream.userId, jobId).catch(() => null)
    if (!job) {
      stream.watches.delete(jobId)
      stream.connection.write(`event: job-gone\ndata: ${JSON.stringify({ jobId, status: 404 })}\n\n`)
      return
    }
    await this.attach(stream, job, watch)
  }

  private async attach(stream: BrowserStream, job: BackgroundJob, watch: Watch): Promise<void> {
    const current = () => stream.watches.get(job.id) === watch && !stream.connection.closed
    if (!current()) return
    const detach = await attachJobViewer(this.options.jobs, job, parseEventId(watch.lastEventId), {
      send: (item) => {
        if (!current()) return
        stream.connection.write(jobFrame(job.id, item))
        watch.lastEventId = formatEventId(item)
      },
      retryLater: () => {
        if (!current()) return
        watch.retryTimer = setTimeout(() => {
          watch.retryTimer = undefined
          void this.attach(stream, job, watch).catch(() => this.end(stream, 1_000))
        }, RETRY_MS)
        watch.retryTimer.unref?.()
      },
      ended: () => {
        if (stream.watches.get(job.id) === watch) stream.watches.delete(job.id)
      },
      // The server is stopping: the whole connection ends, and the browser comes back.
      detached: () => this.end(stream, 2_000),
    })
    // Detached meanwhile (unwatched, or the connection closed): let go of the job at once.
    if (current()) watch.detach = detach
    else detach()
  }
}

/**
 * An event of `jobId` as a shared connection frames it, made once per event however many
 * connections carry it (kept on the event like its own frame).
 */
function jobFrame(jobId: string, item: SequencedJobEvent & { liveFrame?: Buffer }): Buffer {
  return item.liveFrame ??= Buffer.from(`event: job\ndata: {"jobId":${JSON.stringify(jobId)},"id":"${item.id}","event":${JSON.stringify(item.event)}}\n\n`, 'utf8')
}
