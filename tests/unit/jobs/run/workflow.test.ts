/**
 * A workflow's agent step is a checkpointed agent run nested in its node: checkpoints go into the
 * run state before its tools run, and a run resumed from them never runs a tool with side effects
 * twice (unit level, memory store, fake OpenRouter; the kill -9 version is in tests/e2e).
 */
import { beforeEach, describe, expect, it, vi } from 'vitest'
import { runWorkflowJob } from '../../../../server/lib/jobs/run/workflow'
import { JobLiveHub } from '../../../../server/lib/jobs/live-hub'
import { JobInputs } from '../../../../server/lib/jobs/waits/job-inputs'
import { registerServerTool } from '../../../../server/lib/tools/registry'
import { createMemoryJobStore } from '../../../../server/lib/stores/jobs/memory'
import { validateWorkflow } from '../../../../server/lib/workflows/validate'
import type { JobStore } from '../../../../server/lib/stores/jobs/job-store'
import type { BackgroundJob } from '../../../../shared/types/job'
import type { AgentStepCheckpoint, WorkflowState } from '../../../../shared/types/workflow'
import { textReply, toolCallReply, useFakeOpenRouter, type RecordedRequest } from '../../../support/fake-openrouter'
import { registerBuiltinToolsOnly } from '../../../support/upstream'
import { testServerConfig } from '../../../support/server-config'
import { processTools } from '../../../../server/lib/tools/run-tools'

const fake = useFakeOpenRouter()
const config = testServerConfig({ openrouter: { retryBaseDelayMs: 5 } })
const sendEmail = vi.fn(async (args: { to: string }) => `sent to ${args.to}`)
let store: JobStore
let hub: JobLiveHub

const definition = (() => {
  const checked = validateWorkflow({
    version: 1,
    name: 'Mailer',
    nodes: [{ id: 'start', kind: 'start' }, { id: 'mail', kind: 'agent', label: 'Mail', tools: ['send_email'], maxToolRounds: 2 }, { id: 'out', kind: 'output' }],
    edges: [{ from: 'start', to: 'mail' }, { from: 'mail', to: 'out' }],
  }, name => name === 'send_email')
  if (!checked.ok) throw new Error(JSON.stringify(checked.problems))
  return checked.workflow
})()

/** The model mails once, then says what the tool answered. */
function scriptMailThenReport(): void {
  fake.script((request: RecordedRequest) => {
    const last = request.body.messages.at(-1)!
    if (last.role === 'tool') return textReply(`Done: ${String(last.content)}`)
    return toolCallReply([{ id: 'mail_1', name: 'send_email', arguments: '{"to":"a@example.com"}' }], { text: 'Mailing.' })
  })
}

async function createJob(workflowState?: WorkflowState): Promise<BackgroundJob> {
  const job = await store.createJob({
    userId: 'user-1',
    threadId: 'workflow:w1',
    messageId: 'm1',
    type: 'workflow',
    model: 'workflow',
    request: { model: definition.defaultModel, messages: [{ role: 'user', content: 'go' }], fields: {}, workflow: { workflowId: 'w1', prompt: 'go', definition } },
  })
  if (workflowState) await store.updateRunState(job.id, { workflowState })
  return (await store.getJob(job.id))!
}

function run(job: BackgroundJob, signal = new AbortController().signal) {
  const inputs = new JobInputs({ store, hub, settings: { timeoutMs: 60_000, claimMs: 30_000, pollMs: 50 } })
  return runWorkflowJob({ tools: processTools, job, store, hub, config, signal, inputs, endpointFor: () => ({ baseUrl: fake.url, apiKey: 'sk-test', label: 'OpenRouter' }) })
}

/** A run that stopped inside the mail step, at `checkpoint`. */
function stoppedInStep(checkpoint: AgentStepCheckpoint): WorkflowState {
  return {
    workflowId: 'w1',
    workflowName: 'Mailer',
    executionOrder: ['start'],
    currentNodeId: 'mail',
    failedNodeId: null,
    startsRecorded: true,
    nodeStates: { start: { status: 'completed', output: 'go' }, mail: { status: 'running' }, out: { status: 'pending' } },
    agentSteps: { mail: checkpoint },
  }
}

