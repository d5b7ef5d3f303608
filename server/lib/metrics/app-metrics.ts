/**
 * The server's metrics (prom-client), served in Prometheus' text format at `GET /metrics`
 * (server/routes/metrics.get.ts) when `NUXT_METRICS_ENABLED` is on.
 *
 * - As runs go (they report through `JobObserver`): runs started and ended by outcome, tool calls
 *   started, completed and failed, their duration, model rounds per answer, waits for people opened
 *   and ended, frames sent to viewers and text batch sizes. These are the
 *   seed's series ("Monitoring", 002), with one departure: the seed labels them with `job_id`,
 *   which would make a new time series of every job and grow Prometheus without end; here labels
 *   are bounded sets (`tool_name`, `error_type`, `type`, `outcome`, `model`, `kind`) and job ids
 *   belong in logs. Tool names and model ids are themselves bounded: the first `MAX_TOOL_NAMES`
 *   names (`MAX_MODELS` models) seen are labels, later ones count as `other` (a browser declares
 *   its own tools' names, and a role may allow any model id, so both are input); a model id is a
 *   label only when it is in the configured catalogue (`isCatalogued`), so one a person typed is `other`.
 * - Per model request of a job: time to first token, writing speed, tokens and cost as reported,
 *   requests, upstream errors by kind.
 * - Each store call by store and operation (its method): duration and failures
 *   (`storeCallWatcher`, through instrumented-store.ts). Refusals by the limit that refused
 *   (`refused`, from the error handler).
 * - At each scrape, from the runtime's own health reports (`readAtScrape`, once the services
 *   exist): jobs running, waiting and queued, the store's write probe (up, latency), tools
 *   registered, MCP servers by state, live viewers.
 * - Node's process metrics (CPU, memory, event-loop delay, GC) with prom-client's defaults, but
 *   for three that Prometheus' lint refuses; and the event loop's utilisation since the last scrape.
 *
 * Each runtime has its own registry (never prom-client's global one), so two runtimes in one
 * process (tests) do not share or clash.
 */
import { performance } from 'node:perf_hooks'
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { JobObserver } from '../jobs/job-observer'
import type { JobRunOutcome } from '../jobs/run/end'
import type { ToolCallStatus } from '../tools/run-tool-calls'
import type { HealthReport, JobsHealth } from '../../../shared/types/health'
import type { JobType } from '../../../shared/types/job'
import type { Usage } from '../../../shared/types/chat'
import type { Role } from '../../../shared/types/account'
import type { InputRequestKind, InputRequestStatus } from '../../../shared/types/input-request'
import type { JobStreamEvent } from '../../../shared/types/job-events'
import type { StoreCallWatcher } from './instrumented-store'
import type { ActivityCounts, ModelUse } from '../../../shared/types/status'

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

