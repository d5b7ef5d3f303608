import { createHmac } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { statSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { errorChunk, roleChunk } from '../../server/lib/openrouter/chunks'
import { fakeChunkMeta, textReply, toolCallReply, useFakeOpenRouter, type FakeReply, type RecordedRequest } from '../support/fake-openrouter'
import { SessionClient, waitForJobEnd } from '../support/job-stream-client'
import { useAppServers, useBuiltApp, useDataDirs, type RunningApp } from '../support/built-app'
import { installExample } from '../../app/utils/workflow-examples'
import { createSqliteWorkflowRunStore } from '../../server/lib/stores/workflows/runs-sqlite'
import { keptRun } from '../support/workflow-run-store-contract'
import { JobView, watchJob } from '../support/job-stream-client'
import { webhookSignature } from '../../server/lib/workflows/failure-webhooks'
import type { BackgroundJob } from '../../shared/types/job'
import BetterSqlite3 from 'better-sqlite3'
import type { WorkflowRun } from '../../shared/types/workflow-run'

// Workflows over HTTP against the built server, with the fake OpenRouter answering each node.

const MODEL = 'openai/gpt-4o-mini'
const fake = useFakeOpenRouter()
const dataDirs = useDataDirs('or3-workflows-')
const servers = useAppServers()

function env(dataDir = dataDirs.fresh()): Record<string, string> {
  return { NUXT_OPENROUTER_BASE_URL: fake.url, NUXT_OPENROUTER_API_KEY: 'sk-or-test', NUXT_OPENROUTER_RETRY_BASE_DELAY_MS: '10', NUXT_DATA_DIR: dataDir, NUXT_SESSION_PASSWORD: 'a-workflow-test-session-password-long-enough' }
}

const system = (request: RecordedRequest) => String(request.body.messages.find(message => message.role === 'system')?.content ?? '')
const hasToolResult = (request: RecordedRequest) => request.body.messages.some(message => message.role === 'tool')

/** Answers by the node's system prompt (agents) or the router's question. */
function byNode(replies: Record<string, (request: RecordedRequest) => FakeReply>): (request: RecordedRequest) => FakeReply {
  return (request) => {
    const key = Object.keys(replies).find(name => system(request).includes(name) || String(request.body.messages.at(-1)?.content ?? '').includes(name))
    return key ? replies[key]!(request) : { type: 'http-error', status: 500, body: { error: { code: 500, message: 'unscripted' } } }
  }
}

async function save(client: SessionClient, definition: unknown): Promise<string> {
  const response = await client.post('/api/workflows', { definition })
  if (response.status !== 201) throw new Error(`saving answered ${response.status}: ${await response.text()}`)
  return (await response.json()).id
}

async function run(client: SessionClient, workflowId: string, prompt: string): Promise<string> {
  const response = await client.post(`/api/workflows/${workflowId}/run`, { prompt })
  expect(response.status).toBe(202)
  return (await response.json()).jobId
}

/**
 * How a run ended: from its job, or from the run history once the job has expired (a file below
 * keeps finished jobs 200 ms, which a fast machine's poll can miss).
 */
async function waitForRunEnd(client: SessionClient, jobId: string): Promise<{ status: string }> {
  let ended: { status: string } | undefined
  await expect.poll(async () => {
    const live = await client.fetch(`/api/jobs/${jobId}`)
    if (live.ok) ended = await live.json() as { status: string }
    else if (live.status === 404) ended = (await client.json(`/api/workflows/runs/${jobId}`)).job as { status: string }
    return ended !== undefined && ended.status !== 'streaming'
  }, { timeout: 30_000, interval: 50 }).toBe(true)
  return ended!
}

/** Saves `chain` and runs it to a failure at its second step (the first answered "summary one"). */
async function runThatFailsAtStepTwo(client: SessionClient): Promise<{ workflowId: string, failedId: string }> {
  const workflowId = await save(client, chain)
  fake.script(byNode({
    'STEP-ONE': () => textReply('summary one'),
    'STEP-TWO': () => ({ type: 'http-error', status: 402, body: { error: { code: 402, message: 'Insufficient credits' } } }),
  }))
  const failedId = await run(client, workflowId, 'go')
  expect((await waitForRunEnd(client, failedId)).status).toBe('error')
  return { workflowId, failedId }
}

const chain = {
  version: 1,
  name: 'Three steps',
  defaultModel: MODEL,
  nodes: [
    { id: 'start', kind: 'start' },
    { id: 'first', kind: 'agent', systemPrompt: 'STEP-ONE: summarise.' },
    { id: 'second', kind: 'agent', systemPrompt: 'STEP-TWO: expand.' },
    { id: 'third', kind: 'agent', systemPrompt: 'STEP-THREE: polish.' },
    { id: 'out', kind: 'output' },
  ],
  edges: [{ from: 'start', to: 'first' }, { from: 'first', to: 'second' }, { from: 'second', to: 'third' }, { from: 'third', to: 'out' }],
}

/** One agent step between a start and an output, with `step`'s settings. */
const oneAgent = (name: string, step: Record<string, unknown>) => ({
  version: 1,
  name,
  defaultModel: MODEL,
  nodes: [{ id: 'start', kind: 'start' }, { id: 'step', kind: 'agent', systemPrompt: name, ...step }, { id: 'out', kind: 'output' }],
  edges: [{ from: 'start', to: 'step' }, { from: 'step', to: 'out' }],
})

/** An answer that fails inside its stream (the provider reports an error after the headers): the client does not retry it, the step's policy may. */
const failsMidStream = (): FakeReply => ({ type: 'stream', steps: [{ chunk: roleChunk(fakeChunkMeta) }, { chunk: errorChunk(fakeChunkMeta, 'server_error', 'Provider overloaded') }, { done: true }] })

describe('workflows on one server', () => {
  // The demo model streams without a pause here: the shipped examples run to their answers, not at reading speed.
  // Loopback is allowed for calls out (a failure webhook's receiver below runs on it).
  const app = useBuiltApp(() => ({ ...env(), NUXT_WORKFLOWS_WEBHOOK_RUNS_PER_MINUTE: '4', NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '0', NUXT_TOOLS_WEB_ALLOWED_NETWORKS: '127.0.0.1' }))

  it('runs every node kind: agents with tools, a tool node, a model router, parallel branches and a merge', async () => {
    const client = new SessionClient(app.url)
    const workflowId = await save(client, {
      version: 1,
      name: 'Every kind',
      defaultModel: MODEL,
      nodes: [
        { id: 'start', kind: 'start' },
        { id: 'route', kind: 'router', mode: 'model', instruction: 'ROUTER-QUESTION: which desk?', defaultBranch: 'maths' },
        { id: 'maths', kind: 'agent', systemPrompt: 'MATHS-DESK', tools: ['calculate'], maxToolRounds: 2 },
        { id: 'prose', kind: 'agent', systemPrompt: 'PROSE-DESK' },
        { id: 'split', kind: 'parallel' },
        { id: 'clock', kind: 'tool', tool: 'get_current_time', arguments: { timezone: 'Asia/Tokyo' } },
        { id: 'checker', kind: 'agent', systemPrompt: 'CHECKER', prompt: 'Check: {{nodes.maths}}' },
        { id: 'join', kind: 'merge' },
        { id: 'out', kind: 'output', template: 'Answer for "{{prompt}}":\n\n{{input}}' },
      ],
      edges: [
        { from: 'start', to: 'route' },
        { from: 'route', to: 'maths', branch: 'maths' },
        { from: 'route', to: 'prose', branch: 'prose' },
        { from: 'maths', to: 'split' },
        { from: 'prose', to: 'split' },
        { from: 'split', to: 'clock' },
        { from: 'split', to: 'checker' },
        { from: 'clock', to: 'join' },
        { from: 'checker', to: 'join' },
        { from: 'join', to: 'out' },
      ],
    })
    fake.script(byNode({
      'ROUTER-QUESTION': () => textReply('maths'),
      'MATHS-DESK': request => hasToolResult(request) ? textReply('6 times 7 is 42.') : toolCallReply([{ id: 'calc-1', name: 'calculate', arguments: '{"expression":"6*7"}' }]),
      'CHECKER': () => textReply('Checked: correct.'),
    }))
    const jobId = await run(client, workflowId, 'What is 6*7?')
    const job = await waitForJobEnd(client, jobId)
    expect(job.status).toBe('complete')
    const nodes = job.workflowState!.nodeStates
    expect(nodes).toMatchObject({
      route: { status: 'completed', branch: 'maths' },
      maths: { status: 'completed', output: '6 times 7 is 42.', toolCalls: [expect.objectContaining({ name: 'calculate', status: 'completed' })] },
      prose: { status: 'skipped' },
      clock: { status: 'completed' },
      checker: { status: 'completed', output: 'Checked: correct.' },
      join: { status: 'completed' },
      out: { status: 'completed' },
    })
    expect(JSON.parse(nodes.clock!.output!).timezone).toBe('Asia/Tokyo')
    expect(job.content).toMatch(/^Answer for "What is 6\*7\?":/)
    expect(job.content).toContain('Checked: correct.')
    expect(job.workflowState!.executionOrder.indexOf('join')).toBeGreaterThan(job.workflowState!.executionOrder.indexOf('checker'))
  })

  it('fails the run at a failing node, naming it, and skips what comes after', async () => {
    const client = new SessionClient(app.url)
    const workflowId = await save(client, chain)
    fake.script(byNode({
      'STEP-ONE': () => textReply('summary'),
      'STEP-TWO': () => ({ type: 'http-error', status: 402, body: { error: { code: 402, message: 'Insufficient credits' } } }),
    }))
    const job = await waitForJobEnd(client, await run(client, workflowId, 'go'))
    expect(job).toMatchObject({ status: 'error', error: { kind: 'workflow', message: expect.stringMatching(/Step "second" failed: .*402/) } })
    expect(job.workflowState).toMatchObject({ failedNodeId: 'second', nodeStates: { first: { status: 'completed' }, second: { status: 'error' }, third: { status: 'skipped' } } })
  })

  it('resumes a failed run from the failed step: the steps before keep their outputs, only that step and those after it call the model again', async () => {
    const client = new SessionClient(app.url)
    const { workflowId, failedId } = await runThatFailsAtStepTwo(client)

    fake.script(byNode({ 'STEP-ONE': () => textReply('never again'), 'STEP-TWO': () => textReply('two'), 'STEP-THREE': () => textReply('three') }))
    const before = fake.requests.length
    const resumed = await client.post(`/api/workflows/runs/${failedId}/resume`, { fromNode: 'second' })
    expect(resumed.status).toBe(202)
    const jobId = (await resumed.json()).jobId
    const job = await waitForJobEnd(client, jobId, 30_000)
    expect(job).toMatchObject({ status: 'complete', content: 'three' })
    // Upstream calls per step: none for the first, one each for the second and third.
    const calls = fake.requests.slice(before).map(request => ['STEP-ONE', 'STEP-TWO', 'STEP-THREE'].find(step => system(request).includes(step)))
    expect(calls.sort()).toEqual(['STEP-THREE', 'STEP-TWO'])
    expect(job.workflowState!.nodeStates.first).toMatchObject({ status: 'completed', output: 'summary one' })
    const record = await client.json(`/api/jobs/${jobId}`)
    expect(record.workflow).toMatchObject({ workflowId, resumedFrom: { jobId: failedId, nodeId: 'second' } })
    expect(record.workflow.resumeState).toBeUndefined()

    // What cannot be resumed says why.
    const again = async (id: string, body: unknown) => client.post(`/api/workflows/runs/${id}/resume`, body)
    expect((await again(jobId, { fromNode: 'second' })).status).toBe(409)
    expect((await again(failedId, { fromNode: 'nowhere' })).status).toBe(400)
    expect((await again(failedId, { fromNode: 'start' })).status).toBe(400)
    expect((await new SessionClient(app.url).post(`/api/workflows/runs/${failedId}/resume`, { fromNode: 'second' })).status).toBe(404)
  })

  it('stops a run on abort and marks the remaining steps skipped', async () => {
    const client = new SessionClient(app.url)
    const workflowId = await save(client, chain)
    fake.script(byNode({
      'STEP-ONE': () => textReply('summary'),
      'STEP-TWO': () => ({ type: 'stream', steps: [{ chunk: roleChunk(fakeChunkMeta) }, { stall: true }] }),
    }))
    const jobId = await run(client, workflowId, 'go')
    await expect.poll(async () => (await client.json(`/api/jobs/${jobId}`)).workflowState?.currentNodeId, { timeout: 10_000 }).toBe('second')
    expect(await client.json(`/api/jobs/${jobId}/abort`, { method: 'POST' })).toMatchObject({ aborted: true, status: 'aborted' })
    const job = await waitForJobEnd(client, jobId)
    expect(job.workflowState!.nodeStates).toMatchObject({ first: { status: 'completed' }, second: { status: 'skipped' }, third: { status: 'skipped' }, out: { status: 'skipped' } })
  })

  it('rejects invalid workflows with the node named, and keeps workflows private', async () => {
    const alice = new SessionClient(app.url)
    const response = await alice.post('/api/workflows', { definition: { ...chain, nodes: [...chain.nodes, { id: 'extra', kind: 'tool', tool: 'launch_rockets' }] } })
    expect(response.status).toBe(400)
    const body = await response.json()
    expect(body.message).toMatch(/"extra" calls the tool "launch_rockets", which this server does not have/)
    expect(body.data.problems).toContainEqual(expect.objectContaining({ nodeId: 'extra' }))
    const workflowId = await save(alice, chain)
    const bob = new SessionClient(app.url)
    for (const [path, method] of [[`/api/workflows/${workflowId}`, 'GET'], [`/api/workflows/${workflowId}`, 'DELETE'], [`/api/workflows/${workflowId}/run`, 'POST']] as const) {
      expect((await bob.fetch(path, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : JSON.stringify({ prompt: 'x' }) })).status, `${method} ${path}`).toBe(404)
    }
  })
  it('keeps every save as a version with its note, records the version a run ran, and restores one as a new version', async () => {
    const client = new SessionClient(app.url)
    const created = await client.post('/api/workflows', { definition: chain, note: 'First draft' })
    expect(created.status).toBe(201)
    const workflowId = (await created.json()).id
    const renamed = { ...chain, name: 'Three steps, renamed' }
    const saved = await client.fetch(`/api/workflows/${workflowId}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ definition: renamed, note: 'Better name' }) })
    expect(await saved.json()).toMatchObject({ name: 'Three steps, renamed', version: 2 })
    const listed = await client.json(`/api/workflows/${workflowId}/versions`)
    expect(listed.current).toBe(2)
    expect(listed.versions.map((version: { version: number, note?: string }) => [version.version, version.note])).toEqual([[2, 'Better name'], [1, 'First draft']])
    expect(await client.json(`/api/workflows/${workflowId}/versions/1`)).toMatchObject({ version: 1, name: 'Three steps', definition: { name: 'Three steps' } })

    // A run says which version it ran.
    fake.script(byNode({ 'STEP-ONE': () => textReply('one'), 'STEP-TWO': () => textReply('two'), 'STEP-THREE': () => textReply('three') }))
    const jobId = await run(client, workflowId, 'Go')
    expect((await waitForJobEnd(client, jobId, 30_000)).status).toBe('complete')
    expect((await client.json(`/api/jobs/${jobId}`)).workflow).toMatchObject({ workflowId, version: 2 })

    // Restoring version 1 saves it as version 3; nothing in between is lost.
    const restored = await client.post(`/api/workflows/${workflowId}/versions/1/restore`, {})
    expect(await restored.json()).toMatchObject({ name: 'Three steps', version: 3 })
    expect((await client.json(`/api/workflows/${workflowId}/versions`)).versions.map((version: { version: number, note?: string }) => [version.version, version.note])).toEqual([[3, 'Restored version 1'], [2, 'Better name'], [1, 'First draft']])

    // Bad input is told what to fix; another person's workflow has no versions to see.
    const longNote = await client.fetch(`/api/workflows/${workflowId}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ definition: chain, note: 'x'.repeat(201) }) })
    expect(longNote.status).toBe(400)
    expect(await longNote.text()).toMatch(/note/)
    expect((await client.fetch(`/api/workflows/${workflowId}/versions/zero`)).status).toBe(400)
    expect((await client.fetch(`/api/workflows/${workflowId}/versions/99`)).status).toBe(404)
    expect((await new SessionClient(app.url).fetch(`/api/workflows/${workflowId}/versions`)).status).toBe(404)
  })

  it('takes named, typed inputs: fills {{inputs.<name>}}, applies defaults, and answers 400 naming each input at fault', async () => {
    const client = new SessionClient(app.url)
    const workflowId = await save(client, {
      version: 1,
      name: 'Brief writer',
      defaultModel: MODEL,
      inputs: [
        { name: 'topic', label: 'Topic', type: 'text', required: true },
        { name: 'words', type: 'number', default: 50 },
        { name: 'tone', type: 'choice', choices: ['plain', 'playful'], default: 'plain' },
        { name: 'sources', type: 'boolean' },
      ],
      nodes: [
        { id: 'start', kind: 'start' },
        { id: 'write', kind: 'agent', systemPrompt: 'BRIEF-WRITER', prompt: 'Write {{inputs.words}} words on {{inputs.topic}}, {{inputs.tone}}; sources: {{inputs.sources}}.' },
        { id: 'out', kind: 'output' },
      ],
      edges: [{ from: 'start', to: 'write' }, { from: 'write', to: 'out' }],
    })
    fake.script(byNode({ 'BRIEF-WRITER': () => textReply('Brief.') }))
    const before = fake.requests.length
    const response = await client.post(`/api/workflows/${workflowId}/run`, { inputs: { topic: 'tides', tone: 'playful', sources: true } })
    expect(response.status).toBe(202)
    const jobId = (await response.json()).jobId
    expect((await waitForJobEnd(client, jobId, 30_000)).status).toBe('complete')
    const asked = fake.requests.slice(before).find(request => system(request).includes('BRIEF-WRITER'))!
    expect(asked.body.messages.at(-1)?.content).toBe('Write 50 words on tides, playful; sources: true.')
    // The run keeps its inputs, and its prompt is them written out.
    expect((await client.json(`/api/jobs/${jobId}`)).workflow).toMatchObject({ inputs: { topic: 'tides', words: '50', tone: 'playful', sources: 'true' }, prompt: 'Topic: tides\nwords: 50\ntone: playful\nsources: true' })

    const refused = async (body: unknown) => {
      const answer = await client.post(`/api/workflows/${workflowId}/run`, body)
      expect(answer.status).toBe(400)
      return (await answer.json()).message as string
    }
    expect(await refused({ inputs: { words: 10 } })).toMatch(/topic: required/)
    expect(await refused({ inputs: { topic: 'x', words: 'ten' } })).toMatch(/words: .*number/)
    expect(await refused({ inputs: { topic: 'x', tone: 'grim' } })).toMatch(/tone: pick one of: plain, playful/)
    expect(await refused({ inputs: { topic: 'x', colour: 'red' } })).toMatch(/colour: this workflow has no such input/)
    // A workflow without inputs still takes one prompt, and says when it is missing.
    const plain = await save(client, chain)
    expect(await refused({})).toMatch(/topic: required/)
    const noPrompt = await client.post(`/api/workflows/${plain}/run`, {})
    expect(noPrompt.status).toBe(400)
    expect((await noPrompt.json()).message).toMatch(/prompt: give the workflow a prompt/)
    // A declaration that does not hold together is refused when saved, naming the field.
    const bad = await client.post('/api/workflows', { definition: { ...chain, inputs: [{ name: 'tone', type: 'choice' }, { name: 'tone', type: 'text' }] } })
    expect(bad.status).toBe(400)
    expect(await bad.text()).toMatch(/choices/)
  })

  it('takes a text file for an attachment input: its text reaches the step, and a file that is not text gets 400 naming the input', async () => {
    const client = new SessionClient(app.url)
    const workflowId = await save(client, {
      version: 1,
      name: 'Report reader',
      defaultModel: MODEL,
      inputs: [{ name: 'report', label: 'Report', type: 'attachment', required: true }],
      nodes: [{ id: 'start', kind: 'start' }, { id: 'read', kind: 'agent', systemPrompt: 'REPORT-READER', prompt: 'Summarise: {{inputs.report}}' }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'read' }, { from: 'read', to: 'out' }],
    })
    fake.script(byNode({ 'REPORT-READER': () => textReply('Sales are up.') }))
    const before = fake.requests.length
    const file = { name: 'q3.csv', data: Buffer.from('region,sales\nnorth,104\nsouth,97\n').toString('base64') }
    const response = await client.post(`/api/workflows/${workflowId}/run`, { inputs: { report: file } })
    expect(response.status).toBe(202)
    expect((await waitForJobEnd(client, (await response.json()).jobId, 30_000)).status).toBe('complete')
    const asked = fake.requests.slice(before).find(request => system(request).includes('REPORT-READER'))!
    expect(asked.body.messages.at(-1)?.content).toBe('Summarise: File “q3.csv”:\n\nregion,sales\nnorth,104\nsouth,97\n')
    const image = await client.post(`/api/workflows/${workflowId}/run`, { inputs: { report: { name: 'chart.png', data: Buffer.from([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0, 0]).toString('base64') } } })
    expect(image.status).toBe(400)
    expect((await image.json()).message).toMatch(/report: “chart.png” is not a text file/)
  })

  it('starts runs from a webhook: the secret URL (and a signed body) start a run with the body as its inputs, as the owner; anything else is refused', async () => {
    const client = new SessionClient(app.url)
    const workflowId = await save(client, {
      version: 1,
      name: 'Ticket triage',
      defaultModel: MODEL,
      inputs: [{ name: 'ticket', type: 'text', required: true }, { name: 'priority', type: 'number', default: 2 }],
      nodes: [{ id: 'start', kind: 'start' }, { id: 'triage', kind: 'agent', systemPrompt: 'HOOK-TRIAGE', prompt: 'Triage {{inputs.ticket}} at {{inputs.priority}}' }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'triage' }, { from: 'triage', to: 'out' }],
    })
    fake.script(byNode({ 'HOOK-TRIAGE': () => textReply('Billing desk.') }))
    const made = await client.post(`/api/workflows/${workflowId}/webhook`, {})
    expect(made.status).toBe(201)
    const { path } = await made.json()
    // Another person cannot see or make it.
    expect((await new SessionClient(app.url).post(`/api/workflows/${workflowId}/webhook`, {})).status).toBe(404)

    // Called from anywhere, without a session or an origin of this site.
    const call = (url: string, body: unknown, headers: Record<string, string> = {}) => fetch(`${app.url}${url}`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://elsewhere.example', ...headers }, body: typeof body === 'string' ? body : JSON.stringify(body) })
    const before = fake.requests.length
    const started = await call(path, { ticket: 'Refund please' })
    expect(started.status).toBe(202)
    const { jobId, runPath } = await started.json()
    expect(runPath).toBe(`/workflows/runs/${jobId}`)
    // The run is the owner's: they see it, with how it started.
    expect((await waitForJobEnd(client, jobId, 30_000)).status).toBe('complete')
    expect(fake.requests.slice(before).find(request => system(request).includes('HOOK-TRIAGE'))!.body.messages.at(-1)?.content).toBe('Triage Refund please at 2')
    expect(await client.json(`/api/workflows/runs/${jobId}`)).toMatchObject({ startedVia: 'webhook', workflowId })
    // Asked to wait, it answers with the run's result.
    const waited = await call(`${path}?wait=30`, { ticket: 'Wait for me' })
    expect(waited.status).toBe(200)
    expect(await waited.json()).toMatchObject({ status: 'complete', output: 'Billing desk.' })
    expect((await call(`${path}?wait=999`, { ticket: 'x' })).status).toBe(400)
    // A body that does not fit the inputs: 400 naming the input; a wrong secret: 401.
    const misfit = await call(path, { priority: 'high' })
    expect(misfit.status).toBe(400)
    expect((await misfit.json()).message).toMatch(/ticket: required/)
    expect((await call(`${path.slice(0, -4)}AAAA`, { ticket: 'x' })).status).toBe(401)

    // A signed hook (rotated: the old URL stops working).
    const signed = await (await client.post(`/api/workflows/${workflowId}/webhook`, { signing: { header: 'X-Hub-Signature-256', secret: 'a-shared-signing-secret' } })).json()
    expect((await call(path, { ticket: 'x' })).status).toBe(401)
    const body = JSON.stringify({ ticket: 'Signed ticket' })
    const signature = `sha256=${createHmac('sha256', 'a-shared-signing-secret').update(body).digest('hex')}`
    expect((await call(signed.path, body, { 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` })).status).toBe(401)
    expect((await call(signed.path, body)).status).toBe(401)
    const good = await call(signed.path, body, { 'x-hub-signature-256': signature })
    expect(good.status).toBe(202)
    const signedRun = (await good.json()).jobId as string
    expect((await waitForJobEnd(client, signedRun, 30_000)).status).toBe('complete')
    expect(await client.json(`/api/workflows/${workflowId}/webhook`)).toEqual({ exists: true, createdAt: expect.any(Number), signatureScheme: 'hmac-sha256', signatureHeader: 'x-hub-signature-256' })
    // The same signed body again is the same delivery: answered with the first's run, no second run.
    const again = await call(signed.path, body, { 'x-hub-signature-256': signature })
    expect(again.status).toBe(200)
    expect(again.headers.get('idempotent-replayed')).toBe('true')
    expect((await again.json()).jobId).toBe(signedRun)

    // Past its rate (4 a minute here): 429 with when to try again; another client is answered meanwhile.
    let refused: Response | undefined
    for (let attempt = 0; attempt < 6 && !refused; attempt++) {
      const distinct = JSON.stringify({ ticket: `Signed ticket ${attempt}` })
      const answer = await call(signed.path, distinct, { 'x-hub-signature-256': `sha256=${createHmac('sha256', 'a-shared-signing-secret').update(distinct).digest('hex')}` })
      if (answer.status === 429) refused = answer
      else expect(answer.status).toBe(202)
    }
    expect(refused?.headers.get('retry-after')).toMatch(/^\d+$/)
    expect((await client.fetch('/api/workflows')).status).toBe(200)

    // Deleting the workflow removes its webhook.
    expect((await client.fetch(`/api/workflows/${workflowId}`, { method: 'DELETE' })).status).toBe(200)
    expect((await call(signed.path, body, { 'x-hub-signature-256': signature })).status).toBe(401)
  })

  it('runs another workflow as a child run, with its inputs, and a stop of the parent stops the child', async () => {
    const client = new SessionClient(app.url)
    const childId = await save(client, {
      version: 1,
      name: 'Child triage',
      defaultModel: MODEL,
      inputs: [{ name: 'ticket', type: 'text', required: true }, { name: 'urgent', type: 'boolean' }],
      nodes: [{ id: 'start', kind: 'start' }, { id: 'read', kind: 'agent', systemPrompt: 'CHILD-READ', prompt: 'Read {{inputs.ticket}} (urgent: {{inputs.urgent}})' }, { id: 'reply', kind: 'agent', systemPrompt: 'CHILD-REPLY' }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'read' }, { from: 'read', to: 'reply' }, { from: 'reply', to: 'out' }],
    })
    const parentId = await save(client, {
      version: 1,
      name: 'Parent',
      defaultModel: MODEL,
      nodes: [{ id: 'start', kind: 'start' }, { id: 'triage', kind: 'workflow', workflowId: childId, inputs: { ticket: '{{prompt}}', urgent: 'true' } }, { id: 'out', kind: 'output', template: 'Parent got: {{input}}' }],
      edges: [{ from: 'start', to: 'triage' }, { from: 'triage', to: 'out' }],
    })
    // Another person cannot run someone's workflow from theirs.
    const stranger = new SessionClient(app.url)
    const theirs = await save(stranger, { version: 1, name: 'Borrower', defaultModel: MODEL, nodes: [{ id: 'start', kind: 'start' }, { id: 'borrow', kind: 'workflow', workflowId: childId }, { id: 'out', kind: 'output' }], edges: [{ from: 'start', to: 'borrow' }, { from: 'borrow', to: 'out' }] })
    const borrowed = await waitForJobEnd(stranger, await run(stranger, theirs, 'x'), 30_000)
    expect(borrowed.error?.message).toMatch(/there is no workflow “[\w-]+” of yours/)

    fake.script(byNode({ 'CHILD-READ': () => textReply('read it'), 'CHILD-REPLY': () => textReply('the reply') }))
    const done = await waitForJobEnd(client, await run(client, parentId, 'Printer on fire'), 30_000)
    expect(done).toMatchObject({ status: 'complete', content: 'Parent got: the reply' })
    expect(fake.requests.find(request => system(request).includes('CHILD-READ'))!.body.messages.at(-1)?.content).toBe('Read Printer on fire (urgent: true)')
    expect(done.workflowState!.nodeStates.triage!.child).toMatchObject({ workflowId: childId, workflowName: 'Child triage', state: { nodeStates: { read: { status: 'completed' }, reply: { status: 'completed', output: 'the reply' } } } })
    // The child run is kept in the run history too: listed with its own workflow, linked to its parent.
    const childRunId = done.workflowState!.nodeStates.triage!.child!.runId!
    await expect.poll(async () => (await client.fetch(`/api/workflows/runs/${childRunId}`)).status, { timeout: 10_000 }).toBe(200)
    expect(await client.json(`/api/workflows/runs/${childRunId}`)).toMatchObject({ workflowId: childId, startedVia: 'parent', status: 'complete', parentRun: { jobId: done.id, nodeId: 'triage' }, job: { content: 'the reply', workflow: { inputs: { ticket: 'Printer on fire', urgent: 'true' } } } })
    expect((await client.json(`/api/workflows/runs?workflowId=${childId}`)).runs.map((run: { jobId: string }) => run.jobId)).toContain(childRunId)
    expect((await stranger.fetch(`/api/workflows/runs/${childRunId}`)).status).toBe(404)

    // Stopped while the child's first step streams: its second step never asks the model.
    fake.script(byNode({ 'CHILD-READ': () => textReply('reading very slowly', { pieceSize: 1, delayMs: 100 }), 'CHILD-REPLY': () => textReply('never') }))
    const before = fake.requests.length
    const jobId = await run(client, parentId, 'Slow one')
    await expect.poll(async () => (await client.json(`/api/jobs/${jobId}`)).workflowState?.nodeStates?.triage?.child?.state?.nodeStates?.read?.status, { timeout: 10_000 }).toBe('running')
    expect(await client.json(`/api/jobs/${jobId}/abort`, { method: 'POST' })).toMatchObject({ aborted: true, status: 'aborted' })
    const stopped = await waitForJobEnd(client, jobId, 30_000)
    expect(stopped.status).toBe('aborted')
    expect(fake.requests.slice(before).filter(request => system(request).includes('CHILD-REPLY'))).toHaveLength(0)
    expect(stopped.workflowState!.nodeStates.triage!.child!.state!.nodeStates.reply!.status).toBe('skipped')
  })

  it('runs every shipped example on the offline demo model to an answer made of its steps\' outputs', async () => {
    const client = new SessionClient(app.url)
    const { examples } = await client.json('/api/workflows/examples') as { examples: Array<{ key: string, definition: { defaultModel: string } }> }
    const install = async (key: string) => save(client, examples.find(example => example.key === key)!.definition)
    const finished = async (jobId: string) => {
      const job = await waitForJobEnd(client, jobId, 60_000)
      expect(job.status).toBe('complete')
      expect(job.content).not.toMatch(/handful of rules|beyond my few rules|did not catch that|outside what this offline demo/)
      return job.content as string
    }
    // Research (the calculator) → draft → critique → the final answer, which carries the research's figure and the critique.
    const research = await finished(await run(client, await install('research-draft-critique'), 'What is 12 * 7?'))
    expect(research).toContain('84')
    expect(research).toMatch(/Revised after the critique/)
    // Facts (the calculator) and the clock, in parallel, merged.
    const merged = await finished(await run(client, await install('parallel-perspectives'), 'What is 6 * 7?'))
    expect(merged).toContain('42')
    expect(merged).toMatch(/UTC/)
    // Triage: the weather desk for weather, the general desk for the rest.
    const triage = await install('triage-router')
    expect(await finished(await run(client, triage, 'What is the weather in Lisbon?'))).toMatch(/Lisbon/)
    expect(await finished(await run(client, triage, 'What is 2 + 2?'))).toMatch(/\b4\b/)
    // Draft, check with me (approved over the API, as from any tab), then polish.
    const jobId = await run(client, await install('draft-check-finish'), 'A short note about the tides')
    await expect.poll(async () => (await client.json(`/api/jobs/${jobId}`)).inputRequests?.find((request: { status: string }) => request.status === 'open'), { timeout: 30_000, interval: 100 }).toBeDefined()
    const request = (await client.json(`/api/jobs/${jobId}`)).inputRequests.find((item: { status: string }) => item.status === 'open')
    expect((await client.post(`/api/jobs/${jobId}/input/${request.id}`, { approved: true })).status).toBe(200)
    expect(await finished(jobId)).toMatch(/tides/)
    // A for-each loop: a reply drafted for each ticket, in the tickets' order.
    const tickets = await (await client.post(`/api/workflows/${await install('reply-to-each-ticket')}/run`, { inputs: { tickets: 'My order is late\nI was charged twice\nHow do I reset my password?' } })).json()
    const replies = await finished(tickets.jobId)
    expect(replies.indexOf('### Ticket 1: My order is late')).toBeGreaterThanOrEqual(0)
    expect(replies.indexOf('### Ticket 3: How do I reset my password?')).toBeGreaterThan(replies.indexOf('### Ticket 2: I was charged twice'))
    expect(replies.match(/Draft: /g)).toHaveLength(3)
    // An until loop: critique and revise until a model (the demo's rule) says it is ready.
    const revisedId = await run(client, await install('revise-until-ready'), 'A short note about the tides')
    expect(await finished(revisedId)).toMatch(/Revised after the critique/)
    expect((await client.json(`/api/jobs/${revisedId}`)).workflowState.nodeStates.revise.iterations).toEqual([expect.objectContaining({ status: 'completed', conditionHeld: true })])
    // A sub-workflow: installing it installs the research workflow it runs (as the workflows page does), whose answer it polishes.
    const made = await installExample(examples.find(example => example.key === 'answer-then-polish') as never, examples as never, [], async definition => ({ id: await save(client, definition), name: (definition as { name: string }).name }))
    expect(made.map(item => item.name)).toEqual(['Research → draft → critique → answer', 'Research workflow, then polish'])
    const polishedId = await run(client, made[1]!.id, 'What is 12 * 7?')
    expect(await finished(polishedId)).toContain('84')
    expect((await client.json(`/api/jobs/${polishedId}`)).workflowState.nodeStates.research.child).toMatchObject({ workflowId: made[0]!.id, state: { nodeStates: { final: { status: 'completed' } } } })
  }, 120_000)

  it('retries a step that failed upstream after its backoff, never one that was refused, and ends a try at its timeout', async () => {
    const client = new SessionClient(app.url)
    // One after another: the first request makes the guest session the others use.
    const flaky = await save(client, oneAgent('FLAKY-STEP', { retries: 2, retry: { backoff: 'fixed', delaySeconds: 1 } }))
    const refused = await save(client, oneAgent('REFUSED-STEP', { retries: 3, retry: { delaySeconds: 0 } }))
    const slow = await save(client, oneAgent('SLOW-STEP', { retries: 1, timeoutSeconds: 1, retry: { delaySeconds: 0 } }))
    const seen: Record<string, number[]> = {}
    const before = fake.requests.length
    fake.script((request) => {
      const name = ['FLAKY-STEP', 'REFUSED-STEP', 'SLOW-STEP'].find(key => system(request).includes(key))!
      const times = (seen[name] ??= [])
      times.push(Date.now())
      if (name === 'FLAKY-STEP') return times.length <= 2 ? failsMidStream() : textReply('third time lucky')
      if (name === 'REFUSED-STEP') return { type: 'http-error', status: 402, body: { error: { code: 402, message: 'Insufficient credits' } } }
      return { type: 'stream', steps: [{ chunk: roleChunk(fakeChunkMeta) }, { stall: true }] }
    })
    const [flakyJob, refusedJob, slowJob] = await Promise.all([run(client, flaky, 'go'), run(client, refused, 'go'), run(client, slow, 'go')])
    const [flakyEnd, refusedEnd, slowEnd] = await Promise.all([waitForJobEnd(client, flakyJob, 30_000), waitForJobEnd(client, refusedJob, 30_000), waitForJobEnd(client, slowJob, 30_000)])

    // Upstream trouble: tried three times, each wait at least the policy's second (measured at the upstream).
    expect(flakyEnd).toMatchObject({ status: 'complete', content: 'third time lucky' })
    expect(flakyEnd.workflowState!.nodeStates.step).toMatchObject({ status: 'completed', attempts: 2 })
    expect(seen['FLAKY-STEP']).toHaveLength(3)
    expect(seen['FLAKY-STEP']![1]! - seen['FLAKY-STEP']![0]!).toBeGreaterThanOrEqual(1000)
    expect(seen['FLAKY-STEP']![2]! - seen['FLAKY-STEP']![1]!).toBeGreaterThanOrEqual(1000)
    // A refusal (402) would be refused again: one request, however many retries.
    expect(refusedEnd.status).toBe('error')
    expect(seen['REFUSED-STEP']).toHaveLength(1)
    expect(refusedEnd.workflowState!.nodeStates.step!.attempts).toBeUndefined()
    // A stalled model: each try ends at the step's timeout (the upstream saw the client leave), then the step fails.
    expect(slowEnd.status).toBe('error')
    expect(slowEnd.workflowState!.nodeStates.step).toMatchObject({ status: 'error', attempts: 1, error: 'this step took longer than its timeout of 1 s and was stopped' })
    expect(seen['SLOW-STEP']).toHaveLength(2)
    const slowRequests = fake.requests.slice(before).filter(request => system(request).includes('SLOW-STEP'))
    await Promise.all(slowRequests.map(request => fake.settled(fake.requests.indexOf(request))))
    expect(slowRequests.every(request => request.clientDisconnected)).toBe(true)
  })

  it('previews a schedule\'s next five runs as the server reads them, and runs a schedule now without moving its next run', async () => {
    const client = new SessionClient(app.url)
    const preview = (body: unknown) => client.post('/api/workflows/schedules/preview', body)
    const answer = await preview({ cron: '0 8 * * 1-5', timezone: 'Europe/Berlin' })
    expect(answer.status).toBe(200)
    const { times } = await answer.json() as { times: number[] }
    expect(times).toHaveLength(5)
    expect(times[0]!).toBeGreaterThan(Date.now())
    for (const at of times) {
      const berlin = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Berlin', weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(at)
      expect(berlin).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 08:00$/)
    }
    expect(times).toEqual([...times].sort((a, b) => a - b))
    const every = await (await preview({ everyMinutes: 90 })).json() as { times: number[] }
    expect(every.times.slice(1).map((at, index) => at - every.times[index]!)).toEqual(Array(4).fill(90 * 60_000))
    // What cannot be used is said in words, as when saving.
    const bad = await preview({ cron: 'every tuesday', timezone: 'UTC' })
    expect(bad.status).toBe(400)
    expect(await bad.text()).toMatch(/the cron expression cannot be used/)
    expect((await preview({ cron: '0 8 * * *', timezone: 'Mars/Olympus' })).status).toBe(400)
    expect(await (await preview({ cron: '* * * * * *', timezone: 'UTC' })).text()).toMatch(/more often than this server allows/)

    const workflowId = await save(client, oneAgent('RUN-NOW-STEP', {}))
    const created = await client.post(`/api/workflows/${workflowId}/schedules`, { cron: '0 3 1 1 *', timezone: 'UTC', prompt: 'the scheduled prompt' })
    expect(created.status).toBe(201)
    const schedule = await created.json() as { id: string, nextRunAt: number }
    fake.script(() => textReply('ran now'))
    const started = await client.post(`/api/workflows/${workflowId}/schedules/${schedule.id}/run`, {})
    expect(started.status).toBe(202)
    const { jobId, runPath } = await started.json() as { jobId: string, runPath: string }
    expect(runPath).toBe(`/workflows/runs/${jobId}`)
    expect(await waitForJobEnd(client, jobId, 30_000)).toMatchObject({ status: 'complete', content: 'ran now', workflow: { prompt: 'the scheduled prompt', startedVia: 'schedule' } })
    const [after] = (await client.json(`/api/workflows/${workflowId}/schedules`)).schedules as Array<{ nextRunAt: number }>
    expect(after!.nextRunAt).toBe(schedule.nextRunAt)
    // Not another person's schedule, nor one of another workflow.
    const stranger = new SessionClient(app.url)
    expect((await stranger.post(`/api/workflows/${workflowId}/schedules/${schedule.id}/run`, {})).status).toBe(404)
    const otherWorkflow = await save(client, oneAgent('OTHER', {}))
    expect((await client.post(`/api/workflows/${otherWorkflow}/schedules/${schedule.id}/run`, {})).status).toBe(404)
  })

  it('calls a failed run\'s webhook with the failure, signed with the secret shown once, and keeps the URL to itself', async () => {
    const received: Array<{ headers: Record<string, string | string[] | undefined>, body: string }> = []
    const receiver = createServer((request, response) => {
      let body = ''
      request.on('data', (part: Buffer) => (body += part.toString()))
      request.on('end', () => {
        received.push({ headers: request.headers, body })
        response.writeHead(204).end()
      })
    })
    await new Promise<void>(resolve => receiver.listen(0, '127.0.0.1', resolve))
    try {
      const client = new SessionClient(app.url)
      const workflowId = await save(client, oneAgent('HOOKED-STEP', {}))
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/incoming/S3CRET-TOKEN`
      expect((await client.fetch(`/api/workflows/${workflowId}/failure-webhook`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url: 'ftp://nope' }) })).status).toBe(400)
      const set = await client.fetch(`/api/workflows/${workflowId}/failure-webhook`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url }) })
      expect(set.status).toBe(200)
      const { secret } = await set.json() as { secret: string }
      const status = await client.json(`/api/workflows/${workflowId}/failure-webhook`)
      expect(status).toEqual({ exists: true, host: new URL(url).host, createdAt: expect.any(Number) })
      expect(JSON.stringify(status)).not.toContain('S3CRET')
      expect((await new SessionClient(app.url).fetch(`/api/workflows/${workflowId}/failure-webhook`)).status).toBe(404)

      fake.script(() => ({ type: 'http-error', status: 402, body: { error: { code: 402, message: 'Insufficient credits' } } }))
      const jobId = await run(client, workflowId, 'go')
      expect((await waitForJobEnd(client, jobId, 30_000)).status).toBe('error')
      await expect.poll(() => received.length, { timeout: 15_000 }).toBe(1)
      const [call] = received
      const payload = JSON.parse(call!.body)
      expect(payload).toMatchObject({ type: 'workflow.run.failed', run_id: jobId, workflow_id: workflowId, workflow_name: 'HOOKED-STEP', step: 'step', run_url: `/workflows/runs/${jobId}` })
      expect(payload.error).toMatch(/insufficient credits \(402\)/)
      expect(call!.headers['webhook-signature']).toBe(webhookSignature(secret, String(call!.headers['webhook-id']), Number(call!.headers['webhook-timestamp']), call!.body))
      await client.fetch(`/api/workflows/${workflowId}/failure-webhook`, { method: 'DELETE' })
      expect(await client.json(`/api/workflows/${workflowId}/failure-webhook`)).toEqual({ exists: false })
    } finally {
      await new Promise(resolve => receiver.close(resolve))
    }
  })

  it('routes with a catastrophic pattern on a hostile input without freezing the server, and refuses patterns that need backtracking', async () => {
    const attacker = new SessionClient(app.url)
    const other = new SessionClient(app.url)
    const workflowId = await save(attacker, {
      version: 1,
      name: 'Evil router',
      defaultModel: MODEL,
      nodes: [
        { id: 'start', kind: 'start' },
        { id: 'route', kind: 'router', mode: 'condition', conditions: [{ branch: 'evil', matches: '^(a+)+$' }], defaultBranch: 'plain' },
        { id: 'evil', kind: 'output', template: 'matched' },
        { id: 'plain', kind: 'output', template: 'not matched' },
      ],
      edges: [{ from: 'start', to: 'route' }, { from: 'route', to: 'evil', branch: 'evil' }, { from: 'route', to: 'plain', branch: 'plain' }],
    })
    // With a backtracking engine 40 "a"s and a "!" take minutes; here it is one linear pass.
    const jobIds = await Promise.all([run(attacker, workflowId, `${'a'.repeat(40)}!`), run(attacker, workflowId, `${'a'.repeat(5_000)}!`)])
    // Another user is answered while the attack runs.
    expect((await other.fetch('/api/threads')).status).toBe(200)
    for (const jobId of jobIds) {
      const job = await waitForJobEnd(attacker, jobId)
      expect(job).toMatchObject({ status: 'complete', content: 'not matched' })
    }

    const refused = await attacker.post('/api/workflows/validate', { definition: {
      version: 1,
      name: 'Back-reference',
      defaultModel: MODEL,
      nodes: [{ id: 'start', kind: 'start' }, { id: 'route', kind: 'router', mode: 'condition', conditions: [{ branch: 'twice', matches: '(a)\\1' }], defaultBranch: 'twice' }, { id: 'twice', kind: 'output' }],
      edges: [{ from: 'start', to: 'route' }, { from: 'route', to: 'twice', branch: 'twice' }],
    } })
    const check = await refused.json()
    expect(check.ok).toBe(false)
    expect(check.problems).toEqual([expect.objectContaining({ nodeId: 'route', message: expect.stringContaining('back-references and look-arounds are not supported') })])
  })
})

