/**
 * Live state of the jobs this process runs, fanned out to any number of viewers. Text deltas are
 * batched so that batching costs latency only under load: a delta that arrives when no text went
 * out within the current window is sent at once (leading edge); deltas arriving while a send is
 * recent are coalesced until the window ends or `batchSize` deltas wait (trailing edge). The
 * window is `batchIntervalMs` times `batchShare()`: with `adaptive`, the event loop's load decides
 * (no wait when idle, the whole interval when busy: event-loop-load.ts); otherwise always the whole
 * interval. Tool-call, workflow and status events flush the batch first so viewers see everything
 * in order. Each event is serialised once and kept in a
 * byte-bounded replay log (replay-log.ts), so a viewer reconnecting with `Last-Event-ID` continues exactly.
 * State of a finished job is dropped once its last viewer has left (after `graceMs`).
 *
 * Over 250 lines on purpose: batching, ordering and fan-out share one per-job state, and the
 * ordering guarantee (pending text flushes before any other event) holds only if they stay together.
 */
import type { ActiveToolCall, JobError, JobStatus, PublicJob, ToolRoundRecord } from '../../../shared/types/job'
import type { WorkflowState } from '../../../shared/types/workflow'
import type { JobInputRequest } from '../../../shared/types/input-request'
import type { Usage } from '../openrouter/types'
import { EventLoopLoad } from './event-loop-load'
import { ReplayLog } from './replay-log'
import type { JobStreamEvent, SequencedJobEvent } from './stream-events'
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

/** What a new viewer gets: the events it missed, or a snapshot when they cannot be replayed. */
export interface JobSubscription {
  /** Events after `Last-Event-ID`, in order; undefined when a snapshot is needed instead. */
  replay?: SequencedJobEvent[]
  snapshot?: SequencedJobEvent
  /** True when the job has finished: send the above, then close. */
  finished: boolean
  /** The status event when the job has finished (send it after a snapshot, then close). */
  statusEvent?: SequencedJobEvent
  dispose: () => void
}

interface LiveJob {
  base: PublicJob
  log: ReplayLog
  content: string
  reasoning: string
  chunksReceived: number
  toolCalls: ActiveToolCall[]
  workflowState?: WorkflowState
  /** What the job asked its user during this run (open and settled). */
  inputRequests: JobInputRequest[]
  terminal?: JobTerminal
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
  snapshotCache?: { seq: number, base: PublicJob, sequenced: SequencedJobEvent }
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
   * Starts (or restarts, on resume) the live run of a job from its stored state. Viewers already
   * attached get a snapshot of the new run.
   */
  open(job: PublicJob): void {
    const previous = this.jobs.get(job.id)
    if (previous) this.clearTimers(previous)
    const live: LiveJob = {
      base: job,
      log: new ReplayLog(this.options.replayBytes),
      content: job.content,
      reasoning: job.reasoning,
      chunksReceived: job.chunksReceived,
      toolCalls: [...job.activeToolCalls],
      workflowState: job.workflowState,
      inputRequests: [...job.inputRequests ?? []],
      terminal: undefined,
      listeners: previous?.listeners ?? new Set(),
      detachHandlers: previous?.detachHandlers ?? new Map(),
      pendingContent: '',
      pendingReasoning: '',
      pendingChunks: 0,
      pendingChunksReceived: job.chunksReceived,
      lastBroadcastAt: 0,
    }
    this.jobs.set(job.id, live)
    if (live.listeners.size > 0) this.broadcast(live, { type: 'snapshot', job: this.snapshotOf(live) })
  }

  /** Adds streamed text; viewers get it batched. */
  appendText(jobId: string, text: { content?: string, reasoning?: string }, chunksReceived: number): void {
    const live = this.jobs.get(jobId)
    if (!live || live.terminal) return
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
    if (!live || live.terminal) return
    this.flushText(live)
    const index = live.toolCalls.findIndex(call => call.id === toolCall.id && call.round === toolCall.round)
    if (index >= 0) live.toolCalls[index] = toolCall
    else live.toolCalls.push(toolCall)
    this.broadcast(live, { type: 'tool-call', toolCall })
  }

  /** Keeps the snapshot's completed tool rounds current (no event: `tool-call` events carry the news). */
  setToolRounds(jobId: string, toolRounds: ToolRoundRecord[]): void {
    const live = this.jobs.get(jobId)
    if (live) live.base = { ...live.base, toolRounds }
  }

  /** A workflow moved on. */
  updateWorkflowState(jobId: string, workflowState: WorkflowState): void {
    const live = this.jobs.get(jobId)
    if (!live || live.terminal) return
    this.flushText(live)
    live.workflowState = workflowState
    this.broadcast(live, { type: 'workflow-state', workflowState })
  }

