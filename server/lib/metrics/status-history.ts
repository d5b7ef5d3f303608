/**
 * What the admin's Status page shows: the last hour of the main figures, sampled every
 * `intervalMs` (15 s) in this process's memory, and today's model use by model. Each sample reads
 * the same sources as a Prometheus scrape (the job manager's and the tool sources' reports, and
 * the metrics' own counters), so the page and a dashboard never disagree; counters are kept as
 * what changed since the sample before.
 *
 * It lives in the process: a restart starts an empty hour, and each instance of a deployment
 * shows its own figures (its page says so). Prometheus is the place for longer history.
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks'
import type { AppMetrics, MetricSources, MetricTotals } from './app-metrics'
import type { ModelUse, ServerStatus, StatusSample } from '../../../shared/types/status'

/** How often a sample is taken. */
export const STATUS_SAMPLE_MS = 15_000
/** How far back samples are kept. */
export const STATUS_WINDOW_MS = 60 * 60_000

/** What the history needs. */
export interface StatusHistoryOptions {
  metrics: AppMetrics
  sources: MetricSources
  intervalMs?: number
  windowMs?: number
  now?: () => number
}

/** The start (ms) of the UTC day `at` falls on. */
function utcDayStart(at: number): number {
  const day = new Date(at)
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate())
}

/** `after` minus `before`, model by model (a model first seen after `before` counts in full). */
function useSince(after: ModelUse[], before: ModelUse[]): ModelUse[] {
  const earlier = new Map(before.map(use => [use.model, use]))
  return after.map((use) => {
    const was = earlier.get(use.model)
    return {
      model: use.model,
      requests: use.requests - (was?.requests ?? 0),
      promptTokens: use.promptTokens - (was?.promptTokens ?? 0),
      completionTokens: use.completionTokens - (was?.completionTokens ?? 0),
      cost: use.cost - (was?.cost ?? 0),
    }
  }).filter(use => use.requests > 0 || use.promptTokens > 0 || use.completionTokens > 0 || use.cost > 0)
}

/** The last hour of samples, and today's model use, of this process. */
export class StatusHistory {
  private readonly samples: StatusSample[] = []
  private readonly intervalMs: number
  private readonly windowMs: number
  private readonly now: () => number
  private readonly delay: ReturnType<typeof monitorEventLoopDelay>
  private utilization = performance.eventLoopUtilization()
  private previous: MetricTotals | undefined
  /** The counters when today began here (or when this process started, if later). */
  private dayStart: { at: number, totals: MetricTotals } | undefined
  private timer: ReturnType<typeof setInterval> | undefined
  private sampling: Promise<void> | undefined

  constructor(private readonly options: StatusHistoryOptions) {
    this.intervalMs = options.intervalMs ?? STATUS_SAMPLE_MS
    this.windowMs = options.windowMs ?? STATUS_WINDOW_MS
    this.now = options.now ?? Date.now
    this.delay = monitorEventLoopDelay({ resolution: 20 })
  }

  /** Takes a sample now and every `intervalMs` until `close`. */
  start(): void {
    if (this.timer) return
    this.delay.enable()
    void this.sample()
    this.timer = setInterval(() => void this.sample(), this.intervalMs)
    this.timer.unref?.()
  }

  /** Stops sampling (idempotent). */
  close(): void {
    clearInterval(this.timer)
    this.timer = undefined
    this.delay.disable()
  }

  /** Takes one sample (one at a time: a slow store probe is not stacked up). */
  sample(): Promise<void> {
    this.sampling ??= this.takeSample().catch(() => {}).finally(() => {
      this.sampling = undefined
    })
    return this.sampling
  }

  /** The samples of the window, oldest first, and today's use by model. */
  async status(): Promise<ServerStatus> {
    const now = this.now()
    const totals = await this.options.metrics.totals()
    // No sample yet today: today's use is what comes from now on.
    const dayStart = this.dayStart && this.dayStart.at >= utcDayStart(now) ? this.dayStart : { at: now, totals }
    const [jobs, tools] = await Promise.all([this.options.sources.jobs(), this.options.sources.tools()])
    return {
      at: now,
      intervalMs: this.intervalMs,
      samples: this.samples.filter(sample => sample.at > now - this.windowMs),
      jobs: jobs.jobs,
      store: jobs.store,
      mcpServers: tools.mcpServers,
      viewers: this.options.sources.viewers(),
      today: { since: dayStart.at, models: useSince(totals.models, dayStart.totals.models).sort((a, b) => b.cost - a.cost || (b.promptTokens + b.completionTokens) - (a.promptTokens + a.completionTokens)) },
    }
  }

  private async takeSample(): Promise<void> {
    const at = this.now()
    const [jobs, totals] = await Promise.all([this.options.sources.jobs(), this.options.metrics.totals()])
    // Today counts from the first sample (the process starting), or from the last sample before midnight.
    if (!this.dayStart) this.dayStart = { at, totals }
    else if (this.dayStart.at < utcDayStart(at)) this.dayStart = { at: utcDayStart(at), totals: this.previous ?? totals }
    const before = this.previous ?? totals
    const utilization = performance.eventLoopUtilization()
    const busy = performance.eventLoopUtilization(utilization, this.utilization).utilization
    this.utilization = utilization
    const memory = process.memoryUsage()
    this.samples.push({
      at,
      running: jobs.jobs.running,
      waiting: jobs.jobs.waiting,
      queued: jobs.jobs.queued,
      viewers: this.options.sources.viewers(),
      storeOk: jobs.store.ok,
      storeLatencyMs: jobs.store.latencyMs,
      eventLoopDelayMs: Number.isFinite(this.delay.percentile(99)) ? Math.round(this.delay.percentile(99) / 1e4) / 100 : 0,
      eventLoopUtilization: Math.round(busy * 1000) / 1000,
      rssBytes: memory.rss,
      heapUsedBytes: memory.heapUsed,
      modelRequests: totals.modelRequests - before.modelRequests,
      upstreamErrors: totals.upstreamErrors - before.upstreamErrors,
      toolCalls: totals.toolCalls - before.toolCalls,
      toolFailures: totals.toolFailures - before.toolFailures,
      tokens: totals.tokens - before.tokens,
      cost: totals.cost - before.cost,
    })
    this.delay.reset()
    this.previous = totals
    const oldest = at - this.windowMs
    while (this.samples.length > 0 && this.samples[0]!.at <= oldest) this.samples.shift()
  }
}
