/**
 * The server's metrics (prom-client), served in Prometheus' text format at `GET /metrics`
 * (server/routes/metrics.get.ts) when `NUXT_METRICS_ENABLED` is on.
 *
 * - As runs go (they report through `JobObserver`): tool calls started, completed and failed,
 *   their duration, model rounds per answer, runs ended by outcome, text batch sizes. These are the
 *   seed's series ("Monitoring", 002), with one departure: the seed labels them with `job_id`,
 *   which would make a new time series of every job and grow Prometheus without end; here labels
 *   are bounded sets (`tool_name`, `error_type`, `type`, `outcome`, `model`, `kind`) and job ids
 *   belong in logs. Tool names and model ids are themselves bounded: the first `MAX_TOOL_NAMES`
 *   names (`MAX_MODELS` models) seen are labels, later ones count as `other` (a browser declares
 *   its own tools' names, and a role may allow any model id, so both are input).
 * - Per model request of a job: time to first token, tokens and cost as reported, requests.
 * - At each scrape, from the runtime's own health reports (`readAtScrape`, once the services
 *   exist): jobs running and waiting, the store's write probe (up, latency), tools registered,
 *   MCP servers by state, live viewers.
 * - Node's process metrics (CPU, memory, event-loop delay, GC) with prom-client's defaults, but
 *   for three that Prometheus' lint refuses.
 *
 * Each runtime has its own registry (never prom-client's global one), so two runtimes in one
 * process (tests) do not share or clash.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { JobObserver } from '../jobs/job-observer'
import type { JobRunOutcome } from '../jobs/run/end'
import type { ToolCallStatus } from '../tools/run-tool-calls'
import type { HealthReport, JobsHealth } from '../../../shared/types/health'
import type { JobType } from '../../../shared/types/job'
import type { Usage } from '../../../shared/types/chat'

/** Distinct tool names kept as label values; later names are counted as `other`. */
export const MAX_TOOL_NAMES = 200
/** Distinct model ids kept as label values (a role may allow any model id); later ones are `other`. */
export const MAX_MODELS = 100
/** A tool name's or model id's label is cut to this many characters. */
const LABEL_CHARS = 80
/** The label value of tool names and model ids past their bound. */
export const OTHER_LABEL = 'other'
/** How long one scrape's health reports are reused by the gauges read in it. */
const SNAPSHOT_MS = 1_000

/** prom-client's default metrics that promtool's lint refuses (gauges with a counter's suffix). */
const LINT_FAILING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']

/** What the gauges read at a scrape. */
export interface MetricSources {
  /** The job manager's report (store write probe and job counts). */
  jobs: () => Promise<JobsHealth>
  /** The tool sources' report (tools registered, MCP servers' states). */
  tools: () => Promise<HealthReport['tools']>
  /** Viewers attached to live jobs in this process. */
  viewers: () => number
}

/** Label values from input: the first `max` distinct values as they are (cut to 80 characters), later ones `other`. */
export class BoundedLabel {
  private readonly seen = new Set<string>()

  constructor(private readonly max: number) {}

  of(value: string): string {
    const label = value.slice(0, LABEL_CHARS)
    if (this.seen.has(label)) return label
    if (this.seen.size >= this.max) return OTHER_LABEL
    this.seen.add(label)
    return label
  }
}

/** The metrics of one server runtime; also the runs' `JobObserver`. */
export class AppMetrics implements JobObserver {
  readonly registry = new Registry()
  private readonly toolNames = new BoundedLabel(MAX_TOOL_NAMES)
  private readonly models = new BoundedLabel(MAX_MODELS)
  private sources: MetricSources | undefined
  private snapshot: { at: number, report: Promise<{ jobs: JobsHealth, tools: HealthReport['tools'] }> } | undefined

