/**
 * Live state of the jobs this process runs, fanned out to any number of viewers. Text deltas are
 * batched so that batching costs latency only under load: a delta that arrives when no text went
 * out within the current window is sent at once (leading edge); deltas arriving while a send is
 * recent are coalesced until the window ends or `batchSize` deltas wait (trailing edge). The
 * window is `batchIntervalMs` times `batchShare()`: with `adaptive`, the event loop's load decides
 * (no wait when idle, the whole interval when busy: event-loop-load.ts); otherwise always the whole
 * interval. Tool-call, workflow and status events flush the batch first so viewers see everything
 * in order. Each event is numbered on from the job's stored run log, serialised once, kept in a
 * byte-bounded replay log (replay-log.ts) and handed to the run's recorder (the writer, which
 * stores it), so a viewer reconnecting with `Last-Event-ID` continues exactly. What viewers see is
 * the job folded from those events by the one fold of job events (shared/job-state.ts).
 * State of a finished job is dropped once its last viewer has left (after `graceMs`).
 *
 * Over 250 lines on purpose: batching, ordering and fan-out share one per-job state, and the
 * ordering guarantee (pending text flushes before any other event) holds only if they stay together.
 */
import type { ActiveToolCall, JobError, JobStatus, PublicJob, ToolRoundRecord } from '../../../shared/types/job'
import type { WorkflowState } from '../../../shared/types/workflow'
import type { JobInputRequest } from '../../../shared/types/input-request'
import type { JobSnapshotEvent } from '../../../shared/types/job-events'
import { applyJobEvent } from '../../../shared/job-state'
import type { Usage } from '../openrouter/types'
import { EventLoopLoad } from './event-loop-load'
import { ReplayLog, type ReplayAnswer } from './replay-log'
import type { JobEventId, JobStreamEvent, SequencedJobEvent } from './stream-events'
import { UNOBSERVED, type JobObserver } from './job-observer'

/** Receives every event of a job after subscribing. */
export type JobListener = (event: SequencedJobEvent) => void

/** Tuning of the hub; defaults in `DEFAULT_LIVE_HUB_OPTIONS`. */
export interface LiveHubOptions {
  batchingEnabled: boolean
  /** Longest a delta waits in a batch. */
  batchIntervalMs: number
  batchSize: number
  /** Wait only as much of the interval as the process's load calls for (else always all of it). */
  adaptive: boolean
  /** The share (0..1) of the interval to wait now; defaults to the event loop's load when `adaptive`. */
  batchShare?: () => number
  /** Bytes of recent events kept per job for replay after a reconnect. */
  replayBytes: number
  /** How long a finished job's state stays for late reconnects once nobody watches. */
  graceMs: number
  /** Told the size of each text batch sent (metrics). */
  observer: JobObserver
}

export const DEFAULT_LIVE_HUB_OPTIONS: LiveHubOptions = {
  batchingEnabled: true,
  batchIntervalMs: 100,
  batchSize: 10,
  adaptive: true,
  replayBytes: 256 * 1024,
  graceMs: 10_000,
  observer: UNOBSERVED,
}

/** How a job ended, as the status event reports it. */
export interface JobTerminal {
  status: Exclude<JobStatus, 'streaming'>
  finishReason?: string
  error?: JobError
  usage?: Usage
  completedAt: number
}

/** Which run of a job a hub entry carries, and where its events are kept. */
export interface LiveRun {
  /** The run's attempt (the job's resume count): part of every event id. */
  attempt: number
  /** The run started again after a restart: viewers (and the log) get a snapshot saying so. */
  resumed?: boolean
  /** The run that wrote the last event the store kept (`eventSeq`), when known: an id naming it resumes from memory. */
  baseAttempt?: number
  /** Another instance runs the job; a relay feeds its stored events in (`relayEvent`). */
  relayed?: boolean
  /** Gets every numbered event, in order (the writer, which stores them). */
  record?: (event: SequencedJobEvent) => void
}

/** A viewer attached to a live job: where its resume stands, and what to send. */
export interface JobSubscription {
  /** With `Last-Event-ID`: what this process's log has after it (see `ReplayAnswer`). */
  resume?: ReplayAnswer
  /** A snapshot of now, under the id of the latest event (`reason` as in JobSnapshotEvent). */
  snapshot: (reason?: JobSnapshotEvent['reason']) => SequencedJobEvent
  /** What this process's log has after number `seq` now (undefined: it does not reach back that far). */
  since: (seq: number) => SequencedJobEvent[] | undefined
  /** True when the job has finished: send what is due, then close. */
  finished: boolean
  /** The status event when the job has finished (send it after a snapshot, then close). */
  statusEvent?: SequencedJobEvent
  dispose: () => void
}

