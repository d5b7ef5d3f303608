/**
 * One job's live state in the hub (live-hub.ts): the job as its viewers have been sent it (the
 * fold of the events so far, shared/job-state.ts), its numbered events (replay-log.ts), the text
 * waiting in the batch, and its viewers. Every event goes out the same way: numbered, folded,
 * handed to the run's recorder (its writer), then to each viewer; pending text is sent before any
 * other event, so the order holds.
 */
import type { JobStatus, PublicJob } from '../../../shared/types/job'
import type { JobSnapshotEvent } from '../../../shared/types/job-events'
import { applyJobEvent } from '../../../shared/job-state'
import type { JobError } from '../../../shared/types/job'
import type { Usage } from '../openrouter/types'
import type { ReplayLog } from './replay-log'
import type { JobEventId, JobStreamEvent, SequencedJobEvent } from './stream-events'
import type { JobObserver } from './job-observer'

/** Receives every event of a job after subscribing. */
export type JobListener = (event: SequencedJobEvent) => void

/** Receives every event of a job this process runs, with the job as the fold of its events leaves it. */
export type JobRecorder = (event: SequencedJobEvent, job: PublicJob) => void

/** How a job ended, as the status event reports it. */
export interface JobTerminal {
  status: Exclude<JobStatus, 'streaming'>
  finishReason?: string
  error?: JobError
  usage?: Usage
  completedAt: number
}

/** A live job's state and how its events go out. */
export class LiveJob {
  /** The job as viewers have been sent it (text still in the batch excluded). */
  job: PublicJob
  record: JobRecorder | undefined
  /** Another instance runs it: its events come from that instance's log (`relay`), under their ids. */
  readonly relayed: boolean
  finished = false
  statusEvent: SequencedJobEvent | undefined
  readonly listeners: Set<JobListener>
  /** Called for listeners still attached when the state is dropped (shutdown). */
  readonly detachHandlers: Map<JobListener, () => void>
  cleanupTimer: ReturnType<typeof setTimeout> | undefined
  private pendingContent = ''
  private pendingReasoning = ''
  private pendingChunks = 0
  private pendingChunksReceived: number
  private lastBroadcastAt = 0
  private batchTimer: ReturnType<typeof setTimeout> | undefined
  /** The last snapshot made, reused (one frame in memory) while nothing has changed since. */
  private snapshotCache: { job: PublicJob, reason?: JobSnapshotEvent['reason'], sequenced: SequencedJobEvent } | undefined

  constructor(job: PublicJob, readonly log: ReplayLog, run: { record?: JobRecorder, relayed?: boolean }, private readonly observer: JobObserver, previous?: LiveJob) {
    this.job = job
    this.record = run.record
    this.relayed = run.relayed ?? false
    this.listeners = previous?.listeners ?? new Set()
    this.detachHandlers = previous?.detachHandlers ?? new Map()
    this.pendingChunksReceived = job.chunksReceived
  }

  /** Numbers `event`, folds it in, and sends it (to the recorder, then the viewers). */
  emit(event: JobStreamEvent): SequencedJobEvent {
    const sequenced = this.log.append(event)
    this.job = applyJobEvent(this.job, event)
    this.record?.(sequenced, this.job)
    return this.deliver(sequenced)
  }

  /**
   * An event of a job this process runs: the text in the batch goes first. A job run elsewhere
   * gets its events (its requests too) from its runner's log (`relay`), never from here; an ended
   * one takes none.
   */
  publish(event: JobStreamEvent): void {
    if (this.finished || this.relayed) return
    this.flushText()
    this.emit(event)
  }

  /** An event of another instance's log, under the id it gave it. */
  relay(id: JobEventId, event: JobStreamEvent): void {
    const item = this.log.appendAs(event, id)
    this.job = applyJobEvent(this.job, event)
    this.deliver(item)
  }

  /** Sends `sequenced` to every viewer (a broken viewer does not stop the others). */
  deliver(sequenced: SequencedJobEvent): SequencedJobEvent {
    if (this.listeners.size > 0) this.observer.frameSent(sequenced.event.type, this.listeners.size)
    for (const listener of this.listeners) {
      try {
        listener(sequenced)
      } catch {
        // Its connection cleans itself up.
      }
    }
    return sequenced
  }

  /**
   * Adds streamed text to the batch: sent at once when nothing went out within `windowMs` (the
   * leading edge) or `batchSize` pieces wait, else when the window since the last send has passed.
   */
  addText(text: { content?: string, reasoning?: string }, chunksReceived: number, windowMs: number, batchSize: number): void {
    if (text.content) this.pendingContent += text.content
    if (text.reasoning) this.pendingReasoning += text.reasoning
    this.pendingChunks++
    this.pendingChunksReceived = chunksReceived
    const sinceLast = Date.now() - this.lastBroadcastAt
    if (windowMs <= 0 || this.pendingChunks >= batchSize || sinceLast >= windowMs) {
      this.flushText()
    } else if (!this.batchTimer) {
      this.batchTimer = setTimeout(() => {
        this.batchTimer = undefined
        this.flushText()
      }, windowMs - sinceLast)
      this.batchTimer.unref?.()
    }
  }

  /** Sends the text waiting in the batch as one delta. */
  flushText(): void {
    if (this.batchTimer) {
      clearTimeout(this.batchTimer)
      this.batchTimer = undefined
    }
    if (this.pendingChunks === 0) return
    const event: JobStreamEvent = {
      type: 'delta',
      contentOffset: this.job.content.length,
      reasoningOffset: this.job.reasoning.length,
      chunksReceived: this.pendingChunksReceived,
    }
    if (this.pendingContent) event.content = this.pendingContent
    if (this.pendingReasoning) event.reasoning = this.pendingReasoning
    this.pendingContent = ''
    this.pendingReasoning = ''
    this.observer.textBatchSent(this.pendingChunks)
    this.pendingChunks = 0
    this.lastBroadcastAt = Date.now()
    this.emit(event)
  }

  /** Ends the job: pending text, then the status event. */
  end(terminal: JobTerminal): void {
    this.flushText()
    this.finished = true
    this.statusEvent = this.emit({ type: 'status', ...terminal, contentLength: this.job.content.length })
  }

  /** The snapshot of now as a sequenced event; viewers arriving between two events share one. */
  snapshot(reason?: JobSnapshotEvent['reason']): SequencedJobEvent {
    const cached = this.snapshotCache
    // Every change of what a snapshot shows replaces `job`.
    if (cached && cached.job === this.job && cached.reason === reason) return cached.sequenced
    const sequenced = this.log.current({ type: 'snapshot', job: this.job, ...(reason ? { reason } : {}) })
    this.snapshotCache = { job: this.job, reason, sequenced }
    return sequenced
  }

  clearTimers(): void {
    if (this.batchTimer) clearTimeout(this.batchTimer)
    if (this.cleanupTimer) clearTimeout(this.cleanupTimer)
    this.batchTimer = undefined
    this.cleanupTimer = undefined
  }
}
