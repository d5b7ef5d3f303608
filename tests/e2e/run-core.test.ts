/**
 * The run core's edges (issue 26), end to end on the built server with the fake OpenRouter:
 * kill -9 at every checkpoint boundary of a workflow whose agent calls tools with side effects
 * (each runs once whatever the moment), an approval inside an agent step answered across a
 * restart, requests that end with their job (410, not listed), a browser tool's result only from
 * the tab holding its claim (409), a rejection that ends the run as `rejected`, waiting jobs that
 * do not hold running slots, and parallel starts that stay within a small budget.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { roleChunk } from '../../server/lib/openrouter/chunks'
import { fakeChunkMeta, textReply, toolCallReply, useFakeOpenRouter, type FakeReply, type RecordedRequest } from '../support/fake-openrouter'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useAppServers, useBuiltApp } from '../support/built-app'
import type { JobInputRequest } from '../../shared/types/input-request'

const MODEL = 'openai/gpt-4o-mini'
const stall: FakeReply = { type: 'stream', steps: [{ chunk: roleChunk(fakeChunkMeta) }, { stall: true }] }

const fake = useFakeOpenRouter()
let root: string
let toolsDir: string
let policyFile: string
let effectsFile: string

/** Two tools with side effects (a line in the effects file per run): `send_note` hangs after writing when asked to; `charge_card` needs approval. */
const TOOL_FILES = {
  'send-note.mjs': `import { appendFileSync } from 'node:fs'
export default {
  name: 'send_note',
  description: 'Sends a note (a side effect: not to be repeated).',
  parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
  handler: async ({ to }) => {
    appendFileSync(process.env.RUN_CORE_EFFECTS, 'send_note:' + to + '\\n')
    if (to.includes('hang')) await new Promise(() => {})
    return { sent: to }
  },
}
`,
  'charge-card.mjs': `import { appendFileSync } from 'node:fs'
export default {
  name: 'charge_card',
  description: 'Charges a card (a side effect: not to be repeated).',
  parameters: { type: 'object', properties: { tag: { type: 'string' } }, required: ['tag'] },
  handler: async ({ tag }) => {
    appendFileSync(process.env.RUN_CORE_EFFECTS, 'charge_card:' + tag + '\\n')
    return { charged: tag }
  },
}
`,
}

function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NUXT_OPENROUTER_BASE_URL: fake.url,
    NUXT_OPENROUTER_API_KEY: 'sk-or-v1-run-core-test-key',
    NUXT_OPENROUTER_RETRY_BASE_DELAY_MS: '10',
    NUXT_SESSION_PASSWORD: 'a-run-core-test-session-password-long-enough',
    NUXT_TOOLS_DYNAMIC_DIR: toolsDir,
    NUXT_TOOLS_POLICY_FILE: policyFile,
    NUXT_BACKGROUND_JOBS_WAITS_POLL_MS: '200',
    RUN_CORE_EFFECTS: effectsFile,
    ...extra,
  }
}

function freshDataDir(): string {
  const dir = join(root, `data-${crypto.randomUUID()}`)
  mkdirSync(dir)
  return dir
}

/** The lines the tools wrote for `tag`. */
function effectsOf(tag: string): string[] {
  let text = ''
  try {
    text = readFileSync(effectsFile, 'utf8')
  } catch {}
  return text.split('\n').filter(line => line.endsWith(`:${tag}`))
}

const system = (request: RecordedRequest) => String(request.body.messages.find(message => message.role === 'system')?.content ?? '')
const userText = (request: RecordedRequest) => String(request.body.messages.findLast(message => message.role === 'user')?.content ?? '')
const toolResult = (request: RecordedRequest) => request.body.messages.findLast(message => message.role === 'tool')

/** Polls the user's open requests until one of `jobId` appears. */
async function requestOf(client: SessionClient, jobId: string): Promise<JobInputRequest> {
  let found: JobInputRequest | undefined
  await vi.waitFor(async () => {
    const { requests } = await client.json<{ requests: JobInputRequest[] }>('/api/jobs/inputs')
    found = requests.find(request => request.jobId === jobId)
    expect(found).toBeDefined()
  }, { timeout: 20_000, interval: 50 })
  return found!
}

async function openRequestsOf(client: SessionClient, jobId: string): Promise<JobInputRequest[]> {
  const { requests } = await client.json<{ requests: JobInputRequest[] }>('/api/jobs/inputs')
  return requests.filter(request => request.jobId === jobId)
}