  /** The job asks its user something, or a request changed (claimed, answered, expired). */
  updateInputRequest(jobId: string, request: JobInputRequest): void {
    const live = this.jobs.get(jobId)
    if (!live || live.terminal) return
    this.flushText(live)
    const index = live.inputRequests.findIndex(item => item.id === request.id)
    if (index >= 0) live.inputRequests[index] = request
    else live.inputRequests.push(request)
    this.broadcast(live, { type: 'input-request', request })
  }

  /**
   * Ends the live run: flushes pending text, sends the status event and returns how many viewers
   * saw it. The state stays for `graceMs` after the last viewer leaves.
   */
  finish(jobId: string, terminal: JobTerminal): number {
    const live = this.jobs.get(jobId)
    if (!live || live.terminal) return 0
    this.flushText(live)
    live.terminal = terminal
    live.toolCalls = live.toolCalls.map(call => call.status === 'pending' || call.status === 'running'
      ? { ...call, status: 'error', error: 'stopped before it finished', finishedAt: terminal.completedAt }
      : call)
    // Count before broadcasting: viewers close their streams when the status arrives.
    const watchers = live.listeners.size
    live.statusEvent = this.broadcast(live, { type: 'status', ...terminal, contentLength: live.content.length })
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
   * Attaches a viewer. With a `lastEventId` of this run still in the replay log, the viewer gets
   * exactly the events after it; otherwise a snapshot. Either way no event is missed or repeated,
   * because the listener is attached in the same tick. The disposer is idempotent.
   */
  subscribe(jobId: string, listener: JobListener, lastEventId?: { epoch: string, seq: number }, onDetached?: () => void): JobSubscription | undefined {
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
      if (live.listeners.size === 0 && live.terminal && this.jobs.get(jobId) === live) this.scheduleCleanup(jobId, live)
    }
    const replay = lastEventId ? live.log.after(lastEventId) : undefined
    if (replay) return { replay, finished: Boolean(live.terminal), dispose }
    return { snapshot: this.currentSnapshot(live), finished: Boolean(live.terminal), statusEvent: live.statusEvent, dispose }
  }

  /** Clears every timer and all state, detaching every viewer (server shutdown). */
  close(): void {
    for (const jobId of [...this.jobs.keys()]) this.drop(jobId)
  }

  /** The snapshot of now as a sequenced event; viewers arriving between two events share one. */
  private currentSnapshot(live: LiveJob): SequencedJobEvent {
    const cached = live.snapshotCache
    // Every change of what a snapshot shows either adds an event (a new seq) or replaces `base`.
    if (cached && cached.seq === live.log.lastSeq && cached.base === live.base) return cached.sequenced
    const sequenced = live.log.current({ type: 'snapshot', job: this.snapshotOf(live) })
    live.snapshotCache = { seq: sequenced.seq, base: live.base, sequenced }
    return sequenced
  }

  private snapshotOf(live: LiveJob): PublicJob {
    const job: PublicJob = {
      ...live.base,
      content: live.content,
      reasoning: live.reasoning,
      chunksReceived: live.chunksReceived,
      activeToolCalls: [...live.toolCalls],
    }
    if (live.workflowState) job.workflowState = live.workflowState
    if (live.inputRequests.length > 0) job.inputRequests = [...live.inputRequests]
    if (live.terminal) {
      job.status = live.terminal.status
      job.completedAt = live.terminal.completedAt
      if (live.terminal.finishReason) job.finishReason = live.terminal.finishReason
      if (live.terminal.error) job.error = live.terminal.error
      if (live.terminal.usage) job.usage = live.terminal.usage
    }
    return job
  }

  private flushText(live: LiveJob): void {
    if (live.batchTimer) {
      clearTimeout(live.batchTimer)
      live.batchTimer = undefined
    }
    if (live.pendingChunks === 0) return
    const event: JobStreamEvent = {
      type: 'delta',
      contentOffset: live.content.length,
      reasoningOffset: live.reasoning.length,
      chunksReceived: live.pendingChunksReceived,
    }
    if (live.pendingContent) event.content = live.pendingContent
    if (live.pendingReasoning) event.reasoning = live.pendingReasoning
    live.content += live.pendingContent
    live.reasoning += live.pendingReasoning
    live.chunksReceived = live.pendingChunksReceived
    live.pendingContent = ''
    live.pendingReasoning = ''
    this.options.observer.textBatchSent(live.pendingChunks)
    live.pendingChunks = 0
    live.lastBroadcastAt = Date.now()
    this.broadcast(live, event)
  }

  private broadcast(live: LiveJob, event: JobStreamEvent): SequencedJobEvent {
    const sequenced = live.log.append(event)
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
