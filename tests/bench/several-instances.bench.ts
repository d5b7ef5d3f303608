/**
 * Several instances on one Convex deployment 50 ms away (`npm run bench`): two built servers on
 * the project's convex/ functions served over Convex's HTTP API (tests/support/convex-http-backend.ts)
 * with 25 ms added before and after every call. Prints, in one table: one answer alone against 8
 * at once on one instance, how far a viewer on the other instance runs behind, how long a stop
 * asked on the other instance takes, and the mutations the instance sent. Numbers, not assertions.
 */
import { createParser } from 'eventsource-parser'
import { bench, describe } from 'vitest'
import { finishChunk, roleChunk, textChunk, usageChunk } from '../../server/lib/openrouter/chunks'
import { buildApp } from '../support/app-build'
import { startApp, type RunningApp } from '../support/built-app'
import { startConvexHttpBackend, type ConvexHttpBackend } from '../support/convex-http-backend'
import { fakeChunkMeta as meta, startFakeOpenRouter, type FakeOpenRouter, type FakeReply, type StreamStep } from '../support/fake-openrouter'
import { SessionClient } from '../support/job-stream-client'

const ROUND_TRIP_MS = 50
const CHUNKS = 120
const CHUNK_DELAY_MS = 25
const AT_ONCE = 8
const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }
const question = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Tell me a long story' }] }

const now = () => performance.timeOrigin + performance.now()
const rows: Array<{ measure: string, value: string, target: string }> = []

/** An answer of `chunks` pieces `CHUNK_DELAY_MS` apart, each carrying the time it left the upstream. */
function timestampedReply(chunks = CHUNKS): FakeReply {
  const steps: StreamStep[] = [{ chunk: roleChunk(meta) }]
  for (let index = 0; index < chunks; index++) steps.push({ delayMs: CHUNK_DELAY_MS }, { chunkAt: () => textChunk(meta, ` t${now().toFixed(1)}`) })
  steps.push({ chunk: finishChunk(meta, 'stop') }, { chunk: usageChunk(meta, { prompt: 10, completion: chunks }) }, { done: true })
  return { type: 'stream', steps }
}

/** Follows a job's SSE stream to its end, calling `onDelta` with each delta's text and arrival time. */
async function follow(client: SessionClient, jobId: string, onDelta: (content: string, receivedAt: number) => void = () => {}): Promise<number> {
  const response = await client.fetch(`/api/jobs/${jobId}/stream`, { headers: { accept: 'text/event-stream' } })
  let endedAt = 0
  const parser = createParser({
    onEvent: (message) => {
      if (message.event === 'delta') onDelta(JSON.parse(message.data).content ?? '', now())
      if (message.event === 'status') endedAt = now()
    },
  })
  const decoder = new TextDecoder()
  for await (const chunk of response.body!) parser.feed(decoder.decode(chunk as Uint8Array, { stream: true }))
  return endedAt || now()
}

async function startJob(client: SessionClient, body: Record<string, unknown> = question): Promise<string> {
  return client.startJob(body)
}

const sorted = (values: number[]) => [...values].sort((a, b) => a - b)
const at = (values: number[], fraction: number) => sorted(values)[Math.min(values.length - 1, Math.floor(values.length * fraction))] ?? 0

describe('several instances on one Convex deployment', () => {
  bench(`${AT_ONCE} answers at once on one instance, a viewer on the other, a stop from the other, ${ROUND_TRIP_MS} ms to the store`, async () => {
    let convex: ConvexHttpBackend | undefined
    let fake: FakeOpenRouter | undefined
    const apps: RunningApp[] = []
    try {
      convex = await startConvexHttpBackend({ delayMs: ROUND_TRIP_MS })
      fake = await startFakeOpenRouter(() => timestampedReply())
      const entry = await buildApp()
      const env = {
        NUXT_OPENROUTER_BASE_URL: fake.url,
        NUXT_OPENROUTER_API_KEY: 'sk-or-v1-bench-key',
        NUXT_SESSION_PASSWORD: 'a-several-instances-bench-password-long-enough',
        NUXT_BACKGROUND_JOBS_STORAGE_PROVIDER: 'convex',
        NUXT_CONVEX_URL: convex.url,
        NUXT_CONVEX_SERVER_SECRET: convex.secret,
        NUXT_LIMITS_ROLES_GUEST_JOBS_AT_ONCE: String(AT_ONCE + 2),
      }
      apps.push(...await Promise.all([startApp(entry, env), startApp(entry, env)]))
      const [a, b] = apps as [RunningApp, RunningApp]
      const onA = new SessionClient(a.url)
      await onA.json('/api/jobs')
      const onB = new SessionClient(b.url)
      onB.cookie = onA.cookie

      // One answer alone (after one to warm both servers up).
      await follow(onA, await startJob(onA))
      const aloneStart = now()
      const aloneEnd = await follow(onA, await startJob(onA))
      const alone = aloneEnd - aloneStart

      // Eight at once, one of them watched from B.
      const mutationsBefore = convex.mutationCount()
      const pulsesBefore = convex.calls.mutation.get('jobs:pulse') ?? 0
      const lags: number[] = []
      const start = now()
      const ids = await Promise.all(Array.from({ length: AT_ONCE }, () => startJob(onA)))
      const watchedOnB = follow(onB, ids[0]!, (content, receivedAt) => {
        for (const match of content.matchAll(/t(\d+\.\d)/g)) lags.push(receivedAt - Number(match[1]))
      })
      const ends = await Promise.all(ids.map(id => follow(onA, id)))
      await watchedOnB
      const together = Math.max(...ends) - start
      const mutations = convex.mutationCount() - mutationsBefore
      const pulses = (convex.calls.mutation.get('jobs:pulse') ?? 0) - pulsesBefore

      // A stop asked on B for a job A runs (at the default 30 s lease).
      fake.script(() => timestampedReply(2_000))
      const long = await startJob(onA)
      while (!(await onB.json(`/api/jobs/${long}`)).content) await new Promise(resolve => setTimeout(resolve, 20))
      const stopAsked = now()
      const stopped = await onB.json(`/api/jobs/${long}/abort`, { method: 'POST' })
      const stopTook = now() - stopAsked

      rows.push(
        { measure: 'one answer alone', value: `${(alone / 1000).toFixed(2)} s`, target: '' },
        { measure: `${AT_ONCE} answers at once on one instance`, value: `${(together / 1000).toFixed(2)} s (${(together / alone).toFixed(2)}× one)`, target: '≤ 1.5× one' },
        { measure: 'viewer on the other instance behind the upstream: median / p95 / max', value: `${at(lags, 0.5).toFixed(0)} / ${at(lags, 0.95).toFixed(0)} / ${Math.max(...lags).toFixed(0)} ms`, target: '≤ 500 ms' },
        { measure: 'stop asked on the other instance until the job ended', value: `${stopTook.toFixed(0)} ms (${stopped.status})`, target: '≤ 1,000 ms' },
        { measure: `mutations while ${AT_ONCE} answers streamed`, value: `${mutations} (${pulses} heartbeats, ${(mutations / (together / 1000)).toFixed(1)}/s)`, target: '' },
      )
    } finally {
      await Promise.all(apps.map(app => app.stop()))
      await fake?.close()
      await convex?.close()
      console.log(`\nSeveral instances on one Convex deployment, ${ROUND_TRIP_MS} ms round trip`)
      console.table(rows)
    }
  }, once)
})