interface LiveJob {
  /** The job as viewers have been sent it (text still in the batch excluded). */
  job: PublicJob
  log: ReplayLog
  record?: (event: SequencedJobEvent) => void
  /** Another instance runs it: its events come from that instance's log (`relayEvent`), under their ids. */
  relayed: boolean
  finished: boolean
  statusEvent?: SequencedJobEvent
  listeners: Set<JobListener>
  /** Called for listeners still attached when the state is dropped (shutdown). */
  detachHandlers: Map<JobListener, () => void>
  pendingContent: string
  pendingReasoning: string
  pendingChunks: number
  pendingChunksReceived: number
  lastBroadcastAt: number
  batchTimer?: ReturnType<typeof setTimeout>
  cleanupTimer?: ReturnType<typeof setTimeout>
  /** The last snapshot made, reused (one frame in memory) while nothing has changed since. */
  snapshotCache?: { job: PublicJob, reason?: JobSnapshotEvent['reason'], sequenced: SequencedJobEvent }
}

/** Fan-out of live job progress to viewers. One per server process. */
export class JobLiveHub {
  readonly options: LiveHubOptions
  private readonly jobs = new Map<string, LiveJob>()
  /** Sampled only while some job is live (no timer in an idle process). */
  private load: EventLoopLoad | undefined

  constructor(options: Partial<LiveHubOptions> = {}) {
    this.options = { ...DEFAULT_LIVE_HUB_OPTIONS, ...options }
  }

  /** How long a delta may wait now: the interval, scaled by the load when adaptive. */
  batchWindowMs(): number {
    const { batchingEnabled, batchIntervalMs, adaptive, batchShare } = this.options
    if (!batchingEnabled) return 0
    if (!adaptive) return batchIntervalMs
    const share = batchShare ? batchShare() : (this.load ??= new EventLoopLoad()).batchShare()
    return batchIntervalMs * Math.min(1, Math.max(0, share))
  }

  /** Jobs with live state in this process. */
  get size(): number {
    return this.jobs.size
  }

  /** Viewers attached to all live jobs of this process. */
  get viewerTotal(): number {
    let total = 0
    for (const live of this.jobs.values()) total += live.listeners.size
    return total
  }

  /** Whether this process holds live state for `jobId`. */
  has(jobId: string): boolean {
    return this.jobs.has(jobId)
  }

  /** Number of viewers attached to `jobId`. */
  viewerCount(jobId: string): number {
    return this.jobs.get(jobId)?.listeners.size ?? 0
  }

  /**
   * Starts (or restarts, on resume) the live run of a job from its stored state, numbering its
   * events on from the last one the store kept (`job.eventSeq`). A run that resumes from stored
   * events (or finds viewers attached) starts with a snapshot event, so a viewer replaying across
   * the restart is given the state the new run starts from.
   */
  open(stored: PublicJob, run: LiveRun = { attempt: stored.resumeCount }): void {
    // What the store has kept is the store's to say: the live view leaves it out.
    const { eventSeq = 0, ...job } = stored
    const previous = this.jobs.get(job.id)
    if (previous) this.clearTimers(previous)
    const live: LiveJob = {
      job,
      log: new ReplayLog(this.options.replayBytes, eventSeq, run.attempt, run.baseAttempt),
      record: run.record,
      relayed: run.relayed ?? false,
      finished: false,
      listeners: previous?.listeners ?? new Set(),
      detachHandlers: previous?.detachHandlers ?? new Map(),
      pendingContent: '',
      pendingReasoning: '',
      pendingChunks: 0,
      pendingChunksReceived: job.chunksReceived,
      lastBroadcastAt: 0,
    }
    this.jobs.set(job.id, live)
    if (live.relayed) {
      // Not an event of the job's log (a relay numbers nothing): viewers attached get the state under its id.
      if (live.listeners.size > 0) this.deliver(live, live.log.current({ type: 'snapshot', job }))
    } else if (live.log.baseSeq > 0 || live.listeners.size > 0) {
      this.broadcast(live, { type: 'snapshot', job, ...(run.resumed ? { reason: 'resumed' as const } : {}) })
    }
  }

