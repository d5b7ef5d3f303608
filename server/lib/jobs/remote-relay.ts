/**
 * Live view of a job that another instance runs (multi-instance deployments). Opens the job in this
 * instance's hub from its stored state (the row and the run log agree at every write, so the row
 * is the job as of its last kept event), then tails the job's run log with backoff (fast while
 * events come, slower when idle) and hands each event to the hub under the id its runner gave it:
 * local viewers get the same events with the same ids as the runner's own, so a viewer moving
 * between instances resumes exactly. An event the log omits (too large) or a job that ended (its
 * log is folded into its row) is resynced from the row. Tells the store how many people watch here
 * (so the runner knows the job was watched). Stops when the job ends or nobody here watches any more.
 */
import type { BackgroundJob, PublicJob } from '../../../shared/types/job'
import type { JobInputRequest } from '../../../shared/types/input-request'
import { toPublicJob } from './public-job'
import { attemptOfEvent } from './resume-from-log'
import type { JobLiveHub } from './live-hub'
import type { JobEventsRead, JobWatch } from '../stores/jobs/job-store'

/** Options of one relay. */
export interface RemoteJobRelayOptions {
  jobId: string
  hub: JobLiveHub
  /** Reads the job's state from the shared store (its text whole). */
  watch: (jobId: string) => Promise<JobWatch | null>
  /** Reads the job's run log from a number on. */
  readEvents: (jobId: string, fromSeq: number, limit: number) => Promise<JobEventsRead | null>
  /** Reads what the job asked its person (shown with the job when it is opened or resynced; none given: not shown then). */
  inputRequests?: (jobId: string) => Promise<JobInputRequest[]>
  /** Tells the store how many people here watch the job (0 once nobody does; 'ended': stop reporting, let the last count expire). */
  reportViewers?: (count: number | 'ended') => void
  minIntervalMs?: number
  maxIntervalMs?: number
  onError?: (error: unknown) => void
}

/** Events one poll reads at most. */
const EVENTS_PER_POLL = 500

/** Starts relaying `jobId`; resolves once the job is in the hub (or known to be gone). Returns a stopper. */
export async function startRemoteJobRelay(options: RemoteJobRelayOptions): Promise<{ stop: () => void }> {
  const relay = new RemoteJobRelay(options)
  await relay.begin()
  return { stop: () => relay.stop() }
}

/** What a relay has published, and its polling. */
class RemoteJobRelay {
  private readonly minIntervalMs: number
  private readonly maxIntervalMs: number
  private stopped = false
  private timer: ReturnType<typeof setTimeout> | undefined
  /** The number of the next event to read. */
  private next = 1
  private idlePolls = 0
  private interval: number
  private reported = 0

  constructor(private readonly options: RemoteJobRelayOptions) {
    this.minIntervalMs = options.minIntervalMs ?? 100
    this.maxIntervalMs = options.maxIntervalMs ?? 1_000
    this.interval = this.minIntervalMs
  }

  /** Opens the job in the hub and starts polling (an ended job is finished at once). */
  async begin(): Promise<void> {
    const job = await this.resync()
    if (!job) return this.stop()
    if (job.status !== 'streaming') return await this.end(job)
    // Counted at once: a job that ends soon after is read as watched.
    this.report(this.options.hub.viewerCount(this.options.jobId))
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

  /** (Re)opens the job in the hub from its stored row, as of the last event kept; null when it is gone. */
  private async resync(): Promise<BackgroundJob | null> {
    const { jobId, hub } = this.options
    const watched = await this.options.watch(jobId)
    if (!watched) return null
    const job: BackgroundJob = { ...watched.job, content: watched.content, reasoning: watched.reasoning }
    const seq = job.eventSeq ?? 0
    // The run that wrote that event: a viewer holding its id resumes from here.
    const baseAttempt = job.status === 'streaming' ? await attemptOfEvent({ readJobEvents: this.options.readEvents }, jobId, seq) : undefined
    hub.open(await this.shown(job), { attempt: job.resumeCount, relayed: true, ...(baseAttempt === undefined ? {} : { baseAttempt }) })
    this.next = seq + 1
    return job
  }

  /** The job as viewers see it, with what it asked its person (kept beside the row). */
  private async shown(job: BackgroundJob): Promise<PublicJob> {
    const requests = await this.options.inputRequests?.(job.id).catch(() => [])
    return { ...toPublicJob(job), ...(requests?.length ? { inputRequests: requests } : {}) }
  }

  /** The job ended: viewers get its final state (what the log no longer holds), then the status. */
  private async end(job: BackgroundJob): Promise<void> {
    const { hub, jobId } = this.options
    const shown = hub.snapshot(jobId)
    const final = await this.shown({ ...job, status: 'streaming' })
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
    if (shown && (shown.content !== final.content || shown.reasoning !== final.reasoning || !same(shown.activeToolCalls, final.activeToolCalls) || !same(shown.inputRequests ?? [], final.inputRequests ?? []))) {
      hub.open(final, { attempt: job.resumeCount, relayed: true })
    }
    hub.finish(jobId, { status: job.status as Exclude<BackgroundJob['status'], 'streaming'>, finishReason: job.finishReason, error: job.error, usage: job.usage, completedAt: job.completedAt ?? Date.now() })
    this.stop(true)
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

  /** Hands the hub the events after the last one relayed; true when there were any. */
  private async relayEvents(read: JobEventsRead): Promise<boolean> {
    const { hub, jobId } = this.options
    for (const stored of read.events) {
      if (stored.seq < this.next) continue
      this.next = stored.seq + 1
      if (stored.superseded) continue
      if (!stored.event) {
        // Not kept (too large): the row has it.
        await this.resync()
        return true
      }
      hub.relayEvent(jobId, stored, stored.event)
    }
    return read.events.length > 0
  }

  /** One poll: stops when nobody here watches or the job is gone; polls faster while events come. */
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
      const read = await this.options.readEvents(jobId, this.next, EVENTS_PER_POLL)
      if (this.stopped) return
      if (!read) {
        hub.drop(jobId)
        return this.stop()
      }
      const changed = await this.relayEvents(read)
      if (this.stopped) return
      if (read.status !== 'streaming') {
        const final = await this.options.watch(jobId)
        if (this.stopped) return
        if (!final) {
          hub.drop(jobId)
          return this.stop()
        }
        return await this.end({ ...final.job, content: final.content, reasoning: final.reasoning })
      }
      this.interval = changed ? this.minIntervalMs : Math.min(this.maxIntervalMs, Math.round(this.interval * 1.5))
    } catch (error) {
      this.options.onError?.(error)
      this.interval = this.maxIntervalMs
    }
    this.schedule(this.interval)
  }
}