async function toolsLoaded(client: SessionClient): Promise<void> {
  await vi.waitFor(async () => {
    const { tools } = await client.json<{ tools: Array<{ name: string }> }>('/api/tools')
    expect(tools.map(tool => tool.name)).toEqual(expect.arrayContaining(['send_note', 'charge_card']))
  }, { timeout: 20_000, interval: 100 })
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'or3-run-core-'))
  toolsDir = join(root, 'tools')
  mkdirSync(toolsDir)
  for (const [name, source] of Object.entries(TOOL_FILES)) writeFileSync(join(toolsDir, name), source)
  policyFile = join(root, 'policy.json')
  writeFileSync(policyFile, JSON.stringify({ rules: [{ name: 'ask before charging', effect: 'approve', tools: ['charge_card'] }, { name: 'guests may use the test tools', effect: 'allow', tools: ['source:dynamic'] }] }))
  effectsFile = join(root, 'effects.log')
})

afterAll(() => {
  if (root) rmSync(root, { recursive: true, force: true })
})
// After hooks run last-registered first: every server has stopped before its files go.
const servers = useAppServers()

/** The workflow: an agent that calls one tool with side effects, then a summary agent. */
const mailerFlow = {
  version: 1,
  name: 'Send, then summarise',
  defaultModel: MODEL,
  nodes: [
    { id: 'start', kind: 'start' },
    { id: 'mailer', kind: 'agent', systemPrompt: 'MAILER: do what is asked with your tools.', prompt: '{{prompt}}', tools: ['send_note', 'charge_card'], maxToolRounds: 2 },
    { id: 'summary', kind: 'agent', systemPrompt: 'SUMMARY: say what happened.', prompt: '{{input}}' },
    { id: 'out', kind: 'output' },
  ],
  edges: [{ from: 'start', to: 'mailer' }, { from: 'mailer', to: 'summary' }, { from: 'summary', to: 'out' }],
}

type Boundary = 'approval' | 'tool-running' | 'after-tool' | 'next-node'

/**
 * The fake model for one boundary: the mailer asks for its tool (charge_card for an approval, else
 * send_note), then reports the tool's result; the request at the boundary stalls on the first server.
 */
function scriptFor(boundary: Boundary, tag: string, stalled: { done: boolean }) {
  fake.script((request) => {
    if (system(request).startsWith('SUMMARY')) {
      if (boundary === 'next-node' && !stalled.done) return stall
      return textReply(`Summary: ${userText(request)}`)
    }
    const result = toolResult(request)
    if (!result) {
      return boundary === 'approval'
        ? toolCallReply([{ id: 'call_charge', name: 'charge_card', arguments: JSON.stringify({ tag }) }])
        : toolCallReply([{ id: 'call_note', name: 'send_note', arguments: JSON.stringify({ to: tag }) }])
    }
    if (boundary === 'after-tool' && !stalled.done) return stall
    return textReply(`mailer: ${String(result.content)}`)
  })
}

describe('a workflow agent with side effects, killed at each checkpoint boundary', () => {
  it.each<Boundary>(['approval', 'tool-running', 'after-tool', 'next-node'])('runs its tool at most once when killed at %s, and finishes after the restart', async (boundary) => {
    const tag = boundary === 'tool-running' ? `hang-${crypto.randomUUID()}` : crypto.randomUUID()
    const env = serverEnv({ NUXT_DATA_DIR: freshDataDir() })
    const stalled = { done: false }
    scriptFor(boundary, tag, stalled)
    const first = await servers.start(env)
    const client = new SessionClient(first.url)
    let asked: JobInputRequest | undefined
    let jobId: string
    const before = fake.requests.length
    const mailerRequests = () => fake.requests.slice(before).filter(request => system(request).startsWith('MAILER'))
    try {
      await toolsLoaded(client)
      const saved = await client.post('/api/workflows', { definition: mailerFlow })
      expect(saved.status).toBe(201)
      const started = await client.post(`/api/workflows/${(await saved.json()).id}/run`, { prompt: `do it for ${tag}` })
      expect(started.status).toBe(202)
      jobId = (await started.json()).jobId
      // Wait for the boundary, then kill the server there.
      if (boundary === 'approval') asked = await requestOf(client, jobId)
      if (boundary === 'tool-running') await vi.waitFor(() => expect(effectsOf(tag)).toHaveLength(1), { timeout: 20_000, interval: 20 })
      if (boundary === 'after-tool') await vi.waitFor(() => expect(mailerRequests().filter(request => toolResult(request))).toHaveLength(1), { timeout: 20_000, interval: 20 })
      if (boundary === 'next-node') await vi.waitFor(() => expect(fake.requests.slice(before).some(request => system(request).startsWith('SUMMARY'))).toBe(true), { timeout: 20_000, interval: 20 })
    } catch (error) {
      await first.stop('SIGKILL')
      throw error
    }
    await first.stop('SIGKILL')
    stalled.done = true

    const second = await servers.start(env)
    try {
      const again = new SessionClient(second.url)
      again.cookie = client.cookie
      if (boundary === 'approval') {
        // The request the person saw before the crash is the one the resumed step waits on: one, listed.
        const shown = await requestOf(again, jobId!)
        expect(shown).toMatchObject({ id: asked!.id, status: 'open', toolName: 'charge_card' })
        expect(await openRequestsOf(again, jobId!)).toHaveLength(1)
        expect((await again.post(`/api/jobs/${jobId!}/input/${asked!.id}`, { approved: true })).status).toBe(200)
      }
      const job = await waitForJobEnd(again, jobId!, 30_000)
      expect(job).toMatchObject({ status: 'complete', resumeCount: 1 })
      expect(job.workflowState!.nodeStates).toMatchObject({ mailer: { status: 'completed' }, summary: { status: 'completed' } })
      // Whatever the moment of the kill, the side effect happened exactly once.
      expect(effectsOf(tag)).toHaveLength(1)
      const mailerOutput = String(job.workflowState!.nodeStates.mailer!.output)
      if (boundary === 'tool-running') expect(mailerOutput).toMatch(/restarted while this call was running/)
      else expect(mailerOutput).toMatch(boundary === 'approval' ? /charged/ : /sent/)
      // The mailer asked for its tool once, and a finished step was not run again.
      expect(mailerRequests().filter(request => !toolResult(request))).toHaveLength(1)
      if (boundary === 'next-node') expect(mailerRequests()).toHaveLength(2)
      expect(await openRequestsOf(again, jobId!)).toEqual([])
    } finally {
      await second.stop()
    }
  }, 90_000)
})