  /** An event of a job another instance runs (opened with `relayed`), under the id that instance gave it. */
  relayEvent(jobId: string, id: JobEventId, event: JobStreamEvent): void {
    const live = this.jobs.get(jobId)
    if (!live?.relayed || live.finished) return
    const item = live.log.appendAs(event, id)
    live.job = applyJobEvent(live.job, event)
    this.deliver(live, item)
  }

  /** Sends the text waiting in the batch now (before the writer stores what viewers got). */
  flush(jobId: string): void {
    const live = this.jobs.get(jobId)
    if (live && !live.finished) this.flushText(live)
  }

  /** Stops handing events to the run's recorder (its writer is done). */
  stopRecording(jobId: string): void {
    const live = this.jobs.get(jobId)
    if (live) live.record = undefined
  }

  /** Adds streamed text; viewers get it batched. */
  appendText(jobId: string, text: { content?: string, reasoning?: string }, chunksReceived: number): void {
    const live = this.jobs.get(jobId)
    if (!live || live.finished || live.relayed) return
    if (text.content) live.pendingContent += text.content
    if (text.reasoning) live.pendingReasoning += text.reasoning
    live.pendingChunks++
    live.pendingChunksReceived = chunksReceived
    const window = this.batchWindowMs()
    const sinceLast = Date.now() - live.lastBroadcastAt
    // Leading edge: nothing went out within the window, so nothing is gained by waiting.
    if (window <= 0 || live.pendingChunks >= this.options.batchSize || sinceLast >= window) {
      this.flushText(live)
    } else if (!live.batchTimer) {
      // Trailing edge: coalesce until the window since the last send has passed.
      live.batchTimer = setTimeout(() => {
        live.batchTimer = undefined
        this.flushText(live)
      }, window - sinceLast)
      live.batchTimer.unref?.()
    }
  }

  /** A tool call changed state. */
  updateToolCall(jobId: string, toolCall: ActiveToolCall): void {
    const live = this.jobs.get(jobId)
    if (!live || live.finished || live.relayed) return
    this.flushText(live)
    this.broadcast(live, { type: 'tool-call', toolCall })
  }

  /** Keeps the snapshot's completed tool rounds current (no event: `tool-call` events carry the news). */
  setToolRounds(jobId: string, toolRounds: ToolRoundRecord[]): void {
    const live = this.jobs.get(jobId)
    if (live) live.job = { ...live.job, toolRounds }
  }

  /** A workflow moved on. */
  updateWorkflowState(jobId: string, workflowState: WorkflowState): void {
    const live = this.jobs.get(jobId)
    if (!live || live.finished || live.relayed) return
    this.flushText(live)
    this.broadcast(live, { type: 'workflow-state', workflowState })
  }

  /** The job asks its user something, or a request changed (claimed, answered, expired). */
  updateInputRequest(jobId: string, request: JobInputRequest): void {
    const live = this.jobs.get(jobId)
    // A job run elsewhere shows its requests as its runner publishes them (through its log).
    if (!live || live.finished || live.relayed) return
    this.flushText(live)
    this.broadcast(live, { type: 'input-request', request })
  }

  /**
   * Ends the live run: flushes pending text, sends the status event and returns how many viewers
   * saw it. The state stays for `graceMs` after the last viewer leaves.
   */
  finish(jobId: string, terminal: JobTerminal): number {
    const live = this.jobs.get(jobId)
    if (!live || live.finished) return 0
    this.flushText(live)
    live.finished = true
    // Count before broadcasting: viewers close their streams when the status arrives.
    const watchers = live.listeners.size
    live.statusEvent = this.broadcast(live, { type: 'status', ...terminal, contentLength: live.job.content.length })
    if (live.listeners.size === 0) this.scheduleCleanup(jobId, live)
    return watchers
  }

  /**
   * Drops a job's live state at once (on shutdown, when nothing more will be sent); viewers still
   * attached are told through their `onDetached`.
   */
  drop(jobId: string): void {
    const live = this.jobs.get(jobId)
    if (!live) return
    this.clearTimers(live)
    this.jobs.delete(jobId)
    const handlers = [...live.detachHandlers.values()]
    live.listeners.clear()
    live.detachHandlers.clear()
    for (const handler of handlers) handler()
    if (this.jobs.size === 0) {
      this.load?.stop()
      this.load = undefined
    }
  }

