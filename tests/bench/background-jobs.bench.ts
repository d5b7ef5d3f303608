/**
 * The background-job benchmarks of `npm run bench`: fan-out to 1,000 SSE viewers against the
 * built server, the no-job-layer baseline, store writes per job, and heap after 5,000 jobs.
 * Each runs once and prints its figures in one table at the end (numbers, not assertions).
 */
import { fork } from 'node:child_process'
import { request as httpRequest, Agent, type IncomingMessage } from 'node:http'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { bench, describe } from 'vitest'
import { BackgroundJobManager } from '../../server/lib/jobs/manager'
import { runChatJob } from '../../server/lib/jobs/run/chat'
import { JobLiveHub } from '../../server/lib/jobs/live-hub'
import { createSecretBox } from '../../server/lib/security/secret-box'
import { finishChunk, roleChunk, textChunk, usageChunk } from '../../server/lib/openrouter/chunks'
import { clearServerTools } from '../../server/lib/tools/registry'
import { createSqliteJobStore } from '../../server/lib/stores/jobs/sqlite'
import type { JobStore } from '../../server/lib/stores/jobs/job-store'
import { convexTest } from 'convex-test'
import schema from '../../convex/schema'
import { createConvexJobStore, type ConvexFunctionClient } from '../../server/lib/stores/jobs/convex'
import { buildApp } from '../support/app-build'
import { startApp, type RunningApp } from '../support/built-app'
import { fakeChunkMeta as meta, startFakeOpenRouter, textReply, type FakeOpenRouter, type FakeReply, type StreamStep } from '../support/fake-openrouter'
import { freePort } from '../support/free-port'
import { SessionClient } from '../support/job-stream-client'
import { testServerConfig } from '../support/server-config'
import { percentile, processCpuMs, processRssMb } from './support/process-stats'
import { processTools } from '../../server/lib/tools/run-tools'

const JOBS = 50
const VIEWERS_PER_JOB = 20
const CHUNKS_PER_JOB = 500
const CHUNK_DELAY_MS = 20
const BATCH_INTERVAL_MS = 100
const once = { iterations: 1, warmupIterations: 0, time: 0, warmupTime: 0 }

const rows: Array<{ measure: string, value: string, target: string }> = []
const directories: string[] = []

const now = () => performance.timeOrigin + performance.now()

/** ~50 chunks/s, each carrying the time it was written upstream. */
function timestampedReply(): FakeReply {
  const steps: StreamStep[] = [{ chunk: roleChunk(meta) }]
  for (let index = 0; index < CHUNKS_PER_JOB; index++) {
    steps.push({ delayMs: CHUNK_DELAY_MS }, { chunkAt: () => textChunk(meta, ` t${now().toFixed(1)}`) })
  }
  steps.push({ chunk: finishChunk(meta, 'stop') }, { chunk: usageChunk(meta, { prompt: 10, completion: CHUNKS_PER_JOB }) }, { done: true })
  return { type: 'stream', steps }
}

/** Viewers the server disconnected for falling 1 MiB behind, which came back with Last-Event-ID. */
let resumedViewers = 0

/** Calls `onFrame` with each SSE frame of `response` (the text between blank lines) and when its chunk arrived. */
function onFrames(response: IncomingMessage, onFrame: (frame: string, receivedAt: number) => void): void {
  response.setEncoding('utf8')
  let buffer = ''
  response.on('data', (chunk: string) => {
    const receivedAt = now()
    buffer += chunk
    let end = buffer.indexOf('\n\n')
    while (end >= 0) {
      const frame = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      end = buffer.indexOf('\n\n')
      onFrame(frame, receivedAt)
    }
  })
}

/**
 * Reads an SSE response, calling `onData` with each frame's event name, data line and arrival
 * time; resolves at the end. With `resume`, a job stream that ends before its `status` event (the
 * server drops a viewer that falls too far behind) is reopened with `Last-Event-ID`, as
 * EventSource does, so every delta is still counted exactly once.
 */
