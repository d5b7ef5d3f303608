import { beforeEach, describe, expect, it, vi } from 'vitest'
import { runChatJob, type RunSteering } from '../../../../server/lib/jobs/run/chat'
import { JobLiveHub } from '../../../../server/lib/jobs/live-hub'
import { planResume, UNKNOWN_OUTCOME_ERROR, type ResumePlan } from '../../../../server/lib/jobs/resume-plan'
import { registerServerTool } from '../../../../server/lib/tools/registry'
import { createMemoryJobStore } from '../../../../server/lib/stores/jobs/memory'
import type { JobStore } from '../../../../server/lib/stores/jobs/job-store'
import type { BackgroundJob, JobCheckpoint } from '../../../../shared/types/job'
import { textReply, toolCallReply, useFakeOpenRouter } from '../../../support/fake-openrouter'
import { registerBuiltinToolsOnly } from '../../../support/upstream'
import { testServerConfig } from '../../../support/server-config'
import { processTools } from '../../../../server/lib/tools/run-tools'

const fake = useFakeOpenRouter()
let store: JobStore
let hub: JobLiveHub
const config = testServerConfig({ openrouter: { retryBaseDelayMs: 5 } })
const sendEmail = vi.fn(async (_args: { to?: string }) => 'sent')

beforeEach(() => {
  registerBuiltinToolsOnly()
  registerServerTool({ type: 'function', function: { name: 'send_email', parameters: { type: 'object', properties: { to: { type: 'string' } } } }, runtime: 'server' }, sendEmail)
  sendEmail.mockClear()
  store = createMemoryJobStore()
  hub = new JobLiveHub({ batchingEnabled: false, graceMs: 10 })
})

async function createJob(): Promise<BackgroundJob> {
  return store.createJob({
    userId: 'user-1',
    threadId: 'thread-1',
    messageId: 'message-1',
    type: 'chat',
    model: 'openai/gpt-4o-mini',
    request: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Do three things' }], fields: {} },
  })
}

function run(job: BackgroundJob, signal = new AbortController().signal, resume?: ResumePlan, steering?: RunSteering) {
  return runChatJob({ tools: processTools, job, store, hub, config, signal, resume, steering, endpoint: { baseUrl: fake.url, apiKey: 'sk-test', label: 'OpenRouter' } })
}

/** Every checkpoint the store is given from now on, in order. */
function recordCheckpoints(): JobCheckpoint[] {
  const checkpoints: JobCheckpoint[] = []
  const update = store.updateRunState.bind(store)
  store.updateRunState = async (id, change) => {
    if (change.checkpoint) checkpoints.push(structuredClone(change.checkpoint))
    return update(id, change)
  }
  return checkpoints
}

/** A queue with `waiting` handed to the run; what it was told went, in order. */
function steeringOf(waiting: Array<{ id: string, content: string }>): RunSteering & { delivered: ReturnType<typeof vi.fn>, passedBy: string[] } {
  const passedBy: string[] = []
  const delivered = vi.fn(async (ids: readonly string[]) => {
    for (const id of ids) waiting.splice(waiting.findIndex(item => item.id === id), 1)
  })
  return {
    passedBy,
    delivered,
    take: async (given) => {
      for (const item of waiting.filter(item => given.has(item.id))) {
        passedBy.push(item.id)
        waiting.splice(waiting.indexOf(item), 1)
      }
      return waiting.filter(item => !given.has(item.id))
    },
  }
}