describe('requests, claims and rejections on one server', () => {
  const app = useBuiltApp(() => serverEnv())
  let alice: SessionClient
  beforeAll(async () => {
    alice = new SessionClient(app.url)
    await toolsLoaded(alice)
  })

  it('closes what a job asked when it ends: its request leaves the listing, and an answer gets 410 saying the job ended', async () => {
    const tag = crypto.randomUUID()
    fake.script(request => (toolResult(request) ? textReply('done') : toolCallReply([{ id: 'call_charge', name: 'charge_card', arguments: JSON.stringify({ tag }) }])))
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'charge it' }] })
    const request = await requestOf(alice, jobId)
    expect((await alice.json(`/api/jobs/${jobId}/abort`, { method: 'POST' }))).toMatchObject({ aborted: true })
    expect(await openRequestsOf(alice, jobId)).toEqual([])
    const late = await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: true })
    expect(late.status).toBe(410)
    expect((await late.json()).message).toMatch(/The job has ended/)
    expect(effectsOf(tag)).toEqual([])
  })

  it('takes a browser tool\'s result only from the tab holding its claim; another tab gets 409', async () => {
    const locate = { name: 'get_user_location', description: 'Where the user is.', parameters: { type: 'object', properties: {} } }
    fake.script(request => (toolResult(request) ? textReply(`The tool said: ${String(toolResult(request)!.content)}`) : toolCallReply([{ id: 'call_loc', name: 'get_user_location', arguments: '{}' }])))
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'where am I' }], _clientTools: [locate] })
    const request = await requestOf(alice, jobId)
    const claim = await alice.json<{ claimed: boolean }>(`/api/jobs/${jobId}/input/${request.id}/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ claimant: 'tab-holder-1' }) })
    expect(claim.claimed).toBe(true)
    for (const body of [{ result: { city: 'Nowhere' }, claimant: 'tab-other-22' }, { result: { city: 'Nowhere' } }]) {
      const stray = await alice.post(`/api/jobs/${jobId}/input/${request.id}`, body)
      expect(stray.status).toBe(409)
      expect((await stray.json()).message).toMatch(/Another tab is running this browser tool call/)
    }
    expect((await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { result: { city: 'Berlin' }, claimant: 'tab-holder-1' })).status).toBe(200)
    const job = await waitForJobEnd(alice, jobId)
    expect(job).toMatchObject({ status: 'complete', content: 'The tool said: {"city":"Berlin"}' })
  })

  it('ends a run as rejected when its approval step is rejected and has no reject edge', async () => {
    const definition = {
      version: 1,
      name: 'Approve or stop',
      defaultModel: MODEL,
      nodes: [{ id: 'start', kind: 'start' }, { id: 'check', kind: 'approval', question: 'Go on?' }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'check' }, { from: 'check', to: 'out', branch: 'approve' }],
    }
    const workflowId = (await (await alice.post('/api/workflows', { definition })).json()).id
    const { jobId } = await (await alice.post(`/api/workflows/${workflowId}/run`, { prompt: 'the plan' })).json()
    const request = await requestOf(alice, jobId)
    expect((await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: false, reason: 'not this week' })).status).toBe(200)
    const job = await waitForJobEnd(alice, jobId)
    expect(job).toMatchObject({ status: 'rejected', error: { kind: 'rejected', message: expect.stringContaining('not this week') } })
    expect(job.content).toBe('')
    const listed = await alice.json<{ jobs: Array<{ id: string, status: string }> }>('/api/jobs?status=rejected')
    expect(listed.jobs.map(item => item.id)).toContain(jobId)
  })
})

describe('waiting jobs and running slots', () => {
  it('lets another user\'s answer start and finish while one user\'s jobs wait on every slot, and runs the waiting jobs once answered', async () => {
    const app = await servers.start(serverEnv({ NUXT_BACKGROUND_JOBS_MAX_CONCURRENT_JOBS: '2' }))
    try {
      const waiter = new SessionClient(app.url)
      await toolsLoaded(waiter)
      fake.script((request) => {
        if (toolResult(request)) return textReply('charged')
        if (userText(request).startsWith('charge')) return toolCallReply([{ id: 'call_charge', name: 'charge_card', arguments: JSON.stringify({ tag: userText(request) }) }])
        return textReply('hello there')
      })
      // Three jobs wait for approval: more than the server's two running slots.
      const waiting: Array<{ jobId: string, request: JobInputRequest }> = []
      for (let index = 0; index < 3; index++) {
        const jobId = await waiter.startJob({ model: MODEL, messages: [{ role: 'user', content: `charge ${crypto.randomUUID()}` }] })
        waiting.push({ jobId, request: await requestOf(waiter, jobId) })
      }
      await vi.waitFor(async () => {
        const health = await waiter.json<{ jobs: { running: number, waiting: number } }>('/api/health')
        expect(health.jobs).toMatchObject({ running: 0, waiting: 3 })
      }, { timeout: 10_000, interval: 50 })
      // Someone else's answer starts at once and finishes.
      const other = new SessionClient(app.url)
      const started = await other.post('/api/openrouter/stream', { model: MODEL, messages: [{ role: 'user', content: 'hi' }], _background: true })
      expect(started.status).toBe(202)
      expect(await waitForJobEnd(other, (await started.json()).jobId)).toMatchObject({ status: 'complete', content: 'hello there' })
      // Answered, the waiting jobs take slots again (in turn) and finish.
      for (const { jobId, request } of waiting) expect((await waiter.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: true })).status).toBe(200)
      for (const { jobId } of waiting) expect(await waitForJobEnd(waiter, jobId)).toMatchObject({ status: 'complete', content: 'charged' })
    } finally {
      await app.stop()
    }
  }, 90_000)
})

describe('budgets', () => {
  it('runs one of five answers started at once against a 40-token budget; the rest get 429 until it ends, and the day\'s usage stays within one request of the budget', async () => {
    const app = await servers.start(serverEnv({ NUXT_LIMITS_ROLES_GUEST_DAILY_TOKENS: '40' }))
    try {
      const guest = new SessionClient(app.url)
      await guest.json('/api/auth/me')
      // Every request uses 36 tokens (five at once used 180 before reservations), and the first
      // answers only once all five starts were answered, so none ends before the others start.
      let allAnswered!: () => void
      const answered = new Promise<void>(resolve => (allAnswered = resolve))
      fake.script(() => {
        const reply = textReply('a short answer', { usage: { prompt: 20, completion: 16 } })
        return reply.type === 'stream' ? { ...reply, steps: [{ until: answered }, ...reply.steps] } : reply
      })
      const hello = { model: MODEL, messages: [{ role: 'user', content: 'Hello' }], _background: true }
      const responses = await Promise.all(Array.from({ length: 5 }, () => guest.post('/api/openrouter/stream', hello)))
      allAnswered()
      const statuses = responses.map(response => response.status).sort()
      expect(statuses).toEqual([202, 429, 429, 429, 429])
      const held = responses.find(response => response.status === 429)!
      expect(Number(held.headers.get('retry-after'))).toBeGreaterThan(0)
      expect((await held.json()).message).toMatch(/answers in progress may use the rest of your daily budget of 40 tokens/)
      const jobId = (await responses.find(response => response.status === 202)!.json()).jobId
      expect(await waitForJobEnd(guest, jobId)).toMatchObject({ status: 'complete' })
      // What is left (4 tokens) admits one more; then the budget is used up: 402.
      const next = await guest.post('/api/openrouter/stream', hello)
      expect(next.status).toBe(202)
      await waitForJobEnd(guest, (await next.json()).jobId)
      expect((await guest.post('/api/openrouter/stream', hello)).status).toBe(402)
      const usage = await guest.json<{ tokens: number }>('/api/auth/usage')
      expect(usage.tokens).toBe(72)
      expect(usage.tokens).toBeLessThanOrEqual(40 + 36)
    } finally {
      await app.stop()
    }
  }, 90_000)
})