/** The counters' totals since the process started, and each model's use (the Status page's history reads them). */
export interface MetricTotals extends ActivityCounts {
  models: ModelUse[]
}

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

  /** `admits`: whether a value may be a label at all (else it is `other`). */
  constructor(private readonly max: number, private readonly admits: (value: string) => boolean = () => true) {}

  of(value: string): string {
    if (!this.admits(value)) return OTHER_LABEL
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
  private readonly models: BoundedLabel
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
  private readonly modelTokens: Counter<'model' | 'kind' | 'role'>
  private readonly modelCost: Counter<'model' | 'role'>
  private readonly jobsStarted: Counter<'type' | 'resumed'>
  private readonly upstreamErrors: Counter<'model' | 'kind'>
  private readonly outputSpeeds: Histogram<'model'>
  private readonly waitsOpened: Counter<'kind'>
  private readonly waitsEnded: Counter<'kind' | 'status'>
  private readonly framesSent: Counter<'type'>
  private readonly refusals: Counter<'limit'>
  private readonly storeDuration: Histogram<'store' | 'operation'>
  private readonly storeErrors: Counter<'store' | 'operation'>
  private readonly mcpCalls: Histogram<'server' | 'outcome'>
  private readonly limits = new BoundedLabel(MAX_TOOL_NAMES)
  private readonly mcpServerNames = new BoundedLabel(MAX_MODELS)

  /** `isCatalogued`: whether a model id is in the configured catalogue (only those are labels; default all). */
  constructor(options: { isCatalogued?: (model: string) => boolean } = {}) {
    this.models = new BoundedLabel(MAX_MODELS, options.isCatalogued)
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
    this.modelTokens = new Counter({ name: 'model_tokens_total', help: "Tokens model requests of jobs used, as the upstream reported them, by model, kind (prompt, completion) and the user's role.", labelNames: ['model', 'kind', 'role'], registers })
    this.modelCost = new Counter({ name: 'model_cost_total', help: "Credits model requests of jobs cost, as the upstream reported them (OpenRouter `cost`), by model and the user's role.", labelNames: ['model', 'role'], registers })

    this.jobsStarted = new Counter({ name: 'background_jobs_started_total', help: 'Job runs that began, by type; resumed="true": a job interrupted by a restart (or taken over from another instance) going on.', labelNames: ['type', 'resumed'], registers })
    this.upstreamErrors = new Counter({ name: 'model_upstream_errors_total', help: 'Model requests of jobs that ended with an upstream error, by model and kind (rate_limited, upstream_unavailable, timeout, insufficient_credits, stream_interrupted, …).', labelNames: ['model', 'kind'], registers })
    this.outputSpeeds = new Histogram({ name: 'model_output_tokens_per_second', help: 'How fast model requests of jobs wrote: completion tokens per second from the first text to the last, by model.', labelNames: ['model'], buckets: [5, 10, 20, 40, 60, 90, 130, 200, 400], registers })
    this.waitsOpened = new Counter({ name: 'background_waits_opened_total', help: 'Waits for a person that runs opened, by kind (approval, question, client-tool).', labelNames: ['kind'], registers })
    this.waitsEnded = new Counter({ name: 'background_waits_ended_total', help: 'Waits for a person that ended, by kind and status (answered, expired, cancelled: the job was stopped).', labelNames: ['kind', 'status'], registers })
    this.framesSent = new Counter({ name: 'sse_frames_sent_total', help: 'Events sent to live viewers of jobs, one per viewer, by event type.', labelNames: ['type'], registers })
    this.refusals = new Counter({ name: 'limit_refusals_total', help: 'Requests refused by a limit, by limit (job_starts_user, running_jobs_server, daily_budget_cost, streams_client, auth_attempts, storage_threads, …).', labelNames: ['limit'], registers })
    this.storeDuration = new Histogram({ name: 'store_operation_duration_seconds', help: 'How long store calls took, by store and operation (the method called).', labelNames: ['store', 'operation'], buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5], registers })
    this.storeErrors = new Counter({ name: 'store_operation_errors_total', help: 'Store calls that failed, by store and operation.', labelNames: ['store', 'operation'], registers })
    this.mcpCalls = new Histogram({ name: 'mcp_tool_call_duration_seconds', help: 'How long tool calls to MCP servers took, by server and outcome (ok, failed).', labelNames: ['server', 'outcome'], buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120], registers })
    let utilizationBefore = performance.eventLoopUtilization()
    new Gauge({
      name: 'nodejs_eventloop_utilization_ratio', help: 'Share of time the event loop was busy since the previous scrape (0 to 1).', registers,
      collect() {
        const now = performance.eventLoopUtilization()
        this.set(performance.eventLoopUtilization(now, utilizationBefore).utilization)
        utilizationBefore = now
      },
    })

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
      name: 'background_jobs', help: 'Jobs of this process now: running (holding a running slot), waiting (parked until a person answers), queued (answered, waiting for a running slot).', labelNames: ['state'], registers,
      async collect() {
        const { jobs } = await report()
        this.set({ state: 'running' }, jobs.jobs.running)
        this.set({ state: 'waiting' }, jobs.jobs.waiting)
        this.set({ state: 'queued' }, jobs.jobs.queued)
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

  /** The counters' totals now, and each model's use. */
  async totals(): Promise<MetricTotals> {
    const [requests, errors, started, failed, tokens, cost] = await Promise.all([this.modelRequests.get(), this.upstreamErrors.get(), this.toolsStarted.get(), this.toolsFailed.get(), this.modelTokens.get(), this.modelCost.get()])
    const sum = (values: Array<{ value: number }>) => values.reduce((total, item) => total + item.value, 0)
    const models = new Map<string, ModelUse>()
    const use = (model: unknown): ModelUse => {
      const name = String(model)
      let entry = models.get(name)
      if (!entry) models.set(name, entry = { model: name, requests: 0, promptTokens: 0, completionTokens: 0, cost: 0 })
      return entry
    }
    for (const item of requests.values) use(item.labels.model).requests += item.value
    for (const item of tokens.values) {
      if (item.labels.kind === 'prompt') use(item.labels.model).promptTokens += item.value
      else use(item.labels.model).completionTokens += item.value
    }
    for (const item of cost.values) use(item.labels.model).cost += item.value
    return {
      modelRequests: sum(requests.values),
      upstreamErrors: sum(errors.values),
      // Refused calls never ran: a call is one that started.
      toolCalls: sum(started.values),
      toolFailures: sum(failed.values.filter(item => item.labels.error_type !== 'refused')),
      tokens: sum(tokens.values),
      cost: sum(cost.values),
      models: [...models.values()],
    }
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

  modelUsage(model: string, usage: Usage, role: Role = 'user'): void {
    const label = this.models.of(model)
    // Counters only go up: a negative or missing figure from the upstream counts as none.
    const count = (value: number) => (Number.isFinite(value) && value > 0 ? value : 0)
    this.modelTokens.inc({ model: label, kind: 'prompt', role }, count(usage.promptTokens))
    this.modelTokens.inc({ model: label, kind: 'completion', role }, count(usage.completionTokens))
    this.modelCost.inc({ model: label, role }, count(usage.cost))
  }

  modelRequestEnded(model: string, error?: string): void {
    const label = this.models.of(model)
    this.modelRequests.inc({ model: label })
    if (error) this.upstreamErrors.inc({ model: label, kind: error })
  }

  runStarted(type: JobType, resumed: boolean): void {
    this.jobsStarted.inc({ type, resumed: String(resumed) })
  }

  outputSpeed(model: string, tokensPerSecond: number): void {
    if (Number.isFinite(tokensPerSecond) && tokensPerSecond > 0) this.outputSpeeds.observe({ model: this.models.of(model) }, tokensPerSecond)
  }

  waitOpened(kind: InputRequestKind): void {
    this.waitsOpened.inc({ kind })
  }

  waitEnded(kind: InputRequestKind, status: Exclude<InputRequestStatus, 'open'>): void {
    this.waitsEnded.inc({ kind, status })
  }

  frameSent(type: JobStreamEvent['type'], viewers: number): void {
    this.framesSent.inc({ type }, viewers)
  }

  /** A request was refused by `limit` (a fixed name an error declares: `HttpAnswer.refusedBy`). */
  refused(limit: string): void {
    this.refusals.inc({ limit: this.limits.of(limit) })
  }

  /** A tool call to MCP server `server` ended after `ms`. */
  readonly mcpCallEnded = (server: string, ms: number, failed: boolean): void => {
    this.mcpCalls.observe({ server: this.mcpServerNames.of(server), outcome: failed ? 'failed' : 'ok' }, Math.max(0, ms) / 1000)
  }

  /** Times each store call (instrumented-store.ts) by store and operation, and counts the failed ones. */
  readonly storeCallWatcher: StoreCallWatcher = (store, operation) => {
    const started = performance.now()
    return (failed) => {
      this.storeDuration.observe({ store, operation }, (performance.now() - started) / 1000)
      if (failed) this.storeErrors.inc({ store, operation })
    }
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