function readStream(url: string, headers: Record<string, string>, agent: Agent, onData: (event: string, data: string, receivedAt: number) => void, options: { resume?: boolean } = {}): Promise<void> {
  let lastEventId: string | undefined
  let finished = false
  const connect = (): Promise<void> => new Promise((resolve, reject) => {
    const request = httpRequest(url, { headers: lastEventId ? { ...headers, 'last-event-id': lastEventId } : headers, agent }, (response) => {
      onFrames(response, (frame, receivedAt) => {
        const dataAt = frame.indexOf('data: ')
        const eventAt = frame.indexOf('event: ')
        const event = eventAt >= 0 ? frame.slice(eventAt + 7, frame.indexOf('\n', eventAt)) : 'message'
        if (frame.startsWith('id: ')) lastEventId = frame.slice(4, frame.indexOf('\n'))
        if (event === 'status') finished = true
        if (dataAt >= 0) onData(event, frame.slice(dataAt + 6), receivedAt)
      })
      response.on('end', () => resolve())
      response.on('error', error => options.resume ? resolve() : reject(error))
    })
    request.on('error', error => options.resume ? resolve() : reject(error))
    request.end()
  })
  const run = async (): Promise<void> => {
    await connect()
    for (let attempt = 0; options.resume && !finished && attempt < 20; attempt++) {
      resumedViewers++
      await connect()
    }
  }
  return run()
}

const MARKER = /t(\d{13}\.\d)/g

/**
 * Counts the chunks a frame delivers and records their latency. Chunks inside a snapshot (a viewer
 * joining mid-answer) count as delivered but not towards latency: they were written before the
 * viewer connected.
 */
function collectLatencies(event: string, data: string, receivedAt: number, into: number[]): number {
  let count = 0
  for (const match of data.matchAll(MARKER)) {
    if (event !== 'snapshot') into.push(receivedAt - Number(match[1]))
    count++
  }
  return count
}

async function measureCpu<T>(pid: number, work: (sampleRss: () => void) => Promise<T>): Promise<{ result: T, cpuMs: number, peakRssMb: number, seconds: number }> {
  let peakRssMb = processRssMb(pid)
  const sample = () => { peakRssMb = Math.max(peakRssMb, processRssMb(pid)) }
  const timer = setInterval(sample, 250)
  const cpuBefore = processCpuMs(pid)
  const started = now()
  try {
    const result = await work(sample)
    return { result, cpuMs: processCpuMs(pid) - cpuBefore, peakRssMb, seconds: (now() - started) / 1000 }
  } finally {
    clearInterval(timer)
  }
}

/** Streams a 2,000-chunk answer through one job into `store` and reports the write count. */
async function measureWrites(label: string, store: JobStore, writes: () => number): Promise<void> {
  clearServerTools()
  const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-bench' } })
  fake.script(() => textReply('x'.repeat(2000), { pieceSize: 1, delayMs: 1 }))
  const job = await store.createJob({ userId: 'u', threadId: 't', messageId: 'm', type: 'chat', model: 'bench/model', request: { model: 'bench/model', messages: [{ role: 'user', content: 'go' }], fields: {} } })
  const before = writes()
  const started = now()
  await runChatJob({ tools: processTools, job, store, hub: new JobLiveHub(), config, endpoint: { baseUrl: fake.url, apiKey: 'sk-bench', label: 'OpenRouter' }, signal: new AbortController().signal })
  const windows = Math.ceil((now() - started) / config.backgroundJobs.flush.intervalMs)
  const count = writes() - before
  const stored = await store.getJob(job.id)
  rows.push(
    { measure: `writes (${label}): store writes for 2,000 chunks`, value: `${count} (${stored!.content.length} chars stored)`, target: `≤ ${windows + 2} (one per flush window, + last flush + final write)` },
    { measure: `writes (${label}): fewer than one per chunk by`, value: `${(2000 / count).toFixed(0)}×`, target: '≥ 20×' },
  )
}


// Benchmarks do not run hooks around `bench`, so set-up happens at load and the report at the end.
const fake: FakeOpenRouter = await startFakeOpenRouter()
const entry = await buildApp()

