/**
 * Throttled, ordered writes of one job's progress to its store. Streamed text is written at
 * most once per flush window (`intervalMs`), and only when a window holds `chunkInterval` chunks
 * (a slow trickle is written after a second window at the latest), or early once
 * `sizeThreshold` bytes are waiting. Tool-call and terminal events flush at once. All writes of a
 * job go through one queue, so they land in the order they were made.
 *
 * A run feeds it the events its viewers got (`record`, from the live hub), each with the job the
 * one fold of job events (shared/job-state.ts) leaves: their text, the job's tool calls and the
 * events themselves go into the store together, so the stored row and the stored run log agree at
 * every write, and the log holds exactly the events (with their ids) viewers were sent.
 * Before each write the hub is asked to send the text still in its batch (`beforeFlush`).
 */
import type { JobStore } from '../stores/jobs/job-store'
import type { ActiveToolCall, PublicJob } from '../../../shared/types/job'
import type { SequencedJobEvent } from './stream-events'
import { toStoredEvents } from './run-log'

/** When buffered text is written; the `backgroundJobs.flush` config. */
export interface FlushPolicy {
  intervalMs: number
  chunkInterval: number
  sizeThreshold: number
}

/** Buffers one job's progress and writes it to the store in throttled, ordered batches. */
export class ThrottledJobWriter {
  /** Store write calls made so far. */
  writes = 0
  private pendingContent = ''
  private pendingReasoning = ''
  private pendingChunks = 0
  private chunksReceived: number
  private activeToolCalls: ActiveToolCall[] | undefined
  private timer: ReturnType<typeof setTimeout> | undefined
  private extended = false
  private queue: Promise<void> = Promise.resolve()
  private failures = 0
  /** Events viewers got since the last write. */
  private events: SequencedJobEvent[] = []
  private disposed = false
  private flushing = false
  /** Called before each write (the hub sends the text in its batch, which comes back through `record`). */
  beforeFlush: (() => void) | undefined

  constructor(
    private readonly store: JobStore,
    private readonly jobId: string,
    private readonly policy: FlushPolicy,
    private readonly onWriteError: (error: unknown) => void = () => {},
    start: { chunksReceived?: number } = {},
    /** Called when the store refuses a write (the job ended, or another instance owns it now). */
    private readonly onRefused: () => void = () => {},
  ) {
    this.chunksReceived = start.chunksReceived ?? 0
  }

  /**
   * An event viewers got, and the job it left: the event is kept for the run log, its text and the
   * job's tool calls for the row. Text waits for the flush window; a tool call, a snapshot and an
   * input request are written at once; a workflow state rides with the next write (its checkpoint
   * writes at once anyway).
   */
  record(item: SequencedJobEvent, job: Pick<PublicJob, 'activeToolCalls'>): void {
    if (this.disposed) return
    const { event } = item
    this.events.push(item)
    switch (event.type) {
      case 'delta':
        this.addText(event, event.chunksReceived)
        return
      case 'tool-call':
        void this.setActiveToolCalls(job.activeToolCalls)
        return
      case 'snapshot':
        void this.flush()
        return
      case 'workflow-state':
        if (!this.timer) this.startWindow()
        return
      default:
        void this.flush()
    }
  }

  /** Buffers streamed text. */
  addText(text: { content?: string, reasoning?: string }, chunksReceived: number): void {
    if (text.content) this.pendingContent += text.content
    if (text.reasoning) this.pendingReasoning += text.reasoning
    // A batch of text (a delta viewers got) counts as the chunks it holds.
    this.pendingChunks += Math.max(1, chunksReceived - this.chunksReceived)
    this.chunksReceived = chunksReceived
    if (this.pendingContent.length + this.pendingReasoning.length >= this.policy.sizeThreshold) {
      void this.flush()
    } else if (!this.timer) {
      this.startWindow()
    }
  }

  /** Records the current round's tool calls and writes them with any buffered text, at once. */
  setActiveToolCalls(calls: ActiveToolCall[]): Promise<void> {
    this.activeToolCalls = calls
    return this.flush()
  }

  /** Writes everything buffered now; resolves when it (and every earlier write) has landed. */
  flush(): Promise<void> {
    if (this.beforeFlush && !this.flushing) {
      this.flushing = true
      try {
        this.beforeFlush()
      } finally {
        this.flushing = false
      }
    }
    this.clearWindow()
    if (this.pendingChunks === 0 && !this.activeToolCalls && this.events.length === 0) return this.queue
    const update = {
      contentChunk: this.pendingContent || undefined,
      reasoningChunk: this.pendingReasoning || undefined,
      chunksReceived: this.chunksReceived,
      activeToolCalls: this.activeToolCalls,
      ...(this.events.length > 0 ? { events: toStoredEvents(this.events) } : {}),
    }
    this.pendingContent = ''
    this.pendingReasoning = ''
    this.pendingChunks = 0
    this.activeToolCalls = undefined
    this.events = []
    return this.enqueue(() => this.store.updateJob(this.jobId, update))
  }

  /** Runs `write` after every earlier write; a failing write is reported, never thrown. */
  enqueue(write: () => Promise<unknown>): Promise<void> {
    this.queue = this.queue.then(async () => {
      this.writes++
      try {
        if (await write() === false) this.onRefused()
      } catch (error) {
        this.failures++
        if (this.failures === 1 || this.failures % 100 === 0) this.onWriteError(error)
      }
    })
    return this.queue
  }

  /**
   * A checkpoint: buffered text first, then `write`, in order; resolves `true` only once the store
   * has it (a refusal or an error resolves `false`, and is reported as for any write). What
   * follows a checkpoint outside the process (a tool with side effects) waits for it.
   */
  async checkpoint(write: () => Promise<unknown>): Promise<boolean> {
    let written = false
    await this.flush()
    await this.enqueue(async () => {
      const result = await write()
      written = result !== false
      return result
    })
    return written
  }

  /** Stops the window timer and takes no more events; what is buffered is dropped (call `flush` first to keep it). */
  dispose(): void {
    this.disposed = true
    this.beforeFlush = undefined
    this.clearWindow()
  }

  private startWindow(): void {
    this.timer = setTimeout(() => {
      this.timer = undefined
      if (this.pendingChunks >= this.policy.chunkInterval || this.extended) {
        void this.flush()
      } else {
        this.extended = true
        this.startWindow()
      }
    }, this.policy.intervalMs)
    this.timer.unref?.()
  }

  private clearWindow(): void {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    this.extended = false
  }
}
