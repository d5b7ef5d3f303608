/**
 * Jobs that wait for a person (issue 17), end to end on the built server with the fake OpenRouter:
 * a browser tool run by a connected test client, two tabs racing to claim it, nobody answering,
 * approvals approved, denied and left to expire, the rules of answering (404, 409, 410, 400), and
 * a job killed while it waits that finishes after the restart once the person answers.
 */
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { textReply, toolCallReply, useFakeOpenRouter, type RecordedRequest } from '../support/fake-openrouter'
import { JobView, SessionClient, waitForJobEnd, watchJob } from '../support/job-stream-client'
import { useAppServers, useBuiltApp, useDataDirs } from '../support/built-app'
import { EVERYTHING_ENTRY } from '../support/mcp-servers'
import type { JobInputRequest } from '../../shared/types/input-request'
import type { JobSummary } from '../../shared/types/job'

const MODEL = 'openai/gpt-4o-mini'
const LOCATION_TOOL = {
  name: 'get_user_location',
  description: 'The user\'s current position (asks for their consent in the browser).',
  parameters: { type: 'object', properties: { precision: { type: 'string', enum: ['city', 'exact'] } } },
  resultSchema: { type: 'object', properties: { latitude: { type: 'number' }, longitude: { type: 'number' } }, required: ['latitude', 'longitude'] },
}

const fake = useFakeOpenRouter()
const dataDirs = useDataDirs('or3-waits-e2e-')
const servers = useAppServers()

let policyFile: string
let mcpFile: string

/** The model asks for the tool named in the user's message, then repeats what the tool said. */
function scriptToolThenEcho(): void {
  fake.script((request: RecordedRequest) => {
    const last = request.body.messages.at(-1)!
    if (last.role === 'tool') return textReply(`The tool said: ${String(last.content)}`)
    const text = String(request.body.messages.findLast(message => message.role === 'user')!.content)
    if (text.startsWith('locate')) return toolCallReply([{ id: 'call_loc', name: 'get_user_location', arguments: '{"precision":"city"}' }])
    if (text.startsWith('ask me')) return toolCallReply([{ id: 'call_ask', name: 'everything__trigger-elicitation-request', arguments: '{}' }])
    return toolCallReply([{ id: 'call_calc', name: 'calculate', arguments: '{"expression":"6*7"}' }])
  })
}

function serverEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    NUXT_OPENROUTER_BASE_URL: fake.url,
    NUXT_OPENROUTER_API_KEY: 'sk-or-v1-server-test-key',
    NUXT_SESSION_PASSWORD: 'a-test-session-password-that-is-long-enough',
    NUXT_TOOLS_POLICY_FILE: policyFile,
    NUXT_MCP_CONFIG_FILE: mcpFile,
    NUXT_BACKGROUND_JOBS_WAITS_TIMEOUT_MS: '4000',
    NUXT_BACKGROUND_JOBS_WAITS_POLL_MS: '200',
    ...extra,
  }
}

/** Polls the user's open requests until one of `jobId` appears. */
async function requestOf(client: SessionClient, jobId: string): Promise<JobInputRequest> {
  for (let attempt = 0; attempt < 200; attempt++) {
    const { requests } = await client.json<{ requests: JobInputRequest[] }>('/api/jobs/inputs')
    const found = requests.find(request => request.jobId === jobId)
    if (found) return found
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  throw new Error(`job ${jobId} asked nothing`)
}

beforeAll(() => {
  const dir = dataDirs.fresh()
  policyFile = join(dir, 'policy.json')
  writeFileSync(policyFile, JSON.stringify({ rules: [{ name: 'ask before calculating', effect: 'approve', tools: ['calculate'] }, { name: 'guests may use MCP here', effect: 'allow', tools: ['source:mcp'] }] }))
  mcpFile = join(dir, 'mcp.json')
  writeFileSync(mcpFile, JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING_ENTRY, 'stdio'], timeoutMs: 30_000 } } }))
})