  private readonly toolsStarted: Counter<'tool_name'>
  private readonly toolsCompleted: Counter<'tool_name'>
  private readonly toolsFailed: Counter<'tool_name' | 'error_type'>
  private readonly toolDuration: Histogram<'tool_name'>
  private readonly jobRounds: Histogram<'type'>
  private readonly jobsEnded: Counter<'type' | 'outcome'>
  private readonly batchSize: Histogram
  private readonly firstTokenTime: Histogram<'model'>
  private readonly modelRequests: Counter<'model'>
  private readonly modelTokens: Counter<'model' | 'kind'>
  private readonly modelCost: Counter<'model'>

  constructor() {
    const registers = [this.registry]
    this.toolsStarted = new Counter({ name: 'background_tool_execution_started_total', help: 'Tool calls of background jobs that began executing.', labelNames: ['tool_name'], registers })
    this.toolsCompleted = new Counter({ name: 'background_tool_execution_completed_total', help: 'Tool calls of background jobs that returned a result.', labelNames: ['tool_name'], registers })
    this.toolsFailed = new Counter({ name: 'background_tool_execution_failed_total', help: 'Tool calls of background jobs that ended without a result, by error_type (error, timeout, aborted, refused).', labelNames: ['tool_name', 'error_type'], registers })
    this.toolDuration = new Histogram({ name: 'background_tool_execution_duration_seconds', help: 'How long tool calls of background jobs ran, completed or failed.', labelNames: ['tool_name'], buckets: [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers })
    this.jobRounds = new Histogram({ name: 'background_job_rounds', help: 'Model requests one job made before it ended (an answer with one tool round makes two).', labelNames: ['type'], buckets: [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50], registers })
    this.jobsEnded = new Counter({ name: 'background_jobs_ended_total', help: 'Job runs that ended, by type and outcome (complete, error, aborted, rejected; interrupted: stopped to resume after a restart).', labelNames: ['type', 'outcome'], registers })
    this.batchSize = new Histogram({ name: 'sse_broadcast_batch_size', help: 'Text deltas sent to live viewers in one frame (1: sent at once; more: coalesced under load).', buckets: [1, 2, 3, 5, 10, 20, 50], registers })
    this.firstTokenTime = new Histogram({ name: 'model_time_to_first_token_seconds', help: "Time from a job's model request going out to its first text or reasoning, by model.", labelNames: ['model'], buckets: [0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60], registers })
    this.modelRequests = new Counter({ name: 'model_requests_total', help: 'Model requests made by jobs (each tool round is one), by model, however they ended.', labelNames: ['model'], registers })
    this.modelTokens = new Counter({ name: 'model_tokens_total', help: 'Tokens model requests of jobs used, as the upstream reported them, by model and kind (prompt, completion).', labelNames: ['model', 'kind'], registers })
    this.modelCost = new Counter({ name: 'model_cost_total', help: 'Credits model requests of jobs cost, as the upstream reported them (OpenRouter `cost`), by model.', labelNames: ['model'], registers })

    collectDefaultMetrics({ register: this.registry })
    // Three of Node's defaults are gauges named like counters (`…_total`), which Prometheus' own
    // lint (`promtool check metrics`) refuses; what they count (handles, requests) says little here.
    for (const name of LINT_FAILING_DEFAULTS) this.registry.removeSingleMetric(name)
  }

  /** Adds the gauges read at each scrape from `sources` (once; the runtime calls it when its services exist). */
  readAtScrape(sources: MetricSources): void {
    if (this.sources) throw new Error('readAtScrape() once')
    this.sources = sources
    const registers = [this.registry]
    const report = () => this.report()
    new Gauge({
      name: 'background_jobs', help: 'Jobs of this process now: running (holding a running slot) and waiting (parked until a person answers).', labelNames: ['state'], registers,
      async collect() {
        const { jobs } = await report()
        this.set({ state: 'running' }, jobs.jobs.running)
        this.set({ state: 'waiting' }, jobs.jobs.waiting)
      },
    })
    new Gauge({
      name: 'background_jobs_max', help: 'Jobs this process may run at once (NUXT_BACKGROUND_JOBS_MAX_CONCURRENT_JOBS).', registers,
      async collect() {
        this.set((await report()).jobs.jobs.max)
      },
    })
    new Gauge({
      name: 'store_up', help: 'Whether the store took a write probe at this scrape (1) or not (0).', registers,
      async collect() {
        this.set((await report()).jobs.store.ok ? 1 : 0)
      },
    })
    new Gauge({
      name: 'store_probe_latency_seconds', help: "How long the store's write probe took at this scrape.", registers,
      async collect() {
        this.set((await report()).jobs.store.latencyMs / 1000)
      },
    })
    new Gauge({
      name: 'server_tools_registered', help: 'Server tools registered (built-in, tool files, the dynamic directory, MCP).', registers,
      async collect() {
        this.set((await report()).tools.registered)
      },
    })
    new Gauge({
      name: 'mcp_servers', help: 'MCP servers by state (connecting, ready, failed, disabled, closed).', labelNames: ['state'], registers,
      async collect() {
        this.reset()
        for (const state of ['connecting', 'ready', 'failed', 'disabled', 'closed'] as const) this.set({ state }, 0)
        for (const server of (await report()).tools.mcpServers) this.inc({ state: server.state })
      },
    })
    const viewers = () => sources.viewers()
    new Gauge({
      name: 'sse_viewers', help: 'Viewers attached to live jobs in this process.', registers,
      collect() {
        this.set(viewers())
      },
    })
  }

  /** The text a scrape gets. */
  render(): Promise<string> {
    return this.registry.metrics()
  }

  /** Its media type. */
  get contentType(): string {
    return this.registry.contentType
  }

  toolStarted(tool: string): void {
    this.toolsStarted.inc({ tool_name: this.toolNames.of(tool) })
  }

  toolEnded(tool: string, status: ToolCallStatus, durationMs: number): void {
    const tool_name = this.toolNames.of(tool)
    if (status === 'completed') this.toolsCompleted.inc({ tool_name })
    else this.toolsFailed.inc({ tool_name, error_type: status })
    // A refused call never ran.
    if (status !== 'refused') this.toolDuration.observe({ tool_name }, Math.max(0, durationMs) / 1000)
  }

  runEnded(type: JobType, outcome: JobRunOutcome, modelRounds: number): void {
    this.jobsEnded.inc({ type, outcome })
    // An interrupted run's rounds are counted when its resumed run ends (which counts them all).
    if (outcome !== 'interrupted') this.jobRounds.observe({ type }, modelRounds)
  }

  textBatchSent(deltas: number): void {
    this.batchSize.observe(deltas)
  }

  firstToken(model: string, ms: number): void {
    this.firstTokenTime.observe({ model: this.models.of(model) }, Math.max(0, ms) / 1000)
  }

  modelUsage(model: string, usage: Usage): void {
    const label = this.models.of(model)
    // Counters only go up: a negative or missing figure from the upstream counts as none.
    const count = (value: number) => (Number.isFinite(value) && value > 0 ? value : 0)
    this.modelTokens.inc({ model: label, kind: 'prompt' }, count(usage.promptTokens))
    this.modelTokens.inc({ model: label, kind: 'completion' }, count(usage.completionTokens))
    this.modelCost.inc({ model: label }, count(usage.cost))
  }

  modelRequestEnded(model: string): void {
    this.modelRequests.inc({ model: this.models.of(model) })
  }

  /** The health reports of this scrape (one probe for all the gauges that read them). */
  private report(): Promise<{ jobs: JobsHealth, tools: HealthReport['tools'] }> {
    const now = Date.now()
    if (!this.snapshot || now - this.snapshot.at > SNAPSHOT_MS) {
      const sources = this.sources!
      this.snapshot = { at: now, report: Promise.all([sources.jobs(), sources.tools()]).then(([jobs, tools]) => ({ jobs, tools })) }
    }
    return this.snapshot.report
  }
}
