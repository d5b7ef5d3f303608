/**
 * Several instances on one shared store (Convex): each running job is leased by the instance
 * that runs it and renewed by the store's heartbeat; an abort asked for on another instance
 * arrives through that heartbeat's reply; a job another instance runs is relayed into the local
 * hub so viewers here see it live (and are counted there). Only used when the store leases jobs.
 */
import type { JobLeaseStore, JobStore, JobTextCursor } from '../stores/jobs/job-store'
import type { JobLiveHub } from './live-hub'
import { startRemoteJobRelay } from './remote-relay'
import type { JobStopReason } from './run/end'
import type { BackgroundJob } from '../../../shared/types/job'
import type { JobParking } from './waits/job-inputs'

/** Where lease problems are reported. */
type WarnLogger = { warn: (message: string, ...details: unknown[]) => void }

/** The lease side of the job manager. */
export class JobLeases {
  private readonly relays = new Map<string, Promise<{ stop: () => void }>>()

  constructor(private readonly store: JobStore & JobLeaseStore, private readonly hub: JobLiveHub, private readonly logger?: WarnLogger) {}

  /** How long a claim lasts without renewal. */
  get leaseMs(): number {
    return this.store.leaseMs
  }

  /** How often the store renews a running job's lease (a third of it; the heartbeat checks more often). */
  get renewEveryMs(): number {
    return Math.max(100, Math.floor(this.store.leaseMs / 3))
  }

  /** Streaming jobs whose instance died (their lease expired). */
  listOrphanedJobs(): Promise<BackgroundJob[]> {
    return this.store.listOrphanedJobs()
  }

  /** Takes over a job; false when another instance got it first. */
  claim(jobId: string): Promise<boolean> {
    return this.store.claimJob(jobId)
  }

  /**
   * Keeps the lease of a job this instance runs until the returned stopper is called. A lost
   * lease aborts the run with `lease-lost`; an abort requested elsewhere aborts it with `user`.
   */
  keepRenewed(jobId: string, controller: AbortController): () => void {
    return this.store.holdLease(jobId, reason => controller.abort(reason satisfies JobStopReason))
  }

  /**
   * Asks the instance running `jobId` to stop it and waits (up to two renewal periods) for it to
   * end there, which takes one heartbeat of that instance. Returns true when it ended; false when
   * it did not (that instance is gone), so the caller ends it in the store.
   */
  async abortElsewhere(jobId: string): Promise<boolean> {
    if (!(await this.store.requestAbort(jobId))) return false
    const deadline = Date.now() + this.renewEveryMs * 2 + 500
    let cursor: JobTextCursor | undefined
    while (Date.now() < deadline) {
      const watched = await this.store.watchJob(jobId, cursor)
      if (!watched || watched.job.status !== 'streaming') return true
      cursor = watched.cursor
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    return false
  }

  /**
   * `local` parking (this instance's slots) that also tells the store, so a job waiting for a
   * person stops counting as running against the caps every instance checks (and counts again once answered).
   */
  parkingFor(local: JobParking): JobParking {
    const tell = (jobId: string, parked: boolean) => this.store.setParked(jobId, parked).catch(error => this.logger?.warn(`Job ${jobId}: the store could not be told it ${parked ? 'waits' : 'runs again'}`, error))
    return {
      park: (jobId) => {
        const parked = local.park(jobId)
        if (parked) void tell(jobId, true)
        return parked
      },
      unpark: async (jobId, signal) => {
        await local.unpark(jobId, signal)
        await tell(jobId, false)
      },
    }
  }

  /** Calls `onSettled` when a request a job here waits on is answered on another instance (within a heartbeat). */
  watchRequest(jobId: string, requestId: string, onSettled: () => void): () => void {
    return this.store.watchInputRequest(jobId, requestId, onSettled)
  }

  /** Makes a job another instance runs live in this instance's hub (fed by tailing its run log in the store). */
  async follow(job: BackgroundJob): Promise<void> {
    let relay = this.relays.get(job.id)
    if (!relay) {
      relay = startRemoteJobRelay({
        jobId: job.id,
        hub: this.hub,
        watch: id => this.store.watchJob(id),
        readEvents: (id, fromSeq, limit) => this.store.readJobEvents(id, fromSeq, limit),
        inputRequests: id => this.store.inputRequests.list({ jobId: id }),
        reportViewers: count => this.store.reportViewers(job.id, count),
        onError: error => this.logger?.warn(`Following job ${job.id} failed`, error),
      })
      this.relays.set(job.id, relay)
      void relay.finally(() => setTimeout(() => this.relays.delete(job.id), 0))
    }
    await relay
  }

  /** Hands jobs stopped by a shutdown to other instances at once instead of after the lease. */
  async release(jobIds: readonly string[]): Promise<void> {
    await Promise.allSettled(jobIds.map(jobId => this.store.releaseLease(jobId)))
  }

  /** Stops every relay. */
  stopRelays(): void {
    for (const relay of this.relays.values()) void relay.then(handle => handle.stop())
  }
}
