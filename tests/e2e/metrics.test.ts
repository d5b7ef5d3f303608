/** Prometheus metrics of the built app: the seed's series after a demo answer with a tool call, and who may read them. */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { useBuiltApp } from '../support/built-app'
import { freePort } from '../support/free-port'

const TOKEN = 'metrics-scrape-token-of-the-e2e-test-0123456789'
const app = useBuiltApp({ NUXT_METRICS_ENABLED: 'true', NUXT_METRICS_TOKEN: TOKEN, NUXT_AUTH_GUESTS: 'true', NUXT_AUTH_SIGN_IN_ATTEMPTS_PER_IP_PER_MINUTE: '2' })
const scrape = (authorization?: string, cookie?: string) => fetch(`${app.url}/metrics`, { headers: { ...(authorization ? { authorization } : {}), ...(cookie ? { cookie } : {}) } })

/** One sample's value, by its series and labels as the text format writes them. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find(item => item.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

describe('GET /metrics', () => {
  it("counts a demo answer's tool call, its rounds and its batches, and reads jobs, the store and the process", async () => {
    const before = await (await scrape(`Bearer ${TOKEN}`)).text()
    const started = sample(before, 'background_tool_execution_started_total{tool_name="get_current_time"}') ?? 0
    const answer = await fetch(`${app.url}/api/openrouter/stream`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ model: 'or3/offline-demo', messages: [{ role: 'user', content: 'What time is it in Tokyo?' }] }),
    })
    expect(answer.status).toBe(200)
    // The stream ends with the job's status event, after the run has ended.
    expect(await answer.text()).toContain('"status":"complete"')

    const response = await scrape(`Bearer ${TOKEN}`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
    expect(response.headers.get('cache-control')).toBe('no-store')
    const text = await response.text()
    expect(sample(text, 'background_tool_execution_started_total{tool_name="get_current_time"}')).toBe(started + 1)
    expect(sample(text, 'background_tool_execution_completed_total{tool_name="get_current_time"}')).toBe(started + 1)
    expect(sample(text, 'background_tool_execution_duration_seconds_count{tool_name="get_current_time"}')).toBe(started + 1)
    expect(sample(text, 'background_jobs_ended_total{type="chat",outcome="complete"}')).toBeGreaterThanOrEqual(1)
    // One tool round: the request that asked for the tool, and the one that answered with it.
    expect(sample(text, 'background_job_rounds_bucket{le="2",type="chat"}')).toBeGreaterThanOrEqual(1)
    expect(sample(text, 'sse_broadcast_batch_size_count')).toBeGreaterThan(0)
    // Both of the answer's model requests, by model: their first tokens, and what the demo model reports it used.
    expect(sample(text, 'model_requests_total{model="or3/offline-demo"}')).toBeGreaterThanOrEqual(2)
    expect(sample(text, 'model_time_to_first_token_seconds_count{model="or3/offline-demo"}')).toBeGreaterThanOrEqual(1)
    expect(sample(text, 'model_tokens_total{model="or3/offline-demo",kind="completion",role="guest"}')).toBeGreaterThan(0)
    expect(sample(text, 'background_jobs_started_total{type="chat",resumed="false"}')).toBeGreaterThanOrEqual(1)
    // The answer's stream had a viewer (this request), so its events went out as frames.
    expect(sample(text, 'sse_frames_sent_total{type="status"}')).toBeGreaterThanOrEqual(1)
    // Every store call is timed by its operation: the job's creation and its end among them.
    expect(sample(text, 'store_operation_duration_seconds_count{store="jobs",operation="createJob"}')).toBeGreaterThanOrEqual(1)
    expect(text).toMatch(/^store_operation_duration_seconds_count\{store="threads",operation="\w+"\} \d/m)
    expect(text).toMatch(/^nodejs_eventloop_utilization_ratio [\d.e-]+$/m)
    expect(sample(text, 'background_jobs{state="running"}')).toBe(0)
    expect(sample(text, 'background_jobs{state="queued"}')).toBe(0)
    expect(sample(text, 'store_up')).toBe(1)
    expect(sample(text, 'server_tools_registered')).toBeGreaterThanOrEqual(4)
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m)
    expect(text).toMatch(/^process_resident_memory_bytes \d/m)
    // Job ids and user ids belong in logs, never in labels.
    expect(text).not.toMatch(/job_id|user_id/)
  })

  it('is refused without the token or an admin, and the token is never logged', async () => {
    // Another token is taken for a personal API token, and no account has it.
    expect((await scrape(`Bearer ${TOKEN.slice(0, -1)}x`)).status).toBe(401)
    // Without one, a visitor is a guest here (guests are on), and a guest is not an admin.
    expect((await scrape()).status).toBe(403)
    const guest = await fetch(`${app.url}/api/threads`)
    const cookie = guest.headers.getSetCookie().map(value => value.split(';')[0]).join('; ')
    expect(cookie).not.toBe('')
    expect((await scrape(undefined, cookie)).status).toBe(403)
    // The first account is the admin, whose session may read them.
    const admin = await fetch(`${app.url}/api/auth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Admin', password: 'a long enough password' }) })
    expect(admin.status).toBe(201)
    const adminCookie = admin.headers.getSetCookie().find(value => value.startsWith('or3-session='))!.split(';')[0]!
    expect((await scrape(undefined, adminCookie)).status).toBe(200)
    expect(app.logs()).not.toContain(TOKEN)
  })

  it('counts requests refused by a limit, by the limit', async () => {
    const refusals = async () => sample(await (await scrape(`Bearer ${TOKEN}`)).text(), 'limit_refusals_total{limit="auth_attempts"}') ?? 0
    const before = await refusals()
    // Two sign-in attempts a minute from one address here: the third is refused by the limit.
    const statuses: number[] = []
    for (let attempt = 0; attempt < 3; attempt++) {
      statuses.push((await fetch(`${app.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Nobody', password: 'not the password at all' }) })).status)
    }
    expect(statuses).toContain(429)
    expect(await refusals()).toBe(before + statuses.filter(status => status === 429).length)
  })

  it("passes Prometheus' own check (promtool), and a real Prometheus scrapes it with the token", async () => {
    const text = await (await scrape(`Bearer ${TOKEN}`)).text()
    const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' })
    expect(check.error).toBeUndefined()
    expect(check.status, `${check.stdout}${check.stderr}`).toBe(0)

    const dir = mkdtempSync(join(tmpdir(), 'or3-prometheus-'))
    const port = await freePort()
    const target = new URL(app.url).host
    writeFileSync(join(dir, 'prometheus.yml'), [
      'global: { scrape_interval: 1s, scrape_timeout: 1s }',
      'scrape_configs:',
      '  - job_name: or3',
      `    authorization: { type: Bearer, credentials: ${TOKEN} }`,
      `    static_configs: [{ targets: ['${target}'] }]`,
    ].join('\n'))
    const prometheus = spawn('prometheus', [`--config.file=${join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${join(dir, 'data')}`, `--web.listen-address=127.0.0.1:${port}`], { stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    prometheus.stdout.on('data', chunk => (output += String(chunk)))
    prometheus.stderr.on('data', chunk => (output += String(chunk)))
    const exited = new Promise(done => prometheus.once('exit', done))
    const api = async <T>(path: string): Promise<T | undefined> => {
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/${path}`).catch(() => undefined)
      return response?.ok ? (await response.json() as { data: T }).data : undefined
    }
    try {
      await expect.poll(async () => (await api<{ activeTargets: Array<{ health: string, lastError: string }> }>('targets'))?.activeTargets[0], { message: output }).toMatchObject({ health: 'up', lastError: '' })
      await expect.poll(async () => {
        const result = await api<{ result: Array<{ metric: Record<string, string>, value: [number, string] }> }>(`query?query=${encodeURIComponent('background_tool_execution_started_total{job="or3"}')}`)
        return result?.result.find(series => series.metric.tool_name === 'get_current_time')?.value[1]
      }).toBe('1')
    } finally {
      prometheus.kill('SIGTERM')
      await exited
      rmSync(dir, { recursive: true, force: true })
    }
  })
})