/** Starts the built server on a fresh data directory with the fan-out's limits. */
function startBenchApp(env: Record<string, string> = {}): Promise<RunningApp> {
  const dataDir = mkdtempSync(join(tmpdir(), 'or3-bench-'))
  directories.push(dataDir)
  return startApp(entry, {
    NUXT_OPENROUTER_BASE_URL: fake.url,
    NUXT_OPENROUTER_API_KEY: 'sk-or-bench',
    NUXT_DATA_DIR: dataDir,
    NUXT_SESSION_PASSWORD: 'a-benchmark-session-password-long-enough',
    NUXT_BACKGROUND_JOBS_MAX_CONCURRENT_JOBS: String(JOBS * 2),
    NUXT_LIMITS_ROLES_GUEST_JOBS_AT_ONCE: String(JOBS * 2),
    // One benchmark session watches every job with every viewer.
    NUXT_BACKGROUND_JOBS_STREAMS_PER_USER: '10000',
    NUXT_BACKGROUND_JOBS_STREAMS_PER_JOB: '1000',
    // Every viewer is 127.0.0.1: the cap per client address (200 by default) would refuse most of them.
    NUXT_BACKGROUND_JOBS_STREAMS_PER_ADDRESS: '10000',
    ...env,
  })
}

/** CPU per delivered delta of each fan-out run, for the comparison with the baseline. */
const fanOutCpu: Array<{ label: string, cpuPerDeltaMs: number }> = []

/** How one viewer watches a job in a fan-out: resolves with the chunks it was delivered. */
type WatchJob = (baseUrl: string, cookie: string, jobId: string, agent: Agent, latencies: number[]) => Promise<number>

/** A viewer on the job's own stream (`GET /api/jobs/:id/stream`); a snapshot holds all the text so far (a late join, or a resume past the replay log). */
function watchOwnStream(baseUrl: string, cookie: string, jobId: string, agent: Agent, latencies: number[]): Promise<number> {
  let seen = 0
  return readStream(`${baseUrl}/api/jobs/${jobId}/stream`, { cookie, accept: 'text/event-stream' }, agent, (event, data, receivedAt) => {
    const count = collectLatencies(event, data, receivedAt, latencies)
    seen = event === 'snapshot' ? count : seen + count
  }, { resume: true }).then(() => seen)
}

/**
 * `JOBS` jobs streaming at ~50 chunks/s, each watched by `viewersPerJob` viewers through `watch`,
 * on a server started with `env`: the deltas delivered, their latency, the server's peak RSS and
 * CPU per delivered delta.
 */
async function measureViewers(options: { label: string, env?: Record<string, string>, viewersPerJob: number, watch: WatchJob, targets: { latency: string, rss: string } }): Promise<void> {
  const { label, viewersPerJob, watch, targets } = options
  const app = await startBenchApp(options.env)
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity })
  try {
    fake.script(() => timestampedReply())
    const client = new SessionClient(app.url)
    await client.json('/api/jobs')
    const latencies: number[] = []
    let delivered = 0
    resumedViewers = 0
    const { cpuMs, peakRssMb, seconds } = await measureCpu(app.process.pid!, async () => {
      const viewers: Array<Promise<void>> = []
      for (let job = 0; job < JOBS; job++) {
        const jobId = await client.startJob({ model: 'bench/model', messages: [{ role: 'user', content: `job ${job}` }] })
        for (let viewer = 0; viewer < viewersPerJob; viewer++) viewers.push(watch(app.url, client.cookie, jobId, agent, latencies).then((seen) => { delivered += seen }))
      }
      await Promise.all(viewers)
    })
    const sorted = Float64Array.from(latencies).sort()
    fanOutCpu.push({ label, cpuPerDeltaMs: cpuMs / delivered })
    rows.push(
      { measure: `fan-out (${label}): delivered / expected`, value: `${delivered.toLocaleString('en')} / ${(JOBS * viewersPerJob * CHUNKS_PER_JOB).toLocaleString('en')} (${Math.round(delivered / seconds).toLocaleString('en')} deltas/s; ${resumedViewers} viewers fell 1 MiB behind and resumed)`, target: 'all' },
      { measure: `fan-out (${label}): latency p50 / p99 (upstream write → viewer)`, value: `${percentile(sorted, 0.5).toFixed(1)} / ${percentile(sorted, 0.99).toFixed(1)} ms`, target: targets.latency },
      { measure: `fan-out (${label}): server peak RSS`, value: `${peakRssMb.toFixed(0)} MB`, target: targets.rss },
      { measure: `fan-out (${label}): server CPU per delivered delta`, value: `${(cpuMs / delivered * 1000).toFixed(2)} µs`, target: '' },
    )
  } finally {
    agent.destroy()
    await app.stop()
  }
}