describe('the run history, after the jobs\' live state is gone', () => {
  // Finished jobs are deleted a moment after they end (and swept every half second), so every
  // run below is read from the history, not from its job.
  const app = useBuiltApp(() => ({ ...env(), NUXT_BACKGROUND_JOBS_COMPLETED_JOB_RETENTION_MS: '200', NUXT_BACKGROUND_JOBS_JOB_TIMEOUT_MS: '2000' }))

  async function expired(client: SessionClient, jobId: string): Promise<void> {
    await expect.poll(async () => (await client.fetch(`/api/jobs/${jobId}`)).status, { timeout: 20_000 }).toBe(404)
  }

  it('lists a run after its job expired (filtered, paged), opens it, resumes it from the failed step, runs it again, and deletes runs with the run and the workflow', async () => {
    const client = new SessionClient(app.url)
    const { workflowId, failedId } = await runThatFailsAtStepTwo(client)
    await expired(client, failedId)

    const listed = await client.json(`/api/workflows/runs?workflowId=${workflowId}`)
    expect(listed.runs).toEqual([expect.objectContaining({ jobId: failedId, workflowId, workflowName: 'Three steps', version: 1, status: 'error', startedVia: 'form', prompt: 'go', stepsDone: 2, stepCount: 5 })])
    expect(listed.runs[0].error.message).toContain('credits')
    expect(listed.runs[0].finishedAt).toBeGreaterThanOrEqual(listed.runs[0].startedAt)
    expect((await client.json('/api/workflows/runs?status=complete')).runs).toEqual([])
    expect((await client.json('/api/workflows/runs?status=error,rejected')).runs.map((item: { jobId: string }) => item.jobId)).toEqual([failedId])
    // Tokens and cost per step and per run (the fake upstream reports 10 + 5 tokens per answer).
    expect(listed.runs[0].usage).toMatchObject({ promptTokens: 10, completionTokens: 5, totalTokens: 15 })
    const kept = await client.json(`/api/workflows/runs/${failedId}`)
    expect(kept.job.workflowState.nodeStates.first).toMatchObject({ status: 'completed', output: 'summary one', usage: { totalTokens: 15 } })
    expect(kept.job.workflow).toMatchObject({ workflowId, version: 1, prompt: 'go' })
    expect(kept.job.workflow.resumeState).toBeUndefined()

    // Resume from the history: the first step is not paid for again.
    fake.script(byNode({ 'STEP-ONE': () => textReply('never again'), 'STEP-TWO': () => textReply('two'), 'STEP-THREE': () => textReply('three') }))
    const before = fake.requests.length
    const resumed = await client.post(`/api/workflows/runs/${failedId}/resume`, { fromNode: 'second' })
    expect(resumed.status).toBe(202)
    const resumedId = (await resumed.json()).jobId
    expect(await waitForJobEnd(client, resumedId, 30_000)).toMatchObject({ status: 'complete', content: 'three' })
    expect(fake.requests.slice(before).map(request => ['STEP-ONE', 'STEP-TWO', 'STEP-THREE'].find(step => system(request).includes(step))).sort()).toEqual(['STEP-THREE', 'STEP-TWO'])

    // Run again, with what the failed run was given.
    const againResponse = await client.post(`/api/workflows/${workflowId}/run`, { prompt: 'go', rerunOf: failedId })
    const againId = (await againResponse.json()).jobId
    expect((await waitForJobEnd(client, againId, 30_000)).status).toBe('complete')
    await expired(client, againId)

    // Newest first, a page at a time.
    const first = await client.json('/api/workflows/runs?limit=2')
    expect(first.runs.map((item: { jobId: string }) => item.jobId)).toEqual([againId, resumedId])
    expect(first.runs.map((item: { startedVia: string }) => item.startedVia)).toEqual(['again', 'resume'])
    // The resumed run paid for the two steps it ran, not for the one it kept.
    expect(first.runs[1]).toMatchObject({ status: 'complete', resumedFrom: { jobId: failedId, nodeId: 'second' }, usage: { totalTokens: 30 } })
    const second = await client.json(`/api/workflows/runs?limit=2&cursor=${first.nextCursor}`)
    expect(second.runs.map((item: { jobId: string }) => item.jobId)).toEqual([failedId])
    expect(second.nextCursor).toBeUndefined()
    expect((await client.json(`/api/workflows/runs?from=${Date.now() + 60_000}`)).runs).toEqual([])

    // Bad queries say what to fix; other people see nothing.
    const badStatus = await client.fetch('/api/workflows/runs?status=finished')
    expect(badStatus.status).toBe(400)
    expect(await badStatus.text()).toContain('status')
    expect((await client.fetch('/api/workflows/runs?cursor=not-a-cursor')).status).toBe(400)
    const stranger = new SessionClient(app.url)
    expect((await stranger.fetch(`/api/workflows/runs/${failedId}`)).status).toBe(404)
    expect((await stranger.json('/api/workflows/runs')).runs).toEqual([])
    expect((await stranger.fetch(`/api/workflows/runs/${failedId}`, { method: 'DELETE' })).status).toBe(404)

    // Deleted by the person, then with their workflow.
    expect((await client.fetch(`/api/workflows/runs/${failedId}`, { method: 'DELETE' })).status).toBe(200)
    expect((await client.fetch(`/api/workflows/runs/${failedId}`)).status).toBe(404)
    expect((await client.fetch(`/api/workflows/${workflowId}`, { method: 'DELETE' })).status).toBe(200)
    expect((await client.json('/api/workflows/runs')).runs).toEqual([])
  })
})

