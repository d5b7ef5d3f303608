/**
 * One instance's heartbeat to a Convex deployment (convex/jobs.ts `pulse`): the progress of every
 * job this instance runs goes out together in one mutation, with its leases and the viewers it
 * counts for jobs other instances run. One pulse is in flight at a time; what arrives meanwhile
 * waits for the next, so a slow store makes pulses larger, not later, and a store 50 ms away costs
 * one round trip per pulse whatever the number of jobs. While this instance holds a lease or
 * reports viewers, a pulse goes every `intervalMs` even with nothing to write: its reply says which
 * jobs someone asked to stop and which leases were lost, so a stop reaches the runner within a
 * pulse whatever the lease.
 */
import type { ActiveToolCall } from '../../../../shared/types/job'
import type { EncodedJobEvent } from '../jobs/job-record'

/** One job's progress in a pulse. */
export interface PulseProgress {
  contentChunk?: string
  reasoningChunk?: string
  chunksReceived?: number
  activeToolCalls?: ActiveToolCall[]
  /** Run-log events as Convex keeps them (convex/lib/jobEvents.ts). */
  events?: EncodedJobEvent[]
}

/** What the deployment answers to a pulse. */
export interface PulseReply {
  /** Per progress item, in order: whether it was written (false: the job ended or another instance owns it). */
  written: boolean[]
  leases: Array<{ jobId: string, owned: boolean, abortRequested: boolean }>
  /** Requests (of `waiting`) that are no longer open. */
  settled: string[]
}

/** What one pulse carries. */
export interface PulseBatch {
  progress: Array<PulseProgress & { jobId: string }>
  held: string[]
  viewers: Array<{ jobId: string, count: number }>
  waiting: Array<{ jobId: string, requestId: string }>
}

/** Why a held job must stop: another instance has it, or someone asked to stop it. */
export type LeaseStop = 'lease-lost' | 'user'

export interface InstancePulseOptions {
  send: (batch: PulseBatch) => Promise<PulseReply>
  /** How often a pulse goes while leases are held or viewers reported. */
  intervalMs: number
  /** Characters of text one pulse carries at most (the rest goes in the next). */
  maxChars?: number
  onError?: (error: unknown) => void
}

interface PendingProgress {
  update: PulseProgress
  resolvers: Array<{ resolve: (written: boolean) => void, reject: (error: unknown) => void }>
}

const DEFAULT_MAX_CHARS = 1_000_000

const textSize = (update: PulseProgress) => (update.contentChunk?.length ?? 0) + (update.reasoningChunk?.length ?? 0)
  + (update.events ?? []).reduce((total, event) => total + (event.body?.length ?? 0), 0)

/** Two progress updates of one job as one (text appended in order, the later counters and calls). */
function merge(first: PulseProgress, second: PulseProgress): PulseProgress {
  return {
    contentChunk: (first.contentChunk ?? '') + (second.contentChunk ?? '') || undefined,
    reasoningChunk: (first.reasoningChunk ?? '') + (second.reasoningChunk ?? '') || undefined,
    chunksReceived: second.chunksReceived ?? first.chunksReceived,
    activeToolCalls: second.activeToolCalls ?? first.activeToolCalls,
    ...(first.events || second.events ? { events: [...first.events ?? [], ...second.events ?? []] } : {}),
  }
}

/** The heartbeat (see the file's comment). */
export class InstancePulse {
  private readonly pendingProgress = new Map<string, PendingProgress>()
  private readonly held = new Map<string, (reason: LeaseStop) => void>()
  private readonly viewers = new Map<string, number>()
  private readonly waitingOn = new Map<string, { jobId: string, onSettled: () => void }>()
  private inFlight = false
  private timer: ReturnType<typeof setTimeout> | undefined
  private closed = false
  private viewersChanged = false

  constructor(private readonly options: InstancePulseOptions) {}

  /** Whether a pulse is in flight or due (false once nothing is held, reported or waiting). */
  get beating(): boolean {
    return this.inFlight || this.timer !== undefined
  }

  /** Writes a job's progress with the next pulse; resolves with whether the store took it. */
  progress(jobId: string, update: PulseProgress): Promise<boolean> {
    if (this.closed) return Promise.reject(new Error('The store is closed.'))
    return new Promise((resolve, reject) => {
      const pending = this.pendingProgress.get(jobId)
      if (pending) {
        pending.update = merge(pending.update, update)
        pending.resolvers.push({ resolve, reject })
      } else {
        this.pendingProgress.set(jobId, { update, resolvers: [{ resolve, reject }] })
      }
      this.kick(true)
    })
  }

