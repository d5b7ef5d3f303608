/** Prometheus metrics of the built app: the seed's series after a demo answer with a tool call, and who may read them. */
import { describe, expect, it } from 'vitest'
import { useBuiltApp } from '../support/built-app'

const TOKEN = 'metrics-scrape-token-of-the-e2e-test-0123456789'
const app = useBuiltApp({ NUXT_METRICS_ENABLED: 'true', NUXT_METRICS_TOKEN: TOKEN, NUXT_AUTH_GUESTS: 'true' })
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
    expect(sample(text, 'background_jobs{state="running"}')).toBe(0)
    expect(sample(text, 'store_up')).toBe(1)
    expect(sample(text, 'server_tools_registered')).toBeGreaterThanOrEqual(4)
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \d/m)
    expect(text).toMatch(/^process_resident_memory_bytes \d/m)
    // Job ids and user ids belong in logs, never in labels.
    expect(text).not.toMatch(/job_id|user_id/)
  })

  it('is refused without the token or an admin, and the token is never logged', async () => {
    expect((await scrape()).status).toBe(401)
    expect((await scrape(`Bearer ${TOKEN.slice(0, -1)}x`)).status).toBe(401)
    // A guest is not an admin.
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
})
