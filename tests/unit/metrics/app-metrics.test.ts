/** The Prometheus metrics: the seed's series, their types and bounded labels, and what a scrape reads. */
import { describe, expect, it } from 'vitest'
import { AppMetrics, MAX_MODELS, MAX_TOOL_NAMES, OTHER_LABEL, type MetricSources } from '../../../server/lib/metrics/app-metrics'
import { observedCallbacks } from '../../../server/lib/jobs/run/observed-callbacks'
import { isBearerToken } from '../../../server/lib/security/bearer-token'
import { instrumentedStore } from '../../../server/lib/metrics/instrumented-store'
import { UNOBSERVED, type JobObserver } from '../../../server/lib/jobs/job-observer'

const sources = (overrides: Partial<MetricSources> = {}): MetricSources => ({
  jobs: async () => ({ store: { provider: 'memory', ok: true, latencyMs: 12 }, jobs: { running: 3, waiting: 1, queued: 0, max: 20, accepting: true } }),
  tools: async () => ({ registered: 5, mcpServers: [{ name: 'a', state: 'ready' }, { name: 'b', state: 'failed' }, { name: 'c', state: 'ready' }] }),
  viewers: () => 7,
  ...overrides,
})

/** One sample's value from the text format, by its series and labels as written. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find(item => item.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('AppMetrics', () => {
  it("has the seed's series as counters and histograms, labelled by bounded sets and never by job id", async () => {
    const metrics = new AppMetrics()
    metrics.readAtScrape(sources())
    const byName = new Map((await metrics.registry.getMetricsAsJSON()).map(metric => [metric.name, metric]))
    const expected: Record<string, [string, string[]]> = {
      background_tool_execution_started_total: ['counter', ['tool_name']],
      background_tool_execution_completed_total: ['counter', ['tool_name']],
      background_tool_execution_failed_total: ['counter', ['tool_name', 'error_type']],
      background_tool_execution_duration_seconds: ['histogram', ['tool_name']],
      background_job_rounds: ['histogram', ['type']],
      background_jobs_ended_total: ['counter', ['type', 'outcome']],
      sse_broadcast_batch_size: ['histogram', []],
      background_jobs: ['gauge', ['state']],
      mcp_servers: ['gauge', ['state']],
      store_up: ['gauge', []],
      sse_viewers: ['gauge', []],
      model_time_to_first_token_seconds: ['histogram', ['model']],
      model_requests_total: ['counter', ['model']],
      model_tokens_total: ['counter', ['model', 'kind', 'role']],
      model_cost_total: ['counter', ['model', 'role']],
      background_jobs_started_total: ['counter', ['type', 'resumed']],
      model_upstream_errors_total: ['counter', ['model', 'kind']],
      model_output_tokens_per_second: ['histogram', ['model']],
      background_waits_opened_total: ['counter', ['kind']],
      background_waits_ended_total: ['counter', ['kind', 'status']],
      sse_frames_sent_total: ['counter', ['type']],
      limit_refusals_total: ['counter', ['limit']],
      store_operation_duration_seconds: ['histogram', ['store', 'operation']],
      store_operation_errors_total: ['counter', ['store', 'operation']],
      mcp_tool_call_duration_seconds: ['histogram', ['server', 'outcome']],
      nodejs_eventloop_utilization_ratio: ['gauge', []],
    }
    for (const [name, [type, labels]] of Object.entries(expected)) {
      const metric = byName.get(name)
      expect(metric, name).toBeDefined()
      expect(String(metric!.type), name).toBe(type)
      const declared = (metrics.registry.getSingleMetric(name) as unknown as { labelNames: string[] }).labelNames
      expect([...declared].sort(), name).toEqual([...labels].sort())
    }
    // Node's own: memory, CPU, event-loop delay.
    expect([...byName.keys()]).toEqual(expect.arrayContaining(['process_cpu_seconds_total', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds']))
    // No metric may be labelled by something that grows with use.
    for (const name of byName.keys()) {
      const declared = (metrics.registry.getSingleMetric(name) as unknown as { labelNames?: string[] }).labelNames ?? []
      expect(declared.filter(label => /job|user|thread|id$/.test(label)), name).toEqual([])
    }
  })

  it('counts tool calls by how they ended, rounds per answer, runs by outcome and batch sizes', async () => {
    const metrics = new AppMetrics()
    metrics.readAtScrape(sources())
    metrics.toolStarted('get_current_time')
    metrics.toolEnded('get_current_time', 'completed', 40)
    metrics.toolStarted('calculate')
    metrics.toolEnded('calculate', 'timeout', 10_000)
    metrics.toolEnded('calculate', 'refused', 0)
    metrics.runEnded('chat', 'complete', 2)
    metrics.runEnded('chat', 'interrupted', 1)
    metrics.runEnded('workflow', 'error', 5)
    metrics.textBatchSent(1)
    metrics.textBatchSent(4)
    const text = await metrics.render()
    expect(sample(text, 'background_tool_execution_started_total{tool_name="get_current_time"}')).toBe(1)
    expect(sample(text, 'background_tool_execution_completed_total{tool_name="get_current_time"}')).toBe(1)
    expect(sample(text, 'background_tool_execution_failed_total{tool_name="calculate",error_type="timeout"}')).toBe(1)
    expect(sample(text, 'background_tool_execution_failed_total{tool_name="calculate",error_type="refused"}')).toBe(1)
    // A refused call never ran: only the timed-out one has a duration.
    expect(sample(text, 'background_tool_execution_duration_seconds_count{tool_name="calculate"}')).toBe(1)
    expect(sample(text, 'background_tool_execution_duration_seconds_sum{tool_name="calculate"}')).toBe(10)
    expect(sample(text, 'background_jobs_ended_total{type="chat",outcome="complete"}')).toBe(1)
    expect(sample(text, 'background_jobs_ended_total{type="chat",outcome="interrupted"}')).toBe(1)
    // The interrupted run's rounds are counted when its resumed run ends.
    expect(sample(text, 'background_job_rounds_count{type="chat"}')).toBe(1)
    expect(sample(text, 'background_job_rounds_sum{type="chat"}')).toBe(2)
    expect(sample(text, 'background_job_rounds_sum{type="workflow"}')).toBe(5)
    expect(sample(text, 'sse_broadcast_batch_size_count')).toBe(2)
    expect(sample(text, 'sse_broadcast_batch_size_sum')).toBe(5)
  })

  it('reads jobs, the store, tools, MCP servers and viewers at each scrape, with one probe for all', async () => {
    let probes = 0
    const metrics = new AppMetrics()
    metrics.readAtScrape(sources({ jobs: async () => {
      probes++
      return { store: { provider: 'sqlite', ok: false, latencyMs: 1500, error: 'locked' }, jobs: { running: 2, waiting: 4, queued: 1, max: 20, accepting: true } }
    } }))
    const text = await metrics.render()
    expect(probes).toBe(1)
    expect(sample(text, 'background_jobs{state="running"}')).toBe(2)
    expect(sample(text, 'background_jobs{state="waiting"}')).toBe(4)
    expect(sample(text, 'background_jobs{state="queued"}')).toBe(1)
    expect(sample(text, 'background_jobs_max')).toBe(20)
    expect(sample(text, 'store_up')).toBe(0)
    expect(sample(text, 'store_probe_latency_seconds')).toBe(1.5)
    expect(sample(text, 'server_tools_registered')).toBe(5)
    expect(sample(text, 'mcp_servers{state="ready"}')).toBe(2)
    expect(sample(text, 'mcp_servers{state="failed"}')).toBe(1)
    expect(sample(text, 'mcp_servers{state="connecting"}')).toBe(0)
    expect(sample(text, 'sse_viewers')).toBe(7)
  })

  it('labels a model only when it is in the catalogue: an id a person typed is "other"', async () => {
    const metrics = new AppMetrics({ isCatalogued: model => model === 'openai/gpt-4o-mini' })
    metrics.modelRequestEnded('openai/gpt-4o-mini')
    for (let index = 0; index < 20; index++) metrics.modelRequestEnded(`typed/<script>${index}`)
    const series = (await metrics.registry.getSingleMetric('model_requests_total')!.get()).values
    expect(series.map(value => [value.labels.model, value.value])).toEqual([['openai/gpt-4o-mini', 1], [OTHER_LABEL, 20]])
    expect((await metrics.totals()).models.map(use => use.model)).toEqual(['openai/gpt-4o-mini', OTHER_LABEL])
  })

  it('keeps the first tool names as labels and counts the rest as "other", however many a browser declares', async () => {
    const metrics = new AppMetrics()
    for (let index = 0; index < MAX_TOOL_NAMES + 50; index++) metrics.toolStarted(`browser_tool_${index}`)
    metrics.toolStarted(`${'x'.repeat(500)}`)
    const series = (await metrics.registry.getSingleMetric('background_tool_execution_started_total')!.get()).values
    expect(series).toHaveLength(MAX_TOOL_NAMES + 1)
    expect(series.find(value => value.labels.tool_name === OTHER_LABEL)?.value).toBe(51)
    // A name seen before the bound keeps its own series.
    metrics.toolStarted('browser_tool_0')
    expect((await metrics.registry.getSingleMetric('background_tool_execution_started_total')!.get()).values.find(value => value.labels.tool_name === 'browser_tool_0')?.value).toBe(2)
  })

  it('keeps two runtimes apart: each has its own registry', async () => {
    const one = new AppMetrics()
    const two = new AppMetrics()
    one.toolStarted('calculate')
    expect(await two.render()).not.toContain('tool_name="calculate"')
  })
})

describe('isBearerToken (the scrape token)', () => {
  const token = 'a'.repeat(40)
  it('accepts only "Bearer <the token>", and nothing when no token is set', () => {
    expect(isBearerToken(`Bearer ${token}`, token)).toBe(true)
    expect(isBearerToken(`bearer ${token}`, token)).toBe(true)
    expect(isBearerToken(`Bearer ${token}x`, token)).toBe(false)
    expect(isBearerToken(token, token)).toBe(false)
    expect(isBearerToken(undefined, token)).toBe(false)
    expect(isBearerToken('Bearer ', '')).toBe(false)
    expect(isBearerToken('Bearer anything', '')).toBe(false)
  })
})

describe('model requests', () => {
  it('counts requests, first-token times, tokens and cost by model (and role), with model ids bounded like tool names', async () => {
    const metrics = new AppMetrics()
    metrics.firstToken('openai/gpt-4o-mini', 850)
    metrics.modelUsage('openai/gpt-4o-mini', { promptTokens: 120, completionTokens: 30, totalTokens: 150, cachedTokens: 0, reasoningTokens: 0, cost: 0.0004 }, 'user')
    metrics.modelUsage('openai/gpt-4o-mini', { promptTokens: -5, completionTokens: Number.NaN, totalTokens: 0, cachedTokens: 0, reasoningTokens: 0, cost: 0 }, 'user')
    metrics.modelUsage('openai/gpt-4o-mini', { promptTokens: 7, completionTokens: 3, totalTokens: 10, cachedTokens: 0, reasoningTokens: 0, cost: 0.0001 }, 'guest')
    metrics.modelRequestEnded('openai/gpt-4o-mini')
    metrics.modelRequestEnded('openai/gpt-4o-mini')
    const text = await metrics.render()
    expect(sample(text, 'model_time_to_first_token_seconds_sum{model="openai/gpt-4o-mini"}')).toBe(0.85)
    expect(sample(text, 'model_tokens_total{model="openai/gpt-4o-mini",kind="prompt",role="user"}')).toBe(120)
    expect(sample(text, 'model_tokens_total{model="openai/gpt-4o-mini",kind="completion",role="user"}')).toBe(30)
    expect(sample(text, 'model_cost_total{model="openai/gpt-4o-mini",role="user"}')).toBe(0.0004)
    // By the role of the job's user too.
    expect(sample(text, 'model_tokens_total{model="openai/gpt-4o-mini",kind="prompt",role="guest"}')).toBe(7)
    expect(sample(text, 'model_cost_total{model="openai/gpt-4o-mini",role="guest"}')).toBe(0.0001)
    expect(sample(text, 'model_requests_total{model="openai/gpt-4o-mini"}')).toBe(2)
    for (let index = 0; index < MAX_MODELS + 10; index++) metrics.modelRequestEnded(`vendor/model-${index}`)
    const series = (await metrics.registry.getSingleMetric('model_requests_total')!.get()).values
    expect(series).toHaveLength(MAX_MODELS + 1)
    expect(series.find(value => value.labels.model === OTHER_LABEL)?.value).toBe(11)
  })
})

describe('observedCallbacks', () => {
  it('times each request from when it goes out to its first text, and reports its usage and its end', async () => {
    const seen: string[] = []
    const observer: JobObserver = {
      ...UNOBSERVED,
      firstToken: (model, ms) => seen.push(`first ${model} ${ms >= 0}`),
      outputSpeed: (model, speed) => seen.push(`speed ${model} ${speed > 0}`),
      modelUsage: (model, usage) => seen.push(`usage ${model} ${usage.totalTokens}`),
      modelRequestEnded: (model, error) => seen.push(`ended ${model}${error ? ` ${error}` : ''}`),
    }
    const inner: string[] = []
    const callbacks = observedCallbacks(observer, { model: 'm', role: 'user' }, {
      beforeModelRequest: async () => {
        inner.push('reserved')
      },
      onTextDelta: text => inner.push(text),
      afterModelRequest: () => inner.push('settled'),
    })
    for (const round of [1, 2]) {
      await callbacks.beforeModelRequest!({ round, request: { model: 'm', messages: [], stream: true } })
      callbacks.onReasoningDelta!('thinking', { round })
      callbacks.onTextDelta!('a', { round })
      // The last text comes later than the first, so the request has a writing speed.
      const first = performance.now()
      while (performance.now() === first) await new Promise(resolve => setImmediate(resolve))
      callbacks.onTextDelta!('b', { round })
      callbacks.onUsage!({ promptTokens: 1, completionTokens: 2, totalTokens: 3, cachedTokens: 0, reasoningTokens: 0, cost: 0 }, { round })
      callbacks.afterModelRequest!(round === 2 ? { round, error: 'rate_limited' } : { round })
    }
    // One first token per request (reasoning counts as the first text), its usage and speed, its end (with its error).
    expect(seen).toEqual(['first m true', 'usage m 3', 'speed m true', 'ended m', 'first m true', 'usage m 3', 'speed m true', 'ended m rate_limited'])
    // The wrapped callbacks still get everything.
    expect(inner).toEqual(['reserved', 'a', 'b', 'settled', 'reserved', 'a', 'b', 'settled'])
  })
})

describe('what runs, stores and limits report', () => {
  it('counts starts, upstream errors, waits, frames, refusals and MCP calls', async () => {
    const metrics = new AppMetrics()
    metrics.runStarted('chat', false)
    metrics.runStarted('chat', true)
    metrics.modelRequestEnded('m', 'rate_limited')
    metrics.modelRequestEnded('m', 'timeout')
    metrics.modelRequestEnded('m')
    metrics.outputSpeed('m', 50)
    metrics.outputSpeed('m', Number.POSITIVE_INFINITY)
    metrics.waitOpened('approval')
    metrics.waitEnded('approval', 'answered')
    metrics.waitOpened('question')
    metrics.waitEnded('question', 'expired')
    metrics.frameSent('delta', 3)
    metrics.frameSent('status', 1)
    metrics.refused('job_starts_user')
    metrics.refused('job_starts_user')
    metrics.mcpCallEnded('files', 250, false)
    metrics.mcpCallEnded('files', 10, true)
    const text = await metrics.render()
    expect(sample(text, 'background_jobs_started_total{type="chat",resumed="false"}')).toBe(1)
    expect(sample(text, 'background_jobs_started_total{type="chat",resumed="true"}')).toBe(1)
    expect(sample(text, 'model_upstream_errors_total{model="m",kind="rate_limited"}')).toBe(1)
    expect(sample(text, 'model_upstream_errors_total{model="m",kind="timeout"}')).toBe(1)
    expect(sample(text, 'model_requests_total{model="m"}')).toBe(3)
    // A speed that is not a number of tokens per second is not observed.
    expect(sample(text, 'model_output_tokens_per_second_count{model="m"}')).toBe(1)
    expect(sample(text, 'background_waits_opened_total{kind="approval"}')).toBe(1)
    expect(sample(text, 'background_waits_ended_total{kind="approval",status="answered"}')).toBe(1)
    expect(sample(text, 'background_waits_ended_total{kind="question",status="expired"}')).toBe(1)
    expect(sample(text, 'sse_frames_sent_total{type="delta"}')).toBe(3)
    expect(sample(text, 'sse_frames_sent_total{type="status"}')).toBe(1)
    expect(sample(text, 'limit_refusals_total{limit="job_starts_user"}')).toBe(2)
    expect(sample(text, 'mcp_tool_call_duration_seconds_count{server="files",outcome="ok"}')).toBe(1)
    expect(sample(text, 'mcp_tool_call_duration_seconds_sum{server="files",outcome="ok"}')).toBe(0.25)
    expect(sample(text, 'mcp_tool_call_duration_seconds_count{server="files",outcome="failed"}')).toBe(1)
    // The event loop's busy share since the last scrape is a ratio.
    const utilization = sample(text, 'nodejs_eventloop_utilization_ratio')!
    expect(utilization).toBeGreaterThanOrEqual(0)
    expect(utilization).toBeLessThanOrEqual(1)
  })

  it("times every call of an instrumented store by its method, counts failures, and leaves the store's behaviour alone", async () => {
    const metrics = new AppMetrics()
    class Store {
      #rows = new Map<string, string>([['a', 'one']])
      readonly name = 'memory'
      async get(id: string) {
        return this.#rows.get(id)
      }

      async fail(): Promise<never> {
        throw new Error('locked')
      }

      count() {
        return this.#rows.size
      }
    }
    const store = instrumentedStore(new Store(), 'jobs', metrics.storeCallWatcher)
    expect(await store.get('a')).toBe('one')
    expect(await store.get('b')).toBeUndefined()
    await expect(store.fail()).rejects.toThrow('locked')
    expect(store.count()).toBe(1)
    expect(store.name).toBe('memory')
    expect(store).toBeInstanceOf(Store)
    const text = await metrics.render()
    expect(sample(text, 'store_operation_duration_seconds_count{store="jobs",operation="get"}')).toBe(2)
    expect(sample(text, 'store_operation_duration_seconds_count{store="jobs",operation="fail"}')).toBe(1)
    expect(sample(text, 'store_operation_errors_total{store="jobs",operation="fail"}')).toBe(1)
    expect(sample(text, 'store_operation_errors_total{store="jobs",operation="get"}')).toBeUndefined()
    expect(sample(text, 'store_operation_duration_seconds_count{store="jobs",operation="count"}')).toBe(1)
  })

  it('times the calls of a store\'s own ports (the job store\'s notifications) as <port>.<method>', async () => {
    const metrics = new AppMetrics()
    const plain = { name: 'memory', notifications: { list: async (userId: string) => [userId] } }
    const store = instrumentedStore(plain, 'jobs', metrics.storeCallWatcher)
    expect(await store.notifications.list('a')).toEqual(['a'])
    expect(store.notifications).toBe(store.notifications)
    expect(sample(await metrics.render(), 'store_operation_duration_seconds_count{store="jobs",operation="notifications.list"}')).toBe(1)
  })
})