  /** Keeps the lease of `jobId` renewed until the returned function is called; `onStop` says why to stop. */
  hold(jobId: string, onStop: (reason: LeaseStop) => void): () => void {
    this.held.set(jobId, onStop)
    this.kick(false)
    return () => {
      if (this.held.get(jobId) === onStop) this.held.delete(jobId)
    }
  }

  /** Tells `onSettled` when request `requestId` of `jobId` is answered or closed on any instance (within a pulse), until the returned function is called. */
  watchRequest(jobId: string, requestId: string, onSettled: () => void): () => void {
    const entry = { jobId, onSettled }
    this.waitingOn.set(requestId, entry)
    this.kick(false)
    return () => {
      if (this.waitingOn.get(requestId) === entry) this.waitingOn.delete(requestId)
    }
  }

  /**
   * Reports how many people here watch `jobId` (run elsewhere) with every pulse; 0 withdraws the
   * report; 'ended' stops reporting and lets the last count expire in the store (the job's runner
   * reads it as the job ends, so it must not be withdrawn then).
   */
  reportViewers(jobId: string, count: number | 'ended'): void {
    if (count === 'ended') {
      this.viewers.delete(jobId)
      return
    }
    if (this.viewers.get(jobId) === count) return
    this.viewers.set(jobId, count)
    // A changed count goes at once: the runner may be about to read it as its job ends.
    this.viewersChanged = true
    this.kick(true)
  }

  /** Stops the heartbeat; progress still waiting is refused. */
  close(): void {
    this.closed = true
    if (this.timer) clearTimeout(this.timer)
    for (const pending of this.pendingProgress.values()) for (const { reject } of pending.resolvers) reject(new Error('The store is closed.'))
    this.pendingProgress.clear()
  }

  /** Sends now when there is progress (or `now`), else keeps the heartbeat going while there is something to keep. */
  private kick(now: boolean): void {
    if (this.closed || this.inFlight) return
    if (now && (this.pendingProgress.size > 0 || this.viewersChanged)) {
      if (this.timer) clearTimeout(this.timer)
      this.timer = undefined
      void this.send()
      return
    }
    if (this.timer || (this.held.size === 0 && this.viewers.size === 0 && this.pendingProgress.size === 0 && this.waitingOn.size === 0)) return
    this.timer = setTimeout(() => {
      this.timer = undefined
      void this.send()
    }, this.options.intervalMs)
    this.timer.unref?.()
  }

  private takeBatch(): { batch: PulseBatch, taken: PendingProgress[], reported: Map<string, number> } {
    const maxChars = this.options.maxChars ?? DEFAULT_MAX_CHARS
    const batch: PulseBatch = { progress: [], held: [...this.held.keys()], viewers: [], waiting: [...this.waitingOn].map(([requestId, { jobId }]) => ({ jobId, requestId })) }
    const taken: PendingProgress[] = []
    let chars = 0
    for (const [jobId, pending] of this.pendingProgress) {
      if (taken.length > 0 && chars + textSize(pending.update) > maxChars) break
      chars += textSize(pending.update)
      batch.progress.push({ jobId, ...pending.update })
      taken.push(pending)
      this.pendingProgress.delete(jobId)
    }
    const reported = new Map(this.viewers)
    this.viewersChanged = false
    for (const [jobId, count] of reported) batch.viewers.push({ jobId, count })
    return { batch, taken, reported }
  }

  private async send(): Promise<void> {
    if (this.closed || this.inFlight) return
    this.inFlight = true
    const { batch, taken, reported } = this.takeBatch()
    try {
      const reply = await this.options.send(batch)
      taken.forEach((pending, index) => pending.resolvers.forEach(({ resolve }) => resolve(reply.written[index] ?? false)))
      // A withdrawn count (0) is sent once; a count changed meanwhile goes with the next pulse.
      for (const [jobId, count] of reported) if (count === 0 && this.viewers.get(jobId) === 0) this.viewers.delete(jobId)
      for (const requestId of reply.settled ?? []) {
        const entry = this.waitingOn.get(requestId)
        this.waitingOn.delete(requestId)
        entry?.onSettled()
      }
      for (const lease of reply.leases) {
        const onStop = this.held.get(lease.jobId)
        if (!onStop) continue
        if (!lease.owned) {
          this.held.delete(lease.jobId)
          onStop('lease-lost')
        } else if (lease.abortRequested) {
          onStop('user')
        }
      }
    } catch (error) {
      for (const pending of taken) pending.resolvers.forEach(({ reject }) => reject(error))
      this.options.onError?.(error)
    } finally {
      this.inFlight = false
    }
    this.kick(true)
  }
}
