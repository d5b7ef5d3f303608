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
 * Each job's state, its batch and the way its events go out are live-job.ts; this is the registry
 * of live jobs, the load-scaled window, viewers' subscriptions and the grace after the end.
 */
import type { ActiveToolCall, PublicJob, ToolRoundRecord } from '../../../shared/types/job'
import type { JobInputRequest } from '../../../shared/types/input-request'
import type { JobSnapshotEvent, JobSteerEvent, JobWorkflowStateEvent } from '../../../shared/types/job-events'
import { EventLoopLoad } from './event-loop-load'
import { ReplayLog, type ReplayAnswer } from './replay-log'
import { LiveJob, type JobListener, type JobRecorder, type JobTerminal } from './live-job'
import type { JobEventId, JobStreamEvent, SequencedJobEvent } from './stream-events'
import { UNOBSERVED, type JobObserver } from './job-observer'

export type { JobListener } from './live-job'

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

export type { JobTerminal } from './live-job'

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
  /** Gets every numbered event, in order, with the job it leaves (the writer, which stores them). */
  record?: JobRecorder
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
    previous?.clearTimers()
    const live = new LiveJob(job, new ReplayLog(this.options.replayBytes, eventSeq, run.attempt, run.baseAttempt), run, this.options.observer, previous)
    this.jobs.set(job.id, live)
    if (live.relayed) {
      // Not an event of the job's log (a relay numbers nothing): viewers attached get the state under its id.
      if (live.listeners.size > 0) live.deliver(live.log.current({ type: 'snapshot', job }))
    } else if (live.log.baseSeq > 0 || live.listeners.size > 0) {
      live.emit({ type: 'snapshot', job, ...(run.resumed ? { reason: 'resumed' as const } : {}) })
    }
  }

  /** An event of a job another instance runs (opened with `relayed`), under the id that instance gave it. */
  relayEvent(jobId: string, id: JobEventId, event: JobStreamEvent): void {
    const live = this.jobs.get(jobId)
    if (live?.relayed && !live.finished) live.relay(id, event)
  }

  /** Sends the text waiting in the batch now (before the writer stores what viewers got). */
  flush(jobId: string): void {
    const live = this.jobs.get(jobId)
    if (live && !live.finished) live.flushText()
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
    live.addText(text, chunksReceived, this.batchWindowMs(), this.options.batchSize)
  }

  /** A tool call changed state. */
  updateToolCall(jobId: string, toolCall: ActiveToolCall): void {
    this.jobs.get(jobId)?.publish({ type: 'tool-call', toolCall })
  }

  /** Keeps the snapshot's completed tool rounds current (no event: `tool-call` events carry the news). */
  setToolRounds(jobId: string, toolRounds: ToolRoundRecord[]): void {
    const live = this.jobs.get(jobId)
    if (live) live.job = { ...live.job, toolRounds }
  }

  /** A workflow moved on, or the model read a message the person sent the running answer. */
  publish(jobId: string, event: JobWorkflowStateEvent | JobSteerEvent): void {
    this.jobs.get(jobId)?.publish(event)
  }

  /** The job asks its user something, or a request changed (claimed, answered, expired). */
  updateInputRequest(jobId: string, request: JobInputRequest): void {
    this.jobs.get(jobId)?.publish({ type: 'input-request', request })
  }


  /**
   * Ends the live run: flushes pending text, sends the status event and returns how many viewers
   * saw it. The state stays for `graceMs` after the last viewer leaves.
   */
  finish(jobId: string, terminal: JobTerminal): number {
    const live = this.jobs.get(jobId)
    if (!live || live.finished) return 0
    // Count before sending: viewers close their streams when the status arrives.
    const watchers = live.listeners.size
    live.end(terminal)
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
    live.clearTimers()
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
    return live?.job
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
      snapshot: reason => live.snapshot(reason),
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

  private scheduleCleanup(jobId: string, live: LiveJob): void {
    if (live.cleanupTimer) clearTimeout(live.cleanupTimer)
    live.cleanupTimer = setTimeout(() => {
      if (this.jobs.get(jobId) === live && live.listeners.size === 0) this.drop(jobId)
    }, this.options.graceMs)
    live.cleanupTimer.unref?.()
  }
}