describe('jobs that wait for a person', () => {
  const app = useBuiltApp(() => serverEnv())
  let alice: SessionClient
  beforeAll(async () => {
    alice = new SessionClient(app.url)
    await alice.json('/api/auth/me')
  })

  it('offers a browser tool, and a tab of the user runs it: the job finishes with its result', async () => {
    scriptToolThenEcho()
    const before = fake.requests.length
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'locate me' }], _clientTools: [LOCATION_TOOL] })
    const view = new JobView()
    const watching = watchJob(alice, jobId, view)

    const request = await requestOf(alice, jobId)
    expect(request).toMatchObject({ kind: 'client-tool', toolName: 'get_user_location', arguments: '{"precision":"city"}', status: 'open' })
    const waiting = await alice.json<{ jobs: JobSummary[] }>('/api/jobs?status=waiting')
    expect(waiting.jobs.map(job => job.id)).toEqual([jobId])
    expect(waiting.jobs[0]!.waitingFor).toEqual([expect.objectContaining({ id: request.id, kind: 'client-tool' })])

    expect(await alice.json(`/api/jobs/${jobId}/input/${request.id}/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ claimant: 'tab-aaaaaaaa' }) })).toMatchObject({ claimed: true })
    // A result that does not match the tool's result schema is refused, and can be sent again.
    const wrong = await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { result: { latitude: 'north', longitude: 13.4 } })
    expect(wrong.status).toBe(400)
    expect((await wrong.json()).message).toMatch(/latitude/)
    // Bounded: a body past 128 KiB is refused while it streams in (413), a result past 64 KiB of JSON with 400.
    const flood = await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { result: { latitude: 1, longitude: 2, padding: 'x'.repeat(200 * 1024) } })
    expect(flood.status).toBe(413)
    const large = await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { result: { latitude: 1, longitude: 2, padding: 'x'.repeat(70 * 1024) } })
    expect(large.status).toBe(400)
    expect((await large.json()).message).toMatch(/at most 65,536 are accepted/)
    // Only the tab holding the claim is heard.
    expect((await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { result: { latitude: 52.52, longitude: 13.4 } })).status).toBe(409)
    const answered = await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { result: { latitude: 52.52, longitude: 13.4 }, claimant: 'tab-aaaaaaaa' })
    expect(answered.status).toBe(200)

    const job = await waitForJobEnd(alice, jobId)
    await watching
    expect(job).toMatchObject({ status: 'complete', content: 'The tool said: {"latitude":52.52,"longitude":13.4}' })
    expect(job.inputRequests).toEqual([expect.objectContaining({ id: request.id, status: 'answered', claimedBy: 'tab-aaaaaaaa' })])
    // Offered to the model like any tool; the viewer saw the request open and settle.
    const first = fake.requests[before]!.body
    expect(first.tools?.map(tool => tool.function.name)).toContain('get_user_location')
    const seen = view.events.filter(event => event.event === 'input-request').map(event => event.data.request.status)
    expect(seen[0]).toBe('open')
    expect(seen.at(-1)).toBe('answered')
    expect((await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { result: { latitude: 1, longitude: 2 } })).status).toBe(409)
  })

  it('lets exactly one of two racing tabs claim a browser tool call', async () => {
    scriptToolThenEcho()
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'locate us' }], _clientTools: [LOCATION_TOOL] })
    const request = await requestOf(alice, jobId)
    const claim = (claimant: string) => alice.json<{ claimed: boolean }>(`/api/jobs/${jobId}/input/${request.id}/claim`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ claimant }) })
    const tabs = ['tab-one-11111', 'tab-two-22222', 'tab-three-333']
    const results = await Promise.all(tabs.map(claim))
    expect(results.filter(result => result.claimed)).toHaveLength(1)
    const winner = tabs[results.findIndex(result => result.claimed)]!
    const loser = tabs.find(tab => tab !== winner)!
    expect((await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { error: 'I lost the race.', claimant: loser })).status).toBe(409)
    expect((await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { error: 'The user did not allow location access.', claimant: winner })).status).toBe(200)
    const job = await waitForJobEnd(alice, jobId)
    expect(job.content).toContain('the browser could not run it: The user did not allow location access.')
  })

  it('tells the model when no browser answered in time', async () => {
    scriptToolThenEcho()
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'locate nobody' }], _clientTools: [LOCATION_TOOL] })
    const request = await requestOf(alice, jobId)
    const job = await waitForJobEnd(alice, jobId, 20_000)
    expect(job.status).toBe('complete')
    expect(job.content).toMatch(/no browser answered within/)
    expect(job.inputRequests).toEqual([expect.objectContaining({ id: request.id, status: 'expired' })])
    const late = await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { result: { latitude: 1, longitude: 2 } })
    expect(late.status).toBe(410)
  })

  it('refuses browser tools that are too many, unbounded or named like a server tool', async () => {
    const body = (tools: unknown) => ({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], _background: true, _clientTools: tools })
    const withPattern = await alice.post('/api/openrouter/stream', body([{ ...LOCATION_TOOL, parameters: { type: 'object', properties: { q: { type: 'string', pattern: '(a+)+$' } } } }]))
    expect(withPattern.status).toBe(400)
    expect(await withPattern.text()).toMatch(/pattern/)
    const taken = await alice.post('/api/openrouter/stream', body([{ ...LOCATION_TOOL, name: 'calculate' }]))
    expect(taken.status).toBe(400)
    expect(await taken.text()).toMatch(/name of a server tool/)
    const many = await alice.post('/api/openrouter/stream', body(Array.from({ length: 17 }, (_, index) => ({ ...LOCATION_TOOL, name: `tool_${index}` }))))
    expect(many.status).toBe(400)
  })

  it('runs a tool that needs approval once it is approved, from another client of the same user', async () => {
    scriptToolThenEcho()
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'what is 6*7' }] })
    const request = await requestOf(alice, jobId)
    expect(request).toMatchObject({ kind: 'approval', toolName: 'calculate', arguments: '{"expression":"6*7"}', title: 'Run calculate?' })
    // Another device of the same person (same session), while someone else cannot see or answer it.
    const phone = new SessionClient(app.url)
    phone.cookie = alice.cookie
    const mallory = new SessionClient(app.url)
    expect((await mallory.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: true })).status).toBe(404)
    expect((await phone.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: 'yes' })).status).toBe(400)
    const [first, second] = await Promise.all([
      phone.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: true }),
      alice.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: false, reason: 'changed my mind' }),
    ])
    expect([first.status, second.status].sort()).toEqual([200, 409])
    const approved = first.status === 200
    const job = await waitForJobEnd(alice, jobId)
    expect(job.status).toBe('complete')
    if (approved) expect(job.content).toMatch(/The tool said: .*42/)
    else expect(job.content).toContain('the user declined to run it ("changed my mind")')
  })

  it('tells the model a denied call was not run, with the reason', async () => {
    scriptToolThenEcho()
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'what is 6*7 again' }] })
    const request = await requestOf(alice, jobId)
    expect((await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: false, reason: 'not now' })).status).toBe(200)
    const job = await waitForJobEnd(alice, jobId)
    expect(job.content).toContain('the user declined to run it ("not now")')
    expect(job.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'calculate', error: expect.stringContaining('declined') })
  })

  it('does not run a tool whose approval nobody gave in time', async () => {
    scriptToolThenEcho()
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'what is 6*7, unattended' }] })
    await requestOf(alice, jobId)
    const job = await waitForJobEnd(alice, jobId, 20_000)
    expect(job.content).toMatch(/nobody approved it within/)
  })

  it('pauses a workflow at its approval step, and follows approve or reject', async () => {
    const definition = {
      version: 1,
      name: 'Draft and check',
      defaultModel: 'or3/offline-demo',
      nodes: [
        { id: 'start', kind: 'start' },
        { id: 'check', kind: 'approval', question: 'Continue with "{{prompt}}"?' },
        { id: 'done', kind: 'output', template: 'Approved: {{input}}' },
        { id: 'stopped', kind: 'output', template: 'Stopped. {{input}}' },
      ],
      edges: [{ from: 'start', to: 'check' }, { from: 'check', to: 'done', branch: 'approve' }, { from: 'check', to: 'stopped', branch: 'reject' }],
    }
    const saved = await alice.post('/api/workflows', { definition })
    expect(saved.status).toBe(201)
    const workflowId = (await saved.json()).id
    for (const [answer, output] of [[{ approved: true }, 'Approved: the launch plan'], [{ approved: false, reason: 'needs numbers' }, 'Stopped. Rejected: needs numbers']] as const) {
      const started = await alice.post(`/api/workflows/${workflowId}/run`, { prompt: 'the launch plan' })
      expect(started.status).toBe(202)
      const { jobId } = await started.json()
      const request = await requestOf(alice, jobId)
      expect(request).toMatchObject({ kind: 'approval', nodeId: 'check', title: 'Continue with "the launch plan"?', preview: 'the launch plan', origin: 'workflow' })
      expect((await alice.post(`/api/jobs/${jobId}/input/${request.id}`, answer)).status).toBe(200)
      const job = await waitForJobEnd(alice, jobId)
      expect(job).toMatchObject({ status: 'complete', content: output })
      expect(job.workflowState?.nodeStates.check).toMatchObject({ status: 'completed', branch: answer.approved ? 'approve' : 'reject' })
    }
  })

  it('brings an MCP server\'s question (elicitation) to the user as a form, and the answer back', async () => {
    await vi.waitFor(async () => {
      const { mcpServers } = await alice.json('/api/tools')
      expect(mcpServers.find((server: { name: string }) => server.name === 'everything')).toMatchObject({ state: 'ready' })
    }, { timeout: 20_000, interval: 100 })
    scriptToolThenEcho()
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'ask me a few things' }] })
    const request = await requestOf(alice, jobId)
    expect(request).toMatchObject({ kind: 'question', origin: 'mcp:everything', message: 'Please provide inputs for the following fields:', toolName: 'everything__trigger-elicitation-request' })
    expect(request.schema).toMatchObject({ type: 'object', required: ['name'], properties: { integer: { default: 42 } } })
    // The form's rules hold: a required field left out is refused with what to fix.
    const incomplete = await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { action: 'accept', content: { check: true } })
    expect(incomplete.status).toBe(400)
    expect((await incomplete.json()).message).toMatch(/name/)
    expect((await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { action: 'accept', content: { name: 'Ada Lovelace', check: true } })).status).toBe(200)
    const job = await waitForJobEnd(alice, jobId)
    expect(job.status).toBe('complete')
    expect(job.content).toMatch(/Name: Ada Lovelace/)
    // Fields left empty get the form's defaults.
    expect(job.content).toMatch(/Favorite Integer: 42/)
  })

  it('asks before a workflow\'s tool step runs a tool that needs approval', async () => {
    const definition = {
      version: 1,
      name: 'Calculate',
      defaultModel: 'or3/offline-demo',
      nodes: [{ id: 'start', kind: 'start' }, { id: 'calc', kind: 'tool', tool: 'calculate', arguments: { expression: '6*7' } }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'calc' }, { from: 'calc', to: 'out' }],
    }
    const workflowId = (await (await alice.post('/api/workflows', { definition })).json()).id
    for (const approved of [true, false]) {
      const { jobId } = await (await alice.post(`/api/workflows/${workflowId}/run`, { prompt: 'go' })).json()
      const request = await requestOf(alice, jobId)
      expect(request).toMatchObject({ kind: 'approval', toolName: 'calculate', arguments: '{"expression":"6*7"}' })
      await alice.post(`/api/jobs/${jobId}/input/${request.id}`, approved ? { approved } : { approved, reason: 'no maths today' })
      const job = await waitForJobEnd(alice, jobId)
      if (approved) expect(job).toMatchObject({ status: 'complete', content: expect.stringContaining('42') })
      else expect(job).toMatchObject({ status: 'error', error: { message: expect.stringContaining('the user declined to run it ("no maths today")') } })
    }
  })

  it('keeps answering other clients while a job waits', async () => {
    scriptToolThenEcho()
    const jobId = await alice.startJob({ model: MODEL, messages: [{ role: 'user', content: 'what is 6*7 while others chat' }] })
    const request = await requestOf(alice, jobId)
    const other = new SessionClient(app.url)
    expect((await other.fetch('/api/health')).status).toBe(200)
    expect((await other.json<{ jobs: unknown[] }>('/api/jobs')).jobs).toEqual([])
    await alice.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: true })
    expect((await waitForJobEnd(alice, jobId)).status).toBe('complete')
  })
})

describe('a job that waits across a restart', () => {
  it('waits again after SIGKILL and finishes once the person answers, running the tool once', async () => {
    const env = serverEnv({ NUXT_DATA_DIR: dataDirs.fresh(), NUXT_BACKGROUND_JOBS_WAITS_TIMEOUT_MS: '60000' })
    const first = await servers.start(env)
    const client = new SessionClient(first.url)
    scriptToolThenEcho()
    const before = fake.requests.length
    const jobId = await client.startJob({ model: MODEL, messages: [{ role: 'user', content: 'what is 6*7 after a crash' }] })
    const request = await requestOf(client, jobId)
    await first.stop('SIGKILL')

    const second = await servers.start(env)
    try {
      const resumed = new SessionClient(second.url)
      resumed.cookie = client.cookie
      // The same request, still open, shown again to viewers of the resumed job.
      const again = await requestOf(resumed, jobId)
      expect(again).toMatchObject({ id: request.id, status: 'open' })
      const view = new JobView()
      await watchJob(resumed, jobId, view, { until: seen => seen.job !== undefined })
      expect(view.job?.inputRequests).toEqual([expect.objectContaining({ id: request.id, status: 'open' })])

      expect((await resumed.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: true })).status).toBe(200)
      const job = await waitForJobEnd(resumed, jobId)
      expect(job).toMatchObject({ status: 'complete', resumeCount: 1 })
      expect(job.content).toMatch(/The tool said: .*42/)
      expect(job.toolRounds).toEqual([{ round: 1, toolCalls: [expect.objectContaining({ id: 'call_calc', name: 'calculate' })] }])
      // The model was asked for the tool once; after the restart only the answer round ran.
      const requests = fake.requests.slice(before).filter(item => item.path.endsWith('/chat/completions'))
      expect(requests).toHaveLength(2)
      expect(requests[1]!.body.messages.map(message => message.role)).toEqual(['user', 'assistant', 'tool'])
    } finally {
      await second.stop()
    }
  })
})