const pendingRound = (started: string[]): AgentStepCheckpoint => ({
  messages: [{ role: 'user', content: 'go' }],
  rounds: 0,
  toolRounds: 0,
  contentLength: 0,
  reasoningLength: 0,
  content: 'Mailing.',
  pendingToolRound: { round: 1, assistant: { role: 'assistant', content: 'Mailing.', tool_calls: [{ id: 'mail_1', type: 'function', function: { name: 'send_email', arguments: '{"to":"a@example.com"}' } }] }, contentLength: 8, reasoningLength: 0, started },
  executions: [],
})

beforeEach(() => {
  registerBuiltinToolsOnly()
  registerServerTool({ type: 'function', function: { name: 'send_email', parameters: { type: 'object', properties: { to: { type: 'string' } } } }, runtime: 'server' }, sendEmail)
  sendEmail.mockClear()
  store = createMemoryJobStore()
  hub = new JobLiveHub({ batchingEnabled: false, graceMs: 10 })
  scriptMailThenReport()
})

describe('workflow agent steps, checkpointed', () => {
  it('stores the step\'s round and the call\'s start before the tool runs, and drops the checkpoint when the step ends', async () => {
    const job = await createJob()
    const seen: unknown[] = []
    sendEmail.mockImplementationOnce(async (args) => {
      seen.push((await store.getJob(job.id))!.workflowState?.agentSteps?.mail?.pendingToolRound)
      return `sent to ${args.to}`
    })
    expect(await run(job)).toBe('complete')
    expect(seen).toEqual([expect.objectContaining({ round: 1, started: ['mail_1'] })])
    const stored = (await store.getJob(job.id))!
    expect(stored.content).toBe('Mailing.\n\nDone: sent to a@example.com')
    expect(stored.workflowState?.agentSteps).toBeUndefined()
    // Viewers never see checkpoints.
    expect(hub.snapshot(job.id)?.workflowState?.agentSteps).toBeUndefined()
  })

  it('resumes a step stopped before its tool began: the tool runs once, the model is not asked for the round again', async () => {
    const job = await createJob(stoppedInStep(pendingRound([])))
    const before = fake.requests.length
    expect(await run(job)).toBe('complete')
    expect(sendEmail).toHaveBeenCalledTimes(1)
    const requests = fake.requests.slice(before)
    expect(requests).toHaveLength(1)
    expect(requests[0]!.body.messages.map(message => message.role)).toEqual(['user', 'assistant', 'tool'])
    expect((await store.getJob(job.id))!.content).toBe('Mailing.\n\nDone: sent to a@example.com')
  })

  it('resumes a step whose tool had begun: never run again, the model is told its outcome is unknown', async () => {
    const job = await createJob(stoppedInStep(pendingRound(['mail_1'])))
    expect(await run(job)).toBe('complete')
    expect(sendEmail).not.toHaveBeenCalled()
    expect((await store.getJob(job.id))!.content).toMatch(/Done: Error executing tool "send_email": the server restarted while this call was running/)
  })

  it('resumes a step whose tool had finished: its result is reused, the tool not run again', async () => {
    const finished = { ...pendingRound(['mail_1']), executions: [{ id: 'mail_1', name: 'send_email', arguments: '{"to":"a@example.com"}', result: 'sent before the crash', executionTimeMs: 3 }] }
    const job = await createJob(stoppedInStep(finished))
    expect(await run(job)).toBe('complete')
    expect(sendEmail).not.toHaveBeenCalled()
    expect((await store.getJob(job.id))!.content).toBe('Mailing.\n\nDone: sent before the crash')
  })

  it('on shutdown leaves the step running with its checkpoint, for the next start', async () => {
    const job = await createJob()
    const stop = new AbortController()
    sendEmail.mockImplementationOnce(async () => {
      stop.abort('shutdown')
      return 'sent'
    })
    expect(await run(job, stop.signal)).toBe('interrupted')
    const state = (await store.getJob(job.id))!.workflowState!
    expect(state.nodeStates.mail).toMatchObject({ status: 'running' })
    // The call was cut short by the stop: the round stays pending with the call marked begun.
    expect(state.agentSteps?.mail).toMatchObject({ toolRounds: 0, content: 'Mailing.', pendingToolRound: { round: 1, started: ['mail_1'] } })
    const resumed = (await store.getJob(job.id))!
    expect(await run(resumed)).toBe('complete')
    expect(sendEmail).toHaveBeenCalledTimes(1)
    expect((await store.getJob(job.id))!.content).toMatch(/^Mailing\.\n\nDone: Error executing tool "send_email": the server restarted/)
  })
})