describe('runChatJob', () => {
  it('runs the tool loop into the store: text, tool rounds, usage, and a checkpoint after each tool round', async () => {
    fake.script([
      toolCallReply([{ id: 'call_1', name: 'calculate', arguments: '{"expression":"2+3"}' }], { text: 'Let me check.' }),
      toolCallReply([{ id: 'call_2', name: 'calculate', arguments: '{"expression":"5*2"}' }]),
      textReply('It is 5.'),
    ])
    const job = await createJob()
    const checkpoints = recordCheckpoints()
    expect(await run(job)).toBe('complete')
    const stored = (await store.getJob(job.id))!
    expect(stored).toMatchObject({ status: 'complete', content: 'Let me check.\n\nIt is 5.', finishReason: 'stop' })
    expect(stored.toolRounds).toEqual([
      { round: 1, toolCalls: [expect.objectContaining({ id: 'call_1', result: '{"expression":"2+3","result":5}' })] },
      { round: 2, toolCalls: [expect.objectContaining({ id: 'call_2', result: '{"expression":"5*2","result":10}' })] },
    ])
    // Viewers see every call of the job, in order, with its status and timing; a late viewer's snapshot too.
    expect(stored.activeToolCalls.map(call => [call.id, call.round, call.status])).toEqual([['call_1', 1, 'completed'], ['call_2', 2, 'completed']])
    expect(stored.activeToolCalls[0]!.executionTimeMs).toBeTypeOf('number')
    expect(hub.snapshot(job.id)).toMatchObject({ toolRounds: stored.toolRounds, activeToolCalls: stored.activeToolCalls })
    expect(stored.usage?.promptTokens).toBeGreaterThan(0)
    expect(stored.checkpoint).toBeUndefined()
    // Before the tools ran: the pending round; after: the conversation with the results.
    expect(checkpoints[0]).toMatchObject({ rounds: 0, toolRounds: 0, pendingToolRound: { round: 1, contentLength: 13 } })
    expect(checkpoints[1]).toMatchObject({ rounds: 1, toolRounds: 1, contentLength: 13 })
    expect(checkpoints[1]!.pendingToolRound).toBeUndefined()
    expect(checkpoints[1]!.messages.map(message => message.role)).toEqual(['user', 'assistant', 'tool'])
    expect(checkpoints.at(-1)).toMatchObject({ rounds: 2, toolRounds: 2 })
    expect(checkpoints.at(-1)!.messages.map(message => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool'])
    // Nobody watched: a notification.
    expect(await store.notifications.list('user-1')).toEqual([expect.objectContaining({ jobId: job.id, kind: 'job-complete' })])
  })

  it('stops an answer at the content limit with a "too long" error, keeping exactly the text up to it', async () => {
    const text = Array.from({ length: 50 }, (_, index) => String(index % 10).repeat(100)).join('')
    fake.script([textReply(text, { pieceSize: 100, delayMs: 2 })])
    const job = await createJob()
    const small = testServerConfig({ openrouter: { retryBaseDelayMs: 5 }, limits: { jobContentChars: 1_000 } })
    const outcome = await runChatJob({ tools: processTools, job, store, hub, config: small, signal: new AbortController().signal, endpoint: { baseUrl: fake.url, apiKey: 'sk-test', label: 'OpenRouter' } })
    expect(outcome).toBe('error')
    const stored = (await store.getJob(job.id))!
    expect(stored.content).toBe(text.slice(0, 1_000))
    expect(stored.error).toMatchObject({ kind: 'too-long', message: expect.stringMatching(/passed 1,000 characters/), hint: expect.stringMatching(/NUXT_LIMITS_JOB_CONTENT_CHARS/) })
    expect(hub.snapshot(job.id)?.content).toBe(text.slice(0, 1_000))
  })

  it('stores an upstream error in words, with its status and hint', async () => {
    fake.script([{ type: 'http-error', status: 402, body: { error: { code: 402, message: 'Insufficient credits' } } }])
    const job = await createJob()
    expect(await run(job)).toBe('error')
    expect(await store.getJob(job.id)).toMatchObject({ status: 'error', error: { status: 402, kind: expect.any(String), message: expect.stringMatching(/402/), hint: expect.any(String) } })
  })

  it('on shutdown keeps the job streaming, with what streamed so far saved', async () => {
    fake.script([textReply('A long answer that is cut short by a shutdown.', { pieceSize: 2, delayMs: 10 })])
    const job = await createJob()
    const controller = new AbortController()
    const outcome = run(job, controller.signal)
    await vi.waitFor(() => expect(hub.snapshot(job.id)!.content.length).toBeGreaterThan(6), { timeout: 30_000 })
    controller.abort('shutdown')
    expect(await outcome).toBe('interrupted')
    const stored = (await store.getJob(job.id))!
    expect(stored.status).toBe('streaming')
    expect(stored.content.length).toBeGreaterThan(6)
    expect(hub.has(job.id)).toBe(false)
  })

  it('resumes an interrupted tool round: finished calls are reused, idempotent ones re-run, others reported as unknown', async () => {
    const job = await createJob()
    const assistant = {
      role: 'assistant' as const,
      content: 'Working on it.',
      tool_calls: [
        { id: 'done_before', type: 'function' as const, function: { name: 'get_current_weather', arguments: '{"location":"Paris"}' } },
        { id: 'rerun_me', type: 'function' as const, function: { name: 'calculate', arguments: '{"expression":"6*7"}' } },
        { id: 'unknown', type: 'function' as const, function: { name: 'send_email', arguments: '{"to":"a@example.com"}' } },
      ],
    }
    await store.updateJob(job.id, { contentChunk: 'Working on it. (and text of a round the crash cut off)' })
    await store.updateRunState(job.id, { toolExecution: { round: 1, execution: { id: 'done_before', name: 'get_current_weather', arguments: '{"location":"Paris"}', result: 'sunny from before the crash', executionTimeMs: 4 } } })
    await store.updateRunState(job.id, {
      checkpoint: { messages: [{ role: 'user', content: 'Do three things' }], rounds: 0, toolRounds: 0, contentLength: 0, reasoningLength: 0, pendingToolRound: { round: 1, assistant, contentLength: 14, reasoningLength: 0 } },
    })
    const interrupted = (await store.getJob(job.id))!
    const plan = planResume(interrupted)
    expect(plan).toMatchObject({ rounds: 1, toolRounds: 0, content: 'Working on it.' })

    fake.script([textReply('All three done.')])
    const before = fake.requests.length
    expect(await run(interrupted, undefined, plan as ResumePlan)).toBe('complete')

    expect(sendEmail).not.toHaveBeenCalled()
    const sent = fake.requests[before]!.body.messages
    expect(sent.map(message => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool'])
    expect(sent.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'done_before', content: 'sunny from before the crash' },
      { role: 'tool', tool_call_id: 'rerun_me', content: '{"expression":"6*7","result":42}' },
      { role: 'tool', tool_call_id: 'unknown', content: `Error executing tool "send_email": ${UNKNOWN_OUTCOME_ERROR}` },
    ])
    const stored = (await store.getJob(job.id))!
    expect(stored).toMatchObject({ status: 'complete', content: 'Working on it.\n\nAll three done.', resumeCount: 1 })
    expect(stored.toolRounds[0]!.toolCalls.map(call => call.id).sort()).toEqual(['done_before', 'rerun_me', 'unknown'])
  })
})

describe('exactly once across a restart', () => {
  it('stores the round and the start of a call with side effects before the call runs', async () => {
    fake.script([toolCallReply([{ id: 'mail_1', name: 'send_email', arguments: '{"to":"a@example.com"}' }]), textReply('Sent.')])
    const job = await createJob()
    const seen: unknown[] = []
    sendEmail.mockImplementationOnce(async () => {
      seen.push((await store.getJob(job.id))!.checkpoint?.pendingToolRound)
      return 'sent'
    })
    expect(await run(job)).toBe('complete')
    expect(seen).toEqual([expect.objectContaining({ round: 1, started: ['mail_1'], assistant: expect.objectContaining({ tool_calls: [expect.objectContaining({ id: 'mail_1' })] }) })])
    // Once the round completed, its checkpoint has no round under way.
    expect((await store.getJob(job.id))!.status).toBe('complete')
  })

  it('runs a call with side effects that had not begun, and reports (never re-runs) one that had', async () => {
    const job = await createJob()
    const assistant = {
      role: 'assistant' as const,
      content: null,
      tool_calls: [
        { id: 'begun', type: 'function' as const, function: { name: 'send_email', arguments: '{"to":"a@example.com"}' } },
        { id: 'not_begun', type: 'function' as const, function: { name: 'send_email', arguments: '{"to":"b@example.com"}' } },
      ],
    }
    await store.updateRunState(job.id, {
      checkpoint: { messages: [{ role: 'user', content: 'Do three things' }], rounds: 0, toolRounds: 0, contentLength: 0, reasoningLength: 0, pendingToolRound: { round: 1, assistant, contentLength: 0, reasoningLength: 0, started: ['begun'] } },
    })
    const interrupted = (await store.getJob(job.id))!
    fake.script([textReply('One sent, one unknown.')])
    const before = fake.requests.length
    expect(await run(interrupted, undefined, planResume(interrupted) as ResumePlan)).toBe('complete')
    expect(sendEmail).toHaveBeenCalledTimes(1)
    expect(sendEmail.mock.calls[0]![0]).toEqual({ to: 'b@example.com' })
    expect(fake.requests[before]!.body.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 'begun', content: `Error executing tool "send_email": ${UNKNOWN_OUTCOME_ERROR}` },
      { role: 'tool', tool_call_id: 'not_begun', content: 'sent' },
    ])
  })

  it('stores a finished round before it asks the model about its results (a kill -9 after that request finds the call done)', async () => {
    const log: string[] = []
    fake.script((_request, index) => {
      log.push(`model request ${index + 1}`)
      return index === 0 ? toolCallReply([{ id: 'mail_1', name: 'send_email', arguments: '{"to":"a@example.com"}' }]) : textReply('Sent.')
    })
    const job = await createJob()
    const update = store.updateRunState.bind(store)
    store.updateRunState = async (id, change) => {
      const finishedRound = change.checkpoint && change.checkpoint.toolRounds === 1 && !change.checkpoint.pendingToolRound
      // The round's write is slow: it lands when the model is asked again (what happened before the
      // fix) or, at the latest, a little later, so a request that waits for it comes after it.
      if (finishedRound) {
        const asked = log.length
        await vi.waitFor(() => expect(log.length).toBeGreaterThan(asked), { timeout: 300, interval: 5 }).catch(() => {})
      }
      const stored = await update(id, change)
      if (finishedRound) log.push('round 1 stored')
      return stored
    }
    expect(await run(job)).toBe('complete')
    expect(sendEmail).toHaveBeenCalledTimes(1)
    expect(log).toEqual(['model request 1', 'round 1 stored', 'model request 2'])
  })

  it('does not run a call with side effects whose start could not be stored', async () => {
    fake.script([toolCallReply([{ id: 'mail_1', name: 'send_email', arguments: '{"to":"a@example.com"}' }]), textReply('Could not.')])
    const job = await createJob()
    const update = store.updateRunState.bind(store)
    store.updateRunState = async (id, change) => (change.checkpoint?.pendingToolRound?.started?.length ? false : update(id, change))
    expect(await run(job)).toBe('complete')
    expect(sendEmail).not.toHaveBeenCalled()
    expect((await store.getJob(job.id))!.toolRounds[0]!.toolCalls[0]!.result).toMatch(/could not record that this call was starting/)
  })
})

