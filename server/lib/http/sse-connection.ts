/**
 * One server-sent-events response with a bounded backlog. h3's `EventStream` formats every push
 * itself and cannot send comments or report how much is queued, so job streams use this: frames
 * are pre-serialised once per event (shared by all viewers), keep-alive comments go out every
 * `keepAliveMs`, and a viewer whose unsent bytes pass `maxQueuedBytes` is disconnected (its next
 * connect gets a replay or a snapshot) instead of growing server memory.
 */
import { PassThrough } from 'node:stream'
import { sendStream, setResponseHeaders, setResponseStatus, type H3Event } from 'h3'

/** Limits of one connection. */
export interface SseConnectionOptions {
  maxQueuedBytes: number
  keepAliveMs: number
}

/** A live SSE response. */
export class SseConnection {
  private readonly body = new PassThrough()
  private readonly closeCallbacks: Array<() => void> = []
  private readonly keepAlive: ReturnType<typeof setInterval>
  private isClosed = false

  constructor(private readonly event: H3Event, private readonly options: SseConnectionOptions) {
    setResponseStatus(event, 200)
    setResponseHeaders(event, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      'Connection': 'keep-alive',
      'X-Accel-Buffering': 'no',
    })
    this.keepAlive = setInterval(() => this.write(': keep-alive\n\n'), options.keepAliveMs)
    this.keepAlive.unref?.()
    event.node.req.once('close', () => this.close())
    event.node.res.once('close', () => this.close())
  }

  /** Whether the connection has ended. */
  get closed(): boolean {
    return this.isClosed
  }

  /** Bytes written but not yet taken by the socket. */
  get queuedBytes(): number {
    return this.body.writableLength + this.body.readableLength + (this.event.node.res.writableLength ?? 0)
  }

  /**
   * Queues a frame; false (and the connection closed) when it is gone or the frame would take its
   * backlog past `maxQueuedBytes`. A frame larger than the bound (a big snapshot) is taken only
   * into an empty backlog, so a viewer holds at most one such frame, never a pile of them.
   * Pass shared Buffers for frames many viewers get: a string is copied per viewer.
   */
  write(frame: string | Buffer): boolean {
    if (this.isClosed) return false
    const queued = this.queuedBytes
    const size = typeof frame === 'string' ? Buffer.byteLength(frame) : frame.byteLength
    if (queued > 0 && queued + size > this.options.maxQueuedBytes) {
      this.close()
      return false
    }
    this.body.write(frame)
    return true
  }

  /** Ends the response (idempotent). */
  close(): void {
    if (this.isClosed) return
    this.isClosed = true
    clearInterval(this.keepAlive)
    this.body.end()
    for (const callback of this.closeCallbacks.splice(0)) callback()
  }

  /** Runs `callback` once the connection ends, whoever ended it. */
  onClose(callback: () => void): void {
    if (this.isClosed) callback()
    else this.closeCallbacks.push(callback)
  }

  /** Hands the stream to h3; return this from the handler. */
  send(): Promise<void> {
    return sendStream(this.event, this.body)
  }
}
