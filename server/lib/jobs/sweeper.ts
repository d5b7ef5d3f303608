/**
 * The periodic sweep: fails runs idle for `jobTimeoutMs`, deletes jobs past their retention (after
 * what must come first: the workflow run history's sweep) and,
 * on a shared store, picks up jobs whose instance died. Its timer is `unref`'d and stopped on
 * shutdown.
 */
import type { ServerConfig } from '../config/server-config'
import type { JobStore } from '../stores/jobs/job-store'
import type { JobLeases } from './leases'
import type { JobStopReason } from './run/end'

/** How long an ended job's run log is kept for viewers and relays catching up (then its row is the whole of it). */
export const ENDED_LOG_KEPT_MS = 60_000

/** What the sweeper sees of a running job. */
export interface SweptRun {
  controller: AbortController
  lastActivityAt: number
  toolsRunning: number
}

/** What the sweeper needs from the manager. */
export interface SweeperContext {
  store: JobStore
  leases?: JobLeases
  config: ServerConfig
  runs: () => Iterable<SweptRun>
  recover: () => Promise<unknown>
  /** What must happen before expired jobs are deleted (the workflow run history records ends from them). */
  beforeCleanup?: (now: number) => Promise<void>
  isClosing: () => boolean
  logger?: { warn: (message: string, ...details: unknown[]) => void }
}

/** The sweep and its timer. */
export class JobSweeper {
  private timer: ReturnType<typeof setInterval> | undefined
  private lastCleanupAt = 0
  private lastOrphanScanAt = 0

  constructor(private readonly context: SweeperContext) {}

  /** One sweep at `now`. */
  async sweep(now = Date.now()): Promise<void> {
    const { store, leases, config } = this.context
    const { jobTimeoutMs, completedJobRetentionMs } = config.backgroundJobs
    for (const run of this.context.runs()) {
      if (run.toolsRunning === 0 && now - run.lastActivityAt >= jobTimeoutMs) run.controller.abort('timeout' satisfies JobStopReason)
    }
    if (now - this.lastCleanupAt >= Math.min(completedJobRetentionMs, 60_000)) {
      this.lastCleanupAt = now
      await this.context.beforeCleanup?.(now)
      await store.cleanupExpired(now - completedJobRetentionMs, now - ENDED_LOG_KEPT_MS)
    }
    if (leases && !this.context.isClosing() && now - this.lastOrphanScanAt >= leases.leaseMs / 2) {
      this.lastOrphanScanAt = now
      await this.context.recover()
    }
  }

  /** Starts sweeping every quarter of the job timeout (at most 15 s; half a lease when shared). */
  start(): void {
    if (this.timer) return
    const { jobTimeoutMs } = this.context.config.backgroundJobs
    let everyMs = Math.max(250, Math.min(Math.floor(jobTimeoutMs / 4), 15_000))
    if (this.context.leases) everyMs = Math.min(everyMs, Math.max(250, this.context.leases.leaseMs / 2))
    this.timer = setInterval(() => {
      this.sweep().catch(error => this.context.logger?.warn('Job sweep failed', error))
    }, everyMs)
    this.timer.unref?.()
  }

  /** Stops the timer. */
  stop(): void {
    if (this.timer) clearInterval(this.timer)
    this.timer = undefined
  }
}
