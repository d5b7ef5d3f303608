/** The Prometheus metrics: the seed's series, their types and bounded labels, and what a scrape reads. */
import { describe, expect, it } from 'vitest'
import { AppMetrics, MAX_MODELS, MAX_TOOL_NAMES, OTHER_LABEL, type MetricSources } from '../../../server/lib/metrics/app-metrics'
import { observedCallbacks } from '../../../server/lib/jobs/run/observed-callbacks'
import { isScrapeToken } from '../../../server/lib/metrics/scrape-token'

const sources = (overrides: Partial<MetricSources> = {}): MetricSources => ({
  jobs: async () => ({ store: { provider: 'memory', ok: true, latencyMs: 12 }, jobs: { running: 3, waiting: 1, max: 20, accepting: true } }),
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
      model_tokens_total: ['counter', ['model', 'kind']],
      model_cost_total: ['counter', ['model']],
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
      return { store: { provider: 'sqlite', ok: false, latencyMs: 1500, error: 'locked' }, jobs: { running: 2, waiting: 4, max: 20, accepting: true } }
    } }))
    const text = await metrics.render()
    expect(probes).toBe(1)
    expect(sample(text, 'background_jobs{state="running"}')).toBe(2)
    expect(sample(text, 'background_jobs{state="waiting"}')).toBe(4)
    expect(sample(text, 'background_jobs_max')).toBe(20)
    expect(sample(text, 'store_up')).toBe(0)
    expect(sample(text, 'store_probe_latency_seconds')).toBe(1.5)
    expect(sample(text, 'server_tools_registered')).toBe(5)
    expect(sample(text, 'mcp_servers{state="ready"}')).toBe(2)
    expect(sample(text, 'mcp_servers{state="failed"}')).toBe(1)
    expect(sample(text, 'mcp_servers{state="connecting"}')).toBe(0)
    expect(sample(text, 'sse_viewers')).toBe(7)
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

describe('isScrapeToken', () => {
  const token = 'a'.repeat(40)
  it('accepts only "Bearer <the token>", and nothing when no token is set', () => {
    expect(isScrapeToken(`Bearer ${token}`, token)).toBe(true)
    expect(isScrapeToken(`bearer ${token}`, token)).toBe(true)
    expect(isScrapeToken(`Bearer ${token}x`, token)).toBe(false)
    expect(isScrapeToken(token, token)).toBe(false)
    expect(isScrapeToken(undefined, token)).toBe(false)
    expect(isScrapeToken('Bearer ', '')).toBe(false)
    expect(isScrapeToken('Bearer anything', '')).toBe(false)
  })
})

describe('model requests', () => {
  it('counts requests, first-token times, tokens and cost by model, with model ids bounded like tool names', async () => {
    const metrics = new AppMetrics()
    metrics.firstToken('openai/gpt-4o-mini', 850)
    metrics.modelUsage('openai/gpt-4o-mini', { promptTokens: 120, completionTokens: 30, totalTokens: 150, cachedTokens: 0, reasoningTokens: 0, cost: 0.0004 })
    metrics.modelUsage('openai/gpt-4o-mini', { promptTokens: -5, completionTokens: Number.NaN, totalTokens: 0, cachedTokens: 0, reasoningTokens: 0, cost: 0 })
    metrics.modelRequestEnded('openai/gpt-4o-mini')
    metrics.modelRequestEnded('openai/gpt-4o-mini')
    const text = await metrics.render()
    expect(sample(text, 'model_time_to_first_token_seconds_sum{model="openai/gpt-4o-mini"}')).toBe(0.85)
    expect(sample(text, 'model_tokens_total{model="openai/gpt-4o-mini",kind="prompt"}')).toBe(120)
    expect(sample(text, 'model_tokens_total{model="openai/gpt-4o-mini",kind="completion"}')).toBe(30)
    expect(sample(text, 'model_cost_total{model="openai/gpt-4o-mini"}')).toBe(0.0004)
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
    const observer = {
      toolStarted() {},
      toolEnded() {},
      runEnded() {},
      textBatchSent() {},
      firstToken: (model: string, ms: number) => seen.push(`first ${model} ${ms >= 0}`),
      modelUsage: (model: string, usage: { totalTokens: number }) => seen.push(`usage ${model} ${usage.totalTokens}`),
      modelRequestEnded: (model: string) => seen.push(`ended ${model}`),
    }
    const inner: string[] = []
    const callbacks = observedCallbacks(observer, 'm', {
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
      callbacks.onTextDelta!('b', { round })
      callbacks.onUsage!({ promptTokens: 1, completionTokens: 2, totalTokens: 3, cachedTokens: 0, reasoningTokens: 0, cost: 0 }, { round })
      callbacks.afterModelRequest!({ round })
    }
    // One first token per request (reasoning counts as the first text), its usage, its end.
    expect(seen).toEqual(['first m true', 'usage m 3', 'ended m', 'first m true', 'usage m 3', 'ended m'])
    // The wrapped callbacks still get everything.
    expect(inner).toEqual(['reserved', 'a', 'b', 'settled', 'reserved', 'a', 'b', 'settled'])
  })
})
