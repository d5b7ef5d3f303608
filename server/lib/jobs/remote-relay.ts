/**
 * Live view of a job that another instance runs (multi-instance deployments). Polls the store
 * with backoff (fast while text flows, slower when idle) for what is new since its cursor (the
 * text after what it has, so a poll costs what changed, not the answer's length), tells the store
 * how many people watch here (so the runner knows the job was watched), and replays it into this
 * instance's live hub, so local viewers get the same snapshot, deltas, tool-call, input-request and
 * status events as for a local job (requests are read only while a tool call or a workflow runs,
 * the only times a job can wait for its person). Stops when the job ends or nobody here watches any more.
 */
import { randomInt } from 'node:crypto'
import { type ActiveToolCall, type BackgroundJob } from '../../../shared/types/job'
import type { JobInputRequest } from '../../../shared/types/input-request'
import { toPublicJob } from './public-job'
import type { JobLiveHub } from './live-hub'
import type { JobTextCursor, JobWatch } from '../stores/jobs/job-store'

/** Options of one relay. */
export interface RemoteJobRelayOptions {
  jobId: string
  hub: JobLiveHub
  /** Reads the job's state from the shared store, with its text after `since` (all of it without). */
  watch: (jobId: string, since?: JobTextCursor) => Promise<JobWatch | null>
  /** Tells the store how many people here watch the job (0 once nobody does; 'ended': stop reporting, let the last count expire). */
  reportViewers?: (count: number | 'ended') => void
  /** Reads what the job asked its person (none given: requests are not relayed). */
  inputRequests?: (jobId: string) => Promise<JobInputRequest[]>
  minIntervalMs?: number
  maxIntervalMs?: number
  onError?: (error: unknown) => void
}

const callKey = (call: ActiveToolCall) => `${call.round}:${call.id}`

/**
 * The attempt a relay's events are numbered under: never one of a real run's (those count
 * restarts), so an id a viewer got here is replayed exactly here, and elsewhere reads as diverged
 * (a snapshot) rather than as the runner's event of that number, which carried other text.
 */
function relayAttempt(): number {
  return 100_000_000 + randomInt(899_999_999)
}

/** Starts relaying `jobId`; resolves once the first snapshot is in the hub. Returns a stopper. */
export async function startRemoteJobRelay(options: RemoteJobRelayOptions): Promise<{ stop: () => void }> {
  const watched = await options.watch(options.jobId)
  const first = watched ? { ...watched.job, content: watched.content, reasoning: watched.reasoning } : null
  const relay = new RemoteJobRelay(options, first, watched?.cursor)
  if (first) await relay.begin(first)
  return { stop: () => relay.stop() }
}

/** What a relay has published, and its polling. */
class RemoteJobRelay {
  private readonly minIntervalMs: number
  private readonly maxIntervalMs: number
  private stopped = false
  private timer: ReturnType<typeof setTimeout> | undefined
  private content = ''
  private reasoning = ''
  private calls = new Map<string, string>()
  private readonly requests = new Map<string, string>()
  private idlePolls = 0
  private interval: number
  private reported = 0

  constructor(private readonly options: RemoteJobRelayOptions, first: BackgroundJob | null, private cursor: JobTextCursor | undefined) {
    this.minIntervalMs = options.minIntervalMs ?? 100
    this.maxIntervalMs = options.maxIntervalMs ?? 1_000
    this.interval = this.minIntervalMs
    if (first) {
      this.content = first.content
      this.reasoning = first.reasoning
      this.calls = new Map(first.activeToolCalls.map(call => [callKey(call), JSON.stringify(call)]))
    }
  }

  /** Opens the job in the hub and starts polling (an ended job is finished at once). */
  async begin(first: BackgroundJob): Promise<void> {
    this.options.hub.open(toPublicJob(first), { attempt: relayAttempt() })
    if (first.status !== 'streaming') {
      this.apply(first)
      return
    }
    // Counted at once: a job that ends soon after is read as watched.
    this.report(this.options.hub.viewerCount(this.options.jobId))
    await this.relayRequests(first).catch(error => this.options.onError?.(error))
    this.schedule(this.minIntervalMs)
  }

