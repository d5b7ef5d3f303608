/**
 * How busy this process is, for batching that costs latency only under load: the event loop's
 * utilisation (the share of time it spent running code rather than waiting for I/O), sampled over
 * short windows with Node's `performance.eventLoopUtilization()`.
 */
import { performance, type EventLoopUtilization } from 'node:perf_hooks'

/** Utilisation below which nothing waits in a batch, and from which the whole interval is used. */
export const LOAD_THRESHOLDS = { idle: 0.7, busy: 0.95 }

/** The share of the batch interval worth waiting at `utilization`: 0 when idle, 1 when busy, linear between. */
export function batchShareAt(utilization: number, thresholds = LOAD_THRESHOLDS): number {
  if (utilization <= thresholds.idle) return 0
  if (utilization >= thresholds.busy) return 1
  return (utilization - thresholds.idle) / (thresholds.busy - thresholds.idle)
}

/** Weight of the newest sample in the moving average. */
const SMOOTHING = 0.3

/** The event loop's utilisation, a moving average over short sample windows; its timer is `unref`'d and stopped by `stop`. */
export class EventLoopLoad {
  private previous: EventLoopUtilization = performance.eventLoopUtilization()
  private latest = 0
  private readonly timer: ReturnType<typeof setInterval>

  constructor(sampleMs = 100) {
    this.timer = setInterval(() => {
      const current = performance.eventLoopUtilization()
      const sample = performance.eventLoopUtilization(current, this.previous).utilization
      // Smoothed, so one slow tick (a GC pause) does not swing the batch window back and forth.
      this.latest += SMOOTHING * (sample - this.latest)
      this.previous = current
    }, sampleMs)
    this.timer.unref?.()
  }

  /** Utilisation (0..1), averaged over the last few windows. */
  get utilization(): number {
    return this.latest
  }

  /** The share of the batch interval to wait now (see `batchShareAt`). */
  batchShare(): number {
    return batchShareAt(this.latest)
  }

  /** Stops sampling. */
  stop(): void {
    clearInterval(this.timer)
  }
}