/** SIGKILLs `first` and starts another server on the same data dir; `client`'s session works on it. */
async function killAndRestart(first: RunningApp, shared: Record<string, string>, client: SessionClient): Promise<{ second: RunningApp, again: SessionClient }> {
  await first.stop('SIGKILL')
  const second = await servers.start(shared)
  const again = new SessionClient(second.url)
  again.cookie = client.cookie
  return { second, again }
}

/** The chain's steps answered, its second slowly (a server can be killed during it). */
function scriptSlowChain(): void {
  fake.script(byNode({
    'STEP-ONE': () => textReply('summary of the input'),
    'STEP-TWO': () => textReply('an expanded version, streamed slowly', { pieceSize: 2, delayMs: 40 }),
    'STEP-THREE': () => textReply('the polished answer'),
  }))
}

describe('a workflow run across a server restart', () => {
  it('runs a schedule on its own (every second), as its owner, and goes on after a SIGKILL; bad schedules get 400 naming what to fix', async () => {
    // A short clock: the server checks every 200 ms and allows a run every second.
    // A run a second would pass a guest's 10 starts a minute on a slow machine: this one may start more.
    const shared = { ...env(), NUXT_WORKFLOWS_SCHEDULE_TICK_MS: '200', NUXT_WORKFLOWS_SCHEDULE_MIN_INTERVAL_SECONDS: '1', NUXT_LIMITS_ROLES_GUEST_JOB_STARTS_PER_MINUTE: '600' }
    const first = await servers.start(shared)
    const client = new SessionClient(first.url)
    const workflowId = await save(client, {
      version: 1,
      name: 'Every second',
      defaultModel: MODEL,
      inputs: [{ name: 'topic', type: 'text', required: true }],
      nodes: [{ id: 'start', kind: 'start' }, { id: 'digest', kind: 'agent', systemPrompt: 'SCHEDULED-DIGEST', prompt: 'Digest of {{inputs.topic}}' }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'digest' }, { from: 'digest', to: 'out' }],
    })
    fake.script(byNode({ 'SCHEDULED-DIGEST': () => textReply('The digest.') }))
    const schedules = `/api/workflows/${workflowId}/schedules`
    const refused = async (body: unknown, message: RegExp) => {
      const answer = await client.post(schedules, body)
      expect(answer.status).toBe(400)
      expect((await answer.json()).message).toMatch(message)
    }
    await refused({ cron: '0 99 * * *', inputs: { topic: 'x' } }, /cron expression cannot be used/)
    await refused({ cron: '0 8 * * *', timezone: 'Atlantis/Capital', inputs: { topic: 'x' } }, /not a time zone/)
    await refused({ cron: '0 8 * * *', everyMinutes: 5, inputs: { topic: 'x' } }, /either cron .* or everyMinutes/)
    await refused({ everyMinutes: 5, inputs: {} }, /topic: required/)
    expect((await new SessionClient(first.url).post(schedules, { everyMinutes: 5, inputs: { topic: 'x' } })).status).toBe(404)

    const made = await client.post(schedules, { cron: '* * * * * *', timezone: 'Europe/Berlin', inputs: { topic: 'tides' }, label: 'Tides' })
    expect(made.status).toBe(201)
    const schedule = await made.json()
    expect(schedule).toMatchObject({ label: 'Tides', enabled: true, missed: 'run-once', overlap: false, nextRunAt: expect.any(Number) })
    const scheduledRuns = async (on: SessionClient) => ((await on.json(`/api/workflows/runs?workflowId=${workflowId}`)).runs as Array<{ jobId: string, startedVia: string, status: string }>)
    await expect.poll(async () => (await scheduledRuns(client)).filter(run => run.status === 'complete').length, { timeout: 30_000 }).toBeGreaterThanOrEqual(2)
    const before = await scheduledRuns(client)
    expect(before.every(run => run.startedVia === 'schedule')).toBe(true)
    const requests = fake.requests.filter(request => system(request).includes('SCHEDULED-DIGEST'))
    expect(requests.at(-1)!.body.messages.at(-1)?.content).toBe('Digest of tides')

    const { second, again } = await killAndRestart(first, shared, client)
    try {
      // It goes on after the restart, and no occurrence started two runs.
      await expect.poll(async () => (await scheduledRuns(again)).length, { timeout: 30_000 }).toBeGreaterThan(before.length + 1)
      const listed = (await again.json(schedules)).schedules
      expect(listed).toEqual([expect.objectContaining({ id: schedule.id, last: expect.objectContaining({ status: expect.stringMatching(/started|skipped/) }) })])
      // Switched off, it has no next run; removed with its workflow.
      const off = await again.fetch(`${schedules}/${schedule.id}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ cron: '* * * * * *', timezone: 'Europe/Berlin', inputs: { topic: 'tides' }, enabled: false }) })
      expect(off.status).toBe(200)
      expect((await off.json()).nextRunAt).toBeNull()
      expect((await again.fetch(`/api/workflows/${workflowId}`, { method: 'DELETE' })).status).toBe(200)
      expect((await again.fetch(schedules)).status).toBe(404)
    } finally {
      await second.stop()
    }
  })

  it('resumes a for-each loop after SIGKILL in its third iteration: the first two are not run again, the third resumes at its step', async () => {
    const shared = env()
    const first = await servers.start(shared)
    const client = new SessionClient(first.url)
    const workflowId = await save(client, {
      version: 1,
      name: 'Five items',
      defaultModel: MODEL,
      nodes: [
        { id: 'start', kind: 'start' },
        { id: 'each', kind: 'loop', mode: 'for-each', body: {
          nodes: [{ id: 'in', kind: 'start' }, { id: 'summarise', kind: 'agent', systemPrompt: 'LOOP-SUMMARY', prompt: 'Summarise {{item}}' }, { id: 'title', kind: 'agent', systemPrompt: 'LOOP-TITLE', prompt: 'Title for {{input}}' }, { id: 'done', kind: 'output' }],
          edges: [{ from: 'in', to: 'summarise' }, { from: 'summarise', to: 'title' }, { from: 'title', to: 'done' }],
        } },
        { id: 'out', kind: 'output' },
      ],
      edges: [{ from: 'start', to: 'each' }, { from: 'each', to: 'out' }],
    })
    const item = (request: RecordedRequest) => /item-\d/.exec(String(request.body.messages.at(-1)?.content))?.[0]
    fake.script(byNode({
      'LOOP-SUMMARY': request => textReply(`summary of ${item(request)}`),
      // Iteration 3's title streams slowly, so the server dies while it runs.
      'LOOP-TITLE': request => item(request) === 'item-3' ? textReply('title of item-3, streamed slowly', { pieceSize: 2, delayMs: 80 }) : textReply(`title of ${item(request)}`),
    }))
    const before = fake.requests.length
    const jobId = await run(client, workflowId, 'item-1\nitem-2\nitem-3\nitem-4\nitem-5')
    await expect.poll(async () => (await client.json(`/api/jobs/${jobId}`)).workflowState?.nodeStates?.each?.iterations?.[2]?.state?.nodeStates?.title?.status, { timeout: 15_000 }).toBe('running')
    const { second, again } = await killAndRestart(first, shared, client)
    try {
      const job = await waitForJobEnd(again, jobId, 30_000)
      expect(job).toMatchObject({ status: 'complete', resumeCount: 1 })
      expect(job.content.split('\n\n')).toEqual([1, 2, 3, 4, 5].map(n => n === 3 ? 'title of item-3, streamed slowly' : `title of item-${n}`))
      // Upstream calls: each summary once; each title once, but item 3's twice (it was cut off).
      const requests = fake.requests.slice(before)
      const calls = (kind: string, n: number) => requests.filter(request => system(request).includes(kind) && item(request) === `item-${n}`).length
      expect([1, 2, 3, 4, 5].map(n => calls('LOOP-SUMMARY', n))).toEqual([1, 1, 1, 1, 1])
      expect([1, 2, 3, 4, 5].map(n => calls('LOOP-TITLE', n))).toEqual([1, 1, 2, 1, 1])
      expect(job.workflowState!.nodeStates.each!.iterations!.map(iteration => iteration.status)).toEqual(Array(5).fill('completed'))
    } finally {
      await second.stop()
    }
  })

  it('keeps a 5 MB step output as a file of the run, its record small; a run resumed after SIGKILL gives the next step all of it; the file goes with the run', async () => {
    // Limits raised so one step may make 5 MB (by default a step stops at 200,000 characters).
    const shared = { ...env(), NUXT_LIMITS_WORKFLOW_STEP_CHARS: '6000000', NUXT_LIMITS_JOB_CONTENT_CHARS: '20000000' }
    const first = await servers.start(shared)
    const client = new SessionClient(first.url)
    const workflowId = await save(client, {
      version: 1,
      name: 'Big output',
      defaultModel: MODEL,
      nodes: [{ id: 'start', kind: 'start' }, { id: 'big', kind: 'agent', systemPrompt: 'BIG-STEP' }, { id: 'count', kind: 'agent', systemPrompt: 'COUNT-STEP', prompt: '{{input}}' }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'big' }, { from: 'big', to: 'count' }, { from: 'count', to: 'out' }],
    })
    const big = 'All work and no play. '.repeat(250_000).slice(0, 5_000_000)
    fake.script(byNode({
      'BIG-STEP': () => textReply(big, { pieceSize: 100_000 }),
      // Streams slowly, so the server dies while it runs.
      'COUNT-STEP': request => textReply(`read ${String(request.body.messages.at(-1)?.content).length} characters`, { pieceSize: 2, delayMs: 60 }),
    }))
    const before = fake.requests.length
    const jobId = await run(client, workflowId, 'go')
    await expect.poll(async () => (await client.json(`/api/jobs/${jobId}`)).workflowState?.nodeStates?.count?.status, { timeout: 30_000 }).toBe('running')
    // The job's record holds the output's start and where the rest is.
    const record = await (await client.fetch(`/api/jobs/${jobId}`)).text()
    expect(record.length).toBeLessThan(100_000)
    const kept = (JSON.parse(record) as BackgroundJob).workflowState!.nodeStates.big!
    expect(kept.outputFile).toEqual({ path: 'outputs/big.txt', chars: 5_000_000, bytes: 5_000_000 })
    expect(kept.output!.startsWith(big.slice(0, 2_000))).toBe(true)

    const { second, again } = await killAndRestart(first, shared, client)
    try {
      const job = await waitForJobEnd(again, jobId, 60_000)
      expect(job).toMatchObject({ status: 'complete', resumeCount: 1, content: 'read 5000000 characters' })
      // The big step ran once; the step after it twice (cut off by the kill), each time given all 5 MB, read back from the file after the restart.
      const requests = fake.requests.slice(before)
      expect(requests.filter(request => system(request).includes('BIG-STEP'))).toHaveLength(1)
      expect(requests.filter(request => system(request).includes('COUNT-STEP')).map(request => String(request.body.messages.at(-1)?.content).length)).toEqual([5_000_000, 5_000_000])

      // The run history's record stays small; the whole output downloads from the run.
      const history = await again.json(`/api/workflows/runs/${jobId}`) as WorkflowRun
      expect(history.job.workflowState!.nodeStates.big!.outputFile?.path).toBe('outputs/big.txt')
      expect(JSON.stringify(history).length).toBeLessThan(100_000)
      const file = await again.fetch(`/api/workflows/runs/${jobId}/output?path=outputs/big.txt`)
      expect(file.status).toBe(200)
      expect(file.headers.get('content-disposition')).toMatch(/^attachment/)
      expect(await file.text()).toBe(big)
      expect((await again.fetch(`/api/workflows/runs/${jobId}/output?path=../notes.txt`)).status).toBe(400)

      // It counts in the run's kept size (the history's caps bound it), not in the person's own
      // files (a conversation's workspace shows their total); it goes with the run.
      const thread = (await (await again.post('/api/threads', { title: 'files' })).json()).id as string
      expect((await again.json(`/api/threads/${thread}/workspace`)).usage.bytes).toBe(0)
      await expect.poll(async () => (await again.json(`/api/workflows/runs?workflow=${workflowId}`)).runs[0]?.sizeBytes ?? 0).toBeGreaterThan(5_000_000)
      const db = new BetterSqlite3(join((shared as Record<string, string>).NUXT_DATA_DIR!, 'or3.sqlite'), { readonly: true })
      const files = () => (db.prepare('SELECT count(*) AS n FROM workspace_files WHERE workspace_id = ?').get(`run:${jobId}`) as { n: number }).n
      try {
        expect(files()).toBe(1)
        expect((await again.fetch(`/api/workflows/runs/${jobId}`, { method: 'DELETE' })).status).toBeLessThan(300)
        expect(files()).toBe(0)
      } finally {
        db.close()
      }
    } finally {
      await second.stop()
    }
  })

  it('waits out a step\'s retry across SIGKILL: the next try comes once, when it was due, not sooner and not twice', async () => {
    const shared = env()
    const first = await servers.start(shared)
    const client = new SessionClient(first.url)
    const workflowId = await save(client, oneAgent('WAITING-STEP', { retries: 2, retry: { backoff: 'fixed', delaySeconds: 4 } }))
    const tries: number[] = []
    fake.script((request) => {
      if (!system(request).includes('WAITING-STEP')) return textReply('unexpected')
      tries.push(Date.now())
      return tries.length === 1 ? failsMidStream() : textReply('after the wait')
    })
    const jobId = await run(client, workflowId, 'go')
    // The failed try and when the next is due are stored before the wait begins.
    let retryAt = 0
    await expect.poll(async () => (retryAt = (await client.json(`/api/jobs/${jobId}`)).workflowState?.nodeStates?.step?.retryAt ?? 0), { timeout: 10_000 }).toBeGreaterThan(0)
    expect(retryAt - tries[0]!).toBeGreaterThanOrEqual(4000)

    const { second, again } = await killAndRestart(first, shared, client)
    try {
      const job = await waitForJobEnd(again, jobId, 30_000)
      expect(job).toMatchObject({ status: 'complete', content: 'after the wait', resumeCount: 1 })
      expect(job.workflowState!.nodeStates.step).toMatchObject({ status: 'completed', attempts: 1 })
      expect(tries).toHaveLength(2)
      expect(tries[1]!).toBeGreaterThanOrEqual(retryAt)
    } finally {
      await second.stop()
    }
  })

  it('starts a failed run\'s failure workflow once, with the failure as its inputs, though the server is SIGKILLed while it runs', async () => {
    // Sweeps every two seconds: a run whose end a crash left unkept is finished (and its handler checked) soon.
    const shared = { ...env(), NUXT_BACKGROUND_JOBS_JOB_TIMEOUT_MS: '8000' }
    const first = await servers.start(shared)
    const client = new SessionClient(first.url)
    const handlerId = await save(client, {
      version: 1,
      name: 'Page the on-call',
      defaultModel: MODEL,
      inputs: [{ name: 'error', type: 'long-text' }, { name: 'step', type: 'text' }, { name: 'run_id', type: 'text' }],
      nodes: [{ id: 'start', kind: 'start' }, { id: 'page', kind: 'agent', systemPrompt: 'HANDLER-STEP', prompt: 'Run {{inputs.run_id}} failed at {{inputs.step}}: {{inputs.error}}' }, { id: 'out', kind: 'output' }],
      edges: [{ from: 'start', to: 'page' }, { from: 'page', to: 'out' }],
    })
    // A handler that is not one of the person's workflows is refused when saved.
    const refused = await client.post('/api/workflows', { definition: { ...oneAgent('FAILING-STEP', {}), onFailure: { workflowId: 'someone-elses' } } })
    expect(refused.status).toBe(400)
    expect(await refused.text()).toMatch(/onFailure: there is no workflow “someone-elses” of yours/)
    const failingId = await save(client, { ...oneAgent('FAILING-STEP', {}), onFailure: { workflowId: handlerId } })
    const handlerRequests: RecordedRequest[] = []
    fake.script((request) => {
      if (system(request).includes('FAILING-STEP')) return { type: 'http-error', status: 402, body: { error: { code: 402, message: 'Insufficient credits' } } }
      handlerRequests.push(request)
      // The handler's first request hangs until the server dies; after the restart it answers.
      return handlerRequests.length === 1 ? { type: 'stream', steps: [{ chunk: roleChunk(fakeChunkMeta) }, { stall: true }] } : textReply('paged the on-call')
    })
    const failedId = await run(client, failingId, 'nightly numbers')
    await expect.poll(() => handlerRequests.length, { timeout: 15_000 }).toBe(1)

    const { second, again } = await killAndRestart(first, shared, client)
    try {
      const handlerRuns = async () => (await again.json(`/api/workflows/runs?workflowId=${handlerId}`)).runs as Array<{ jobId: string, status: string, startedVia: string, failureOf?: string }>
      await expect.poll(async () => (await handlerRuns()).map(item => item.status), { timeout: 30_000 }).toEqual(['complete'])
      // The failed run's end is kept only after its handler was checked: once it is, nothing more can start.
      await expect.poll(async () => (await again.json(`/api/workflows/runs?workflowId=${failingId}`)).runs.map((item: { status: string }) => item.status), { timeout: 30_000 }).toEqual(['error'])
      const [handlerRun] = await handlerRuns()
      expect(await handlerRuns()).toHaveLength(1)
      // Its step asked once before the kill and once after, when its run resumed.
      expect(handlerRequests).toHaveLength(2)
      expect(handlerRun).toMatchObject({ startedVia: 'failure', failureOf: failedId })
      const asked = String(handlerRequests.at(-1)!.body.messages.at(-1)?.content)
      expect(asked).toMatch(new RegExp(`^Run ${failedId} failed at step: Step "step" failed: .*insufficient credits \\(402\\)$`))
      // A run started by a failure handler has no handler of its own to start, and the failing workflow's page links the two.
      expect((await again.json(`/api/workflows/runs/${handlerRun!.jobId}`)).job.workflow.failureOf).toBe(failedId)
    } finally {
      await second.stop()
    }
  })

  it('completes after SIGKILL during its second node, without repeating the first node\'s model call; its webhook call retried with the same Idempotency-Key, at once and after the restart, answers with that run', async () => {
    const shared = env()
    const first = await servers.start(shared)
    const client = new SessionClient(first.url)
    const workflowId = await save(client, chain)
    scriptSlowChain()
    const { path } = await (await client.post(`/api/workflows/${workflowId}/webhook`, {})).json()
    const call = (url: string, key?: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) }, body: JSON.stringify({ prompt: 'the input' }) })
    expect((await call(`${first.url}${path}`, 'has spaces')).status).toBe(400)
    const before = fake.requests.length

    // Two deliveries of one call at once: one run, both told its id.
    const [one, two] = await Promise.all([call(`${first.url}${path}`, 'delivery-1'), call(`${first.url}${path}`, 'delivery-1')])
    expect([one.status, two.status].sort()).toEqual([200, 202])
    const jobId = (await one.json()).jobId
    expect((await two.json()).jobId).toBe(jobId)
    expect([one, two].find(answer => answer.status === 200)!.headers.get('idempotent-replayed')).toBe('true')
    await expect.poll(async () => (await client.json(`/api/jobs/${jobId}`)).workflowState?.nodeStates?.second?.status, { timeout: 10_000 }).toBe('running')

    // The server dies during the second step, before the sender heard back; the sender retries against the restarted server.
    const { second, again } = await killAndRestart(first, shared, client)
    try {
      const retry = await call(`${second.url}${path}`, 'delivery-1')
      expect(retry.status).toBe(200)
      expect((await retry.json()).jobId).toBe(jobId)
      const job = await waitForJobEnd(again, jobId, 30_000)
      expect(job).toMatchObject({ status: 'complete', content: 'the polished answer', resumeCount: 1 })
      expect(job.workflowState!.nodeStates).toMatchObject({ first: { status: 'completed', output: 'summary of the input' }, second: { status: 'completed' }, third: { status: 'completed' } })
      const requests = fake.requests.slice(before)
      expect(requests.filter(request => system(request).includes('STEP-ONE'))).toHaveLength(1)
      expect(requests.filter(request => system(request).includes('STEP-TWO'))).toHaveLength(2)
      expect(requests.filter(request => system(request).includes('STEP-THREE'))).toHaveLength(1)
      // Once more after it ended (answered from the job, then from the run history), and a new key starts a new run.
      expect((await (await call(`${second.url}${path}`, 'delivery-1')).json())).toMatchObject({ jobId, status: 'complete' })
      expect((await again.json(`/api/workflows/runs?workflowId=${workflowId}`)).runs.map((run: { jobId: string }) => run.jobId)).toEqual([jobId])
      const other = await call(`${second.url}${path}`, 'delivery-2')
      expect(other.status).toBe(202)
      expect((await other.json()).jobId).not.toBe(jobId)
    } finally {
      await second.stop()
    }
  })

})

describe('the run history\'s disk space', () => {
  it('gives back the space of 10,000 expired runs while another person\'s answer streams, who is answered throughout', async () => {
    // A year of runs, all past the retention, in the file before the server starts.
    const dataDir = dataDirs.fresh()
    const path = join(dataDir, 'or3.sqlite')
    const kept = createSqliteWorkflowRunStore({ path })
    const yearAgo = Date.now() - 400 * 86_400_000
    const content = 'step output '.repeat(1_700)
    for (let index = 0; index < 10_000; index++) {
      const run = keptRun(`old-run-${index}`, { startedAt: yearAgo + index, finishedAt: yearAgo + index + 1 })
      await kept.saveRun({ ...run, job: { ...run.job, content } })
    }
    await kept.close()
    const before = statSync(path).size
    // Sweeps every 2 s (a quarter of the job timeout) and gives space back every second.
    const app = await servers.start({ ...env(dataDir), NUXT_BACKGROUND_JOBS_JOB_TIMEOUT_MS: '8000', NUXT_BACKGROUND_JOBS_RECLAIM_SPACE_INTERVAL_MS: '1000', NUXT_DEMO_MODEL_TOKEN_DELAY_MS: '20' })
    try {
      const reader = new SessionClient(app.url)
      const jobId = await reader.startJob({ model: 'or3/offline-demo', messages: [{ role: 'user', content: 'Tell me a long story about a lighthouse keeper and the sea.' }] })
      const view = new JobView()
      const arrivals: number[] = []
      const applied = view.apply.bind(view)
      view.apply = (received) => {
        if (received.event === 'delta') arrivals.push(performance.now())
        applied(received)
      }
      const watching = watchJob(reader, jobId, view)
      await expect.poll(() => statSync(path).size, { timeout: 60_000, interval: 100 }).toBeLessThan(before / 10)
      // The answer went on meanwhile, and the server answers another request.
      expect((await reader.fetch('/api/health')).status).toBe(200)
      await watching
      expect(view.status).toBe('complete')
      expect(view.content.length).toBeGreaterThan(100)
      const longestGap = arrivals.slice(1).reduce((longest, at, index) => Math.max(longest, at - arrivals[index]!), 0)
      console.log(`Run history space: ${(before / 1e6).toFixed(1)} MB of 10,000 expired runs given back to ${(statSync(path).size / 1e6).toFixed(1)} MB; the longest pause between an answer's deltas meanwhile was ${longestGap.toFixed(0)} ms (one delta every 20 ms or so, batched)`)
    } finally {
      await app.stop()
    }
  })
})