  /** The job as viewers currently see it (text not yet broadcast excluded); undefined if not live. */
  snapshot(jobId: string): PublicJob | undefined {
    const live = this.jobs.get(jobId)
    return live ? this.snapshotOf(live) : undefined
  }

  /**
   * Attaches a viewer. With a `lastEventId`, `resume` says what this process's log has after it
   * (the caller adds what the store kept before that). The listener is attached in the same tick,
   * so no event is missed; the caller skips those it has already sent. The disposer is idempotent.
   */
  subscribe(jobId: string, listener: JobListener, lastEventId?: JobEventId, onDetached?: () => void): JobSubscription | undefined {
    const live = this.jobs.get(jobId)
    if (!live) return undefined
    if (live.cleanupTimer) {
      clearTimeout(live.cleanupTimer)
      live.cleanupTimer = undefined
    }
    live.listeners.add(listener)
    if (onDetached) live.detachHandlers.set(listener, onDetached)
    let disposed = false
    const dispose = () => {
      if (disposed) return
      disposed = true
      live.listeners.delete(listener)
      live.detachHandlers.delete(listener)
      if (live.listeners.size === 0 && live.finished && this.jobs.get(jobId) === live) this.scheduleCleanup(jobId, live)
    }
    return {
      ...(lastEventId ? { resume: live.log.after(lastEventId) } : {}),
      snapshot: reason => this.currentSnapshot(live, reason),
      since: seq => live.log.since(seq),
      finished: live.finished,
      statusEvent: live.statusEvent,
      dispose,
    }
  }

  /** Clears every timer and all state, detaching every viewer (server shutdown). */
  close(): void {
    for (const jobId of [...this.jobs.keys()]) this.drop(jobId)
  }

  /** The snapshot of now as a sequenced event; viewers arriving between two events share one. */
  private currentSnapshot(live: LiveJob, reason?: JobSnapshotEvent['reason']): SequencedJobEvent {
    const cached = live.snapshotCache
    // Every change of what a snapshot shows replaces `live.job`.
    if (cached && cached.job === live.job && cached.reason === reason) return cached.sequenced
    const sequenced = live.log.current({ type: 'snapshot', job: live.job, ...(reason ? { reason } : {}) })
    live.snapshotCache = { job: live.job, reason, sequenced }
    return sequenced
  }

  private snapshotOf(live: LiveJob): PublicJob {
    return live.job
  }

  private flushText(live: LiveJob): void {
    if (live.batchTimer) {
      clearTimeout(live.batchTimer)
      live.batchTimer = undefined
    }
    if (live.pendingChunks === 0) return
    const event: JobStreamEvent = {
      type: 'delta',
      contentOffset: live.job.content.length,
      reasoningOffset: live.job.reasoning.length,
      chunksReceived: live.pendingChunksReceived,
    }
    if (live.pendingContent) event.content = live.pendingContent
    if (live.pendingReasoning) event.reasoning = live.pendingReasoning
    live.pendingContent = ''
    live.pendingReasoning = ''
    this.options.observer.textBatchSent(live.pendingChunks)
    live.pendingChunks = 0
    live.lastBroadcastAt = Date.now()
    this.broadcast(live, event)
  }

  private broadcast(live: LiveJob, event: JobStreamEvent): SequencedJobEvent {
    const sequenced = live.log.append(event)
    live.job = applyJobEvent(live.job, event)
    live.record?.(sequenced)
    return this.deliver(live, sequenced)
  }

  private deliver(live: LiveJob, sequenced: SequencedJobEvent): SequencedJobEvent {
    const { event } = sequenced
    if (live.listeners.size > 0) this.options.observer.frameSent(event.type, live.listeners.size)
    for (const listener of live.listeners) {
      try {
        listener(sequenced)
      } catch {
        // A broken viewer must not stop the others; its connection cleans itself up.
      }
    }
    return sequenced
  }

  private scheduleCleanup(jobId: string, live: LiveJob): void {
    if (live.cleanupTimer) clearTimeout(live.cleanupTimer)
    live.cleanupTimer = setTimeout(() => {
      if (this.jobs.get(jobId) === live && live.listeners.size === 0) this.drop(jobId)
    }, this.options.graceMs)
    live.cleanupTimer.unref?.()
  }

  private clearTimers(live: LiveJob): void {
    if (live.batchTimer) clearTimeout(live.batchTimer)
    if (live.cleanupTimer) clearTimeout(live.cleanupTimer)
    live.batchTimer = undefined
    live.cleanupTimer = undefined
  }
}