describe('steering a running answer', () => {
  it('checkpoints a steer before the model reads it, shows it to viewers and on the job, then takes it from the queue', async () => {
    const waiting: Array<{ id: string, content: string }> = []
    fake.script([
      toolCallReply([{ id: 'call_1', name: 'calculate', arguments: '{"expression":"2+3"}' }], { text: 'Searching.' }),
      textReply('Five.'),
    ])
    const job = await createJob()
    const checkpoints = recordCheckpoints()
    // Handed over while the first round's tool runs.
    registerServerTool({ type: 'function', function: { name: 'calculate', parameters: { type: 'object', properties: {} } }, runtime: 'server' }, () => {
      waiting.splice(0, 0, { id: 'steer-1', content: 'use what you have' })
      return '5'
    }, { override: true })
    const queue = steeringOf(waiting)
    expect(await run(job, undefined, undefined, queue)).toBe('complete')
    const withSteer = checkpoints.find(checkpoint => checkpoint.steered?.length)!
    expect(withSteer.steered).toEqual([{ id: 'steer-1', content: 'use what you have', round: 2, contentOffset: 'Searching.'.length, at: expect.any(Number) }])
    expect(withSteer.messages.at(-1)).toEqual({ role: 'user', content: 'use what you have' })
    expect(queue.delivered).toHaveBeenCalledWith(['steer-1'])
    expect(waiting).toEqual([])
    const stored = (await store.getJob(job.id))!
    expect(stored.steers).toEqual(withSteer.steered)
    expect(stored.content).toBe('Searching.\n\nFive.')
    expect(fake.requests.at(-1)!.body.messages.at(-1)).toEqual({ role: 'user', content: 'use what you have' })
  })

  it('a resumed run shows the steers its checkpoint has, and passes by (taking out) their queue entries instead of giving them again', async () => {
    const job = await createJob()
    const steer = { id: 'steer-1', content: 'use what you have', round: 2, contentOffset: 0, at: 1 }
    const checkpoint: JobCheckpoint = { messages: [{ role: 'user', content: 'Do three things' }, { role: 'user', content: 'use what you have' }], rounds: 1, toolRounds: 0, contentLength: 0, reasoningLength: 0, steered: [steer] }
    await store.updateRunState(job.id, { checkpoint })
    const plan = planResume((await store.getJob(job.id))!) as ResumePlan
    expect(plan.steered).toEqual([steer])
    const waiting = [{ id: 'steer-1', content: 'use what you have' }]
    const queue = steeringOf(waiting)
    fake.script([textReply('Done.')])
    expect(await run((await store.getJob(job.id))!, undefined, plan, queue)).toBe('complete')
    expect(queue.passedBy).toEqual(['steer-1'])
    const sent = fake.requests.at(-1)!.body.messages
    expect(sent.filter(message => message.role === 'user' && message.content === 'use what you have')).toHaveLength(1)
    expect((await store.getJob(job.id))!.steers).toEqual([steer])
  })
})

describe('planResume', () => {
  it('starts over from the request when no tool round completed, and refuses jobs it cannot resume', async () => {
    const job = await createJob()
    await store.updateJob(job.id, { contentChunk: 'half an answer' })
    expect(planResume((await store.getJob(job.id))!)).toEqual({ messages: [{ role: 'user', content: 'Do three things' }], rounds: 0, toolRounds: 0, content: '', reasoning: '' })
    const workflow = await store.createJob({ userId: 'u', threadId: 't', messageId: 'm', type: 'workflow', model: 'workflow' })
    expect(planResume(workflow)).toHaveProperty('error')
  })
})