/** The per-job streams: before (the previous defaults, always the whole 100 ms interval) and after (today's adaptive defaults). */
function measureFanOut(viewersPerJob: number, adaptive: boolean): Promise<void> {
  return measureViewers({
    label: `${(JOBS * viewersPerJob).toLocaleString('en')} viewers, ${adaptive ? 'adaptive (defaults)' : `fixed ${BATCH_INTERVAL_MS} ms (before)`}`,
    env: adaptive ? {} : { NUXT_BACKGROUND_JOBS_SSE_BATCHING_ADAPTIVE: 'false', NUXT_BACKGROUND_JOBS_SSE_BATCHING_INTERVAL_MS: String(BATCH_INTERVAL_MS) },
    viewersPerJob,
    watch: watchOwnStream,
    targets: { latency: viewersPerJob === VIEWERS_PER_JOB && adaptive ? '≤ 25 / ≤ 110 ms' : '', rss: viewersPerJob === VIEWERS_PER_JOB ? '≤ 200 MB' : '' },
  })
}

/**
 * One browser's shared live connection (`GET /api/events`) carrying one job: asks for the job once
 * the connection says its id, counts the chunks its frames deliver (and their latency), and ends at
 * the job's status. Resolves with the chunks delivered.
 */
function watchShared(baseUrl: string, cookie: string, jobId: string, agent: Agent, latencies: number[]): Promise<number> {
  return new Promise((resolve, reject) => {
    let seen = 0
    const request = httpRequest(`${baseUrl}/api/events`, { headers: { cookie, accept: 'text/event-stream' }, agent }, (response) => {
      onFrames(response, (frame, receivedAt) => {
        const data = frame.slice(frame.indexOf('data: ') + 6)
        if (frame.startsWith('event: ready')) {
          const body = JSON.stringify({ watch: [{ jobId }] })
          const change = httpRequest(`${baseUrl}/api/events/${JSON.parse(data).streamId}`, { method: 'POST', agent, headers: { 'cookie': cookie, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (answer) => {
            // The viewer ends its connection at the job's status; a reset of this answer's socket then is not a failure.
            answer.on('error', () => {})
            answer.resume()
          })
          change.on('error', reject)
          change.end(body)
        } else if (frame.startsWith('event: job\n')) {
          const snapshot = data.includes('"event":{"type":"snapshot"')
          const count = collectLatencies(snapshot ? 'snapshot' : 'delta', data, receivedAt, latencies)
          seen = snapshot ? count : seen + count
          if (data.includes('"event":{"type":"status"')) {
            request.destroy()
            resolve(seen)
          }
        }
      })
      response.on('end', () => resolve(seen))
      response.on('error', () => resolve(seen))
    })
    request.on('error', () => resolve(seen))
    request.end()
  })
}

/** The same fan-out, each viewer a browser's shared connection (`GET /api/events`) rather than the job's own stream. */
function measureSharedFanOut(viewersPerJob: number): Promise<void> {
  return measureViewers({ label: `${(JOBS * viewersPerJob).toLocaleString('en')} viewers, shared connections`, viewersPerJob, watch: watchShared, targets: { latency: '', rss: '' } })
}

/**
 * Time to the first delta on an idle server: `POST /api/openrouter/stream` (the starter watches
 * its own job) against the fake upstream, from the POST and from the upstream's first text chunk.
 */
async function measureFirstDelta(): Promise<void> {
  const app = await startBenchApp()
  const agent = new Agent({ keepAlive: true })
  try {
    const client = new SessionClient(app.url)
    await client.json('/api/jobs')
    const fromPost: number[] = []
    const fromUpstream: number[] = []
    for (let run = 0; run < 20; run++) {
      fake.script(() => ({ type: 'stream', steps: [{ chunk: roleChunk(meta) }, { delayMs: 5 }, { chunkAt: () => textChunk(meta, ` t${now().toFixed(1)}`) }, { delayMs: 5 }, { chunk: finishChunk(meta, 'stop') }, { done: true }] }))
      const posted = now()
      let first: number | undefined
      await new Promise<void>((resolve, reject) => {
        const body = JSON.stringify({ model: 'bench/model', messages: [{ role: 'user', content: `first ${run}` }] })
        const request = httpRequest(`${app.url}/api/openrouter/stream`, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'cookie': client.cookie, 'content-length': Buffer.byteLength(body) } }, (response) => {
          response.setEncoding('utf8')
          response.on('data', (chunk: string) => {
            const receivedAt = now()
            if (first !== undefined) return
            const match = /event: delta\ndata: .*t(\d{13}\.\d)/.exec(chunk)
            if (!match) return
            first = receivedAt
            fromPost.push(receivedAt - posted)
            fromUpstream.push(receivedAt - Number(match[1]))
          })
          response.on('end', () => resolve())
          response.on('error', reject)
        })
        request.on('error', reject)
        request.end(body)
      })
    }
    const sortedPost = Float64Array.from(fromPost).sort()
    const sortedUpstream = Float64Array.from(fromUpstream).sort()
    rows.push(
      { measure: 'first delta: POST → viewer, p50 / max of 20', value: `${percentile(sortedPost, 0.5).toFixed(1)} / ${sortedPost.at(-1)!.toFixed(1)} ms`, target: '' },
      { measure: 'first delta: upstream first text chunk → viewer, p50 / max of 20', value: `${percentile(sortedUpstream, 0.5).toFixed(1)} / ${sortedUpstream.at(-1)!.toFixed(1)} ms`, target: '≤ 15 ms' },
    )
  } finally {
    agent.destroy()
    await app.stop()
  }
}