  /** Stops polling; `ended`: the job ended, and the last count stands until it expires (the runner reads it as it ends). */
  stop(ended = false): void {
    if (this.stopped) return
    this.stopped = true
    if (this.timer) clearTimeout(this.timer)
    if (ended) this.options.reportViewers?.('ended')
    else this.report(0)
  }

  private report(count: number): void {
    if (count === this.reported) return
    this.reported = count
    this.options.reportViewers?.(count)
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return
    this.timer = setTimeout(() => void this.poll(), delayMs)
    this.timer.unref?.()
  }

  /** Whether the job may be waiting for its person (requests are read only then). */
  private static mayWait(job: BackgroundJob): boolean {
    return job.status === 'streaming' && (job.type === 'workflow' || job.activeToolCalls.some(call => call.status === 'pending' || call.status === 'running'))
  }

  /** Publishes the requests that changed since the last poll; true when one did. */
  private async relayRequests(job: BackgroundJob): Promise<boolean> {
    if (!this.options.inputRequests || !RemoteJobRelay.mayWait(job)) return false
    let changed = false
    for (const request of await this.options.inputRequests(this.options.jobId)) {
      const serialized = JSON.stringify(request)
      if (this.requests.get(request.id) === serialized) continue
      this.requests.set(request.id, serialized)
      this.options.hub.updateInputRequest(this.options.jobId, request)
      changed = true
    }
    return changed
  }

  /** Publishes what changed in `job` since the last poll; true when something did. */
  private apply(job: BackgroundJob): boolean {
    const { hub, jobId } = this.options
    let changed = false
    if (!job.content.startsWith(this.content) || !job.reasoning.startsWith(this.reasoning)) {
      // The job was resumed from a checkpoint and rewound its text: start over from a snapshot.
      hub.open(toPublicJob({ ...job, status: 'streaming' }), { attempt: relayAttempt() })
      changed = true
    } else if (job.content.length > this.content.length || job.reasoning.length > this.reasoning.length) {
      hub.appendText(jobId, { content: job.content.slice(this.content.length), reasoning: job.reasoning.slice(this.reasoning.length) }, job.chunksReceived)
      changed = true
    }
    this.content = job.content
    this.reasoning = job.reasoning
    const next = new Map<string, string>()
    for (const call of job.activeToolCalls) {
      const serialized = JSON.stringify(call)
      next.set(callKey(call), serialized)
      if (this.calls.get(callKey(call)) !== serialized) {
        hub.updateToolCall(jobId, call)
        changed = true
      }
    }
    this.calls = next
    if (job.status !== 'streaming') {
      hub.finish(jobId, { status: job.status, finishReason: job.finishReason, error: job.error, usage: job.usage, completedAt: job.completedAt ?? Date.now() })
      this.stop(true)
    }
    return changed
  }

  /** One poll: stops when nobody here watches or the job is gone; polls faster while things change. */
  private async poll(): Promise<void> {
    const { hub, jobId } = this.options
    if (this.stopped) return
    const viewers = hub.viewerCount(jobId)
    this.report(viewers)
    if (viewers > 0) this.idlePolls = 0
    else if (++this.idlePolls >= 3) {
      hub.drop(jobId)
      return this.stop()
    }
    try {
      const watched = await this.options.watch(jobId, this.cursor)
      if (this.stopped) return
      if (!watched) {
        hub.drop(jobId)
        return this.stop()
      }
      this.cursor = watched.cursor
      const job: BackgroundJob = {
        ...watched.job,
        content: watched.restarted ? watched.content : this.content + watched.content,
        reasoning: watched.restarted ? watched.reasoning : this.reasoning + watched.reasoning,
      }
      const changed = this.apply(job)
      const asked = !this.stopped && await this.relayRequests(job)
      this.interval = changed || asked ? this.minIntervalMs : Math.min(this.maxIntervalMs, Math.round(this.interval * 1.5))
    } catch (error) {
      this.options.onError?.(error)
      this.interval = this.maxIntervalMs
    }
    this.schedule(this.interval)
  }
}
