/** The Status page's history: samples of the health reports and of what the counters gained, an hour kept, today's model use. */
import { describe, expect, it } from 'vitest'
import { AppMetrics, type MetricSources } from '../../../server/lib/metrics/app-metrics'
import { StatusHistory } from '../../../server/lib/metrics/status-history'

function sources(state: { running: number, latencyMs: number }): MetricSources {
  return {
    jobs: async () => ({ store: { provider: 'memory', ok: true, latencyMs: state.latencyMs }, jobs: { running: state.running, waiting: 1, queued: 0, max: 20, accepting: true } }),
    tools: async () => ({ registered: 3, mcpServers: [{ name: 'files', state: 'ready' }] }),
    viewers: () => 2,
  }
}
const usage = (prompt: number, completion: number, cost: number) => ({ promptTokens: prompt, completionTokens: completion, totalTokens: prompt + completion, cachedTokens: 0, reasoningTokens: 0, cost })

describe('StatusHistory', () => {
  it("samples the reports and what the counters gained since the sample before, and keeps one hour", async () => {
    let now = Date.UTC(2026, 10, 25, 10, 0, 0)
    const state = { running: 2, latencyMs: 4 }
    const metrics = new AppMetrics()
    const history = new StatusHistory({ metrics, sources: sources(state), now: () => now })
    await history.sample()
    metrics.modelRequestEnded('m')
    metrics.modelRequestEnded('m', 'rate_limited')
    metrics.modelUsage('m', usage(100, 20, 0.01))
    metrics.toolStarted('calculate')
    metrics.toolEnded('calculate', 'error', 5)
    metrics.toolEnded('calculate', 'refused', 0)
    now += 15_000
    state.running = 5
    await history.sample()
    let status = await history.status()
    expect(status.samples).toHaveLength(2)
    expect(status.samples[0]).toMatchObject({ running: 2, waiting: 1, modelRequests: 0, tokens: 0 })
    expect(status.samples[1]).toMatchObject({ at: now, running: 5, viewers: 2, storeLatencyMs: 4, modelRequests: 2, upstreamErrors: 1, tokens: 120, cost: 0.01, toolCalls: 1, toolFailures: 1 })
    expect(status.samples[1]!.eventLoopUtilization).toBeGreaterThanOrEqual(0)
    expect(status.samples[1]!.rssBytes).toBeGreaterThan(0)
    expect(status).toMatchObject({ jobs: { running: 5 }, mcpServers: [{ name: 'files', state: 'ready' }], viewers: 2 })
    // An hour later the first samples are gone.
    now += 60 * 60_000
    await history.sample()
    status = await history.status()
    expect(status.samples.map(sample => sample.at)).toEqual([now])
  })

  it("counts today's model use from the process's start, and from midnight UTC on the next day", async () => {
    let now = Date.UTC(2026, 10, 25, 22, 0, 0)
    const metrics = new AppMetrics()
    const history = new StatusHistory({ metrics, sources: sources({ running: 0, latencyMs: 1 }), now: () => now })
    await history.sample()
    metrics.modelRequestEnded('a')
    metrics.modelUsage('a', usage(10, 5, 0.5))
    metrics.modelRequestEnded('b')
    expect((await history.status()).today).toEqual({
      since: Date.UTC(2026, 10, 25, 22, 0, 0),
      models: [{ model: 'a', requests: 1, promptTokens: 10, completionTokens: 5, cost: 0.5 }, { model: 'b', requests: 1, promptTokens: 0, completionTokens: 0, cost: 0 }],
    })
    await history.sample()
    // The next day: only what came after the last sample before midnight.
    now = Date.UTC(2026, 10, 26, 0, 0, 10)
    metrics.modelRequestEnded('b')
    await history.sample()
    expect((await history.status()).today).toEqual({ since: Date.UTC(2026, 10, 26), models: [{ model: 'b', requests: 1, promptTokens: 0, completionTokens: 0, cost: 0 }] })
  })

  it('samples on a timer once started, and stops when closed', async () => {
    const metrics = new AppMetrics()
    const history = new StatusHistory({ metrics, sources: sources({ running: 1, latencyMs: 1 }), intervalMs: 5 })
    history.start()
    await expect.poll(async () => (await history.status()).samples.length).toBeGreaterThanOrEqual(3)
    history.close()
    const taken = (await history.status()).samples.length
    await new Promise(resolve => setImmediate(resolve))
    await history.sample()
    expect((await history.status()).samples.length).toBe(taken + 1)
  })
})