function report(): void {
  void fake.close()
  for (const directory of directories) rmSync(directory, { recursive: true, force: true })
  console.log('\nBackground jobs benchmark')
  console.table(rows)
}

describe('background jobs', () => {
  bench(`fan-out: ${JOBS} jobs × ${VIEWERS_PER_JOB} and × ${VIEWERS_PER_JOB * 3} SSE viewers, fixed-interval and adaptive batching`, async () => {
    // Before (always the whole interval) and after (batching only under load), in one run.
    for (const viewersPerJob of [VIEWERS_PER_JOB, VIEWERS_PER_JOB * 3]) {
      for (const adaptive of [false, true]) await measureFanOut(viewersPerJob, adaptive)
    }
    // The same 1,000 viewers, each a browser's one shared connection.
    await measureSharedFanOut(VIEWERS_PER_JOB)
    await measureFirstDelta()
  }, once)

  bench(`baseline: ${JOBS} upstream streams piped to one client each, no job layer`, async () => {
    const port = await freePort()
    const proxy = fork(join(import.meta.dirname, 'support/passthrough-proxy.mjs'), { env: { ...process.env, PORT: String(port), UPSTREAM_URL: fake.url }, stdio: 'ignore' })
    await new Promise(resolve => proxy.once('message', resolve))
    const agent = new Agent({ keepAlive: true, maxSockets: Infinity })
    try {
      fake.script(() => timestampedReply())
      let delivered = 0
      const latencies: number[] = []
      const { cpuMs } = await measureCpu(proxy.pid!, async () => {
        await Promise.all(Array.from({ length: JOBS }, () => readStream(`http://127.0.0.1:${port}/`, {}, agent, (event, data, receivedAt) => {
          delivered += collectLatencies(event, data, receivedAt, latencies)
        })))
      })
      const baselinePerChunkMs = cpuMs / delivered
      rows.push({ measure: 'baseline: CPU per delivered chunk', value: `${(baselinePerChunkMs * 1000).toFixed(2)} µs`, target: '' })
      for (const run of fanOutCpu) {
        rows.push({ measure: `job layer CPU per delivered delta ÷ baseline (${run.label})`, value: `${(run.cpuPerDeltaMs / baselinePerChunkMs).toFixed(2)}×`, target: run.label.startsWith('1,000 viewers, adaptive') ? '≤ 1.0×' : '' })
      }
    } finally {
      agent.destroy()
      proxy.kill()
    }
  }, once)

  bench('store writes for a 2,000-chunk answer (sqlite)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'or3-bench-writes-'))
    directories.push(dataDir)
    const sqlite = createSqliteJobStore({ path: join(dataDir, 'writes.sqlite') })
    let writes = 0
    const counted = (name: keyof JobStore) => async (...args: unknown[]) => {
      writes++
      return (sqlite[name] as (...inner: unknown[]) => unknown)(...args)
    }
    const store = { ...sqlite, updateJob: counted('updateJob'), updateRunState: counted('updateRunState'), endJob: counted('endJob') } as JobStore
    await measureWrites('sqlite', store, () => writes)
    await sqlite.close()
  }, once)

  bench('store writes for a 2,000-chunk answer (Convex, mutations counted)', async () => {
    process.env.OR3_SERVER_SECRET = 'a-benchmark-convex-secret-of-enough-length'
    const backend = convexTest({ schema, modules: import.meta.glob('../../convex/**/*.ts'), transactionLimits: true }) as unknown as ConvexFunctionClient
    let mutations = 0
    const client = {
      query: backend.query.bind(backend),
      mutation: (fn: any, ...args: any[]) => {
        mutations++
        return (backend.mutation as any)(fn, ...args)
      },
    } as ConvexFunctionClient
    const store = createConvexJobStore({ client, secret: process.env.OR3_SERVER_SECRET })
    await measureWrites('Convex', store, () => mutations)
  }, once)

  bench('heap after 5,000 completed jobs with viewers', async () => {
    clearServerTools()
    setFlagsFromString('--expose-gc')
    const gc = runInNewContext('gc') as () => void
    const dataDir = mkdtempSync(join(tmpdir(), 'or3-bench-heap-'))
    directories.push(dataDir)
    const store = createSqliteJobStore({ path: join(dataDir, 'heap.sqlite') })
    const hub = new JobLiveHub({ graceMs: 20 })
    const config = testServerConfig({ openrouter: { baseUrl: fake.url, apiKey: 'sk-bench' }, backgroundJobs: { maxConcurrentJobs: 100 }, limits: { fairShare: 1, roles: { user: { jobsAtOnce: 100, jobStartsPerMinute: 1_000_000 } } } })
    const manager = new BackgroundJobManager({ tools: processTools, store, hub, config, secretBox: createSecretBox('a benchmark secret that is long enough') })
    // An upstream of its own that keeps no request log, so the heap measured is the job layer's.
    const upstream = await startFakeOpenRouter([], { keepRequests: false })
    config.openrouter.baseUrl = upstream.url
    upstream.script(() => textReply('A short answer for the heap benchmark, in a few chunks.', { pieceSize: 6 }))
    const runJobs = async (count: number) => {
      for (let offset = 0; offset < count; offset += 50) {
        await Promise.all(Array.from({ length: Math.min(50, count - offset) }, async (_, index) => {
          const job = await manager.startChatJob({ principal: { userId: `user-${index % 10}`, role: 'user' }, request: { model: 'bench/model', messages: [{ role: 'user', content: 'hi' }], fields: {} } })
          let disposeAll = () => {}
          const ended = new Promise<void>((resolve) => {
            const viewers = [0, 1].map(() => hub.subscribe(job.id, (event) => {
              if (event.event.type === 'status') {
                disposeAll()
                resolve()
              }
            })!)
            disposeAll = () => viewers.forEach(viewer => viewer.dispose())
          })
          await ended
        }))
      }
    }
    const settle = async () => {
      await new Promise(resolve => setTimeout(resolve, 100))
      for (let round = 0; round < 3; round++) gc()
      return process.memoryUsage().heapUsed / 1024 / 1024
    }
    await runJobs(200)
    const baseline = await settle()
    await runJobs(5000)
    const after = await settle()
    await manager.shutdown()
    await store.close()
    await upstream.close()
    rows.push(
      { measure: 'heap: after 5,000 jobs vs baseline', value: `${(after - baseline).toFixed(1)} MB (${baseline.toFixed(0)} → ${after.toFixed(0)} MB)`, target: '≤ 10 MB' },
      { measure: 'heap: live job states left', value: String(hub.size), target: '0' },
    )
    report()
  }, once)
})
