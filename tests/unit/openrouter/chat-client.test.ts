import { beforeEach, describe, expect, it, vi } from 'vitest'
import { errorChunk, finishChunk, roleChunk, textChunk, toolCallArgumentsChunk, toolCallOpenChunk, usageChunk } from '../../../server/lib/openrouter/chunks'
import { streamChatCompletion, type ChatClientOptions, type ChatEndpoint } from '../../../server/lib/openrouter/chat-client'
import type { OpenRouterError } from '../../../server/lib/openrouter/errors'
import { fetchWithRetry } from '../../../server/lib/openrouter/fetch-with-retry'
import type { ChatCompletionRequest, ChatStreamEvent, StreamedToolCall } from '../../../server/lib/openrouter/types'
import {
  fakeChunkMeta as meta,
  midStreamErrorReply,
  textReply,
  toolCallReply,
  useFakeOpenRouter,
  type FakeReply,
  type StreamStep,
} from '../../support/fake-openrouter'
import { freePort } from '../../support/free-port'

const fake = useFakeOpenRouter()
let endpoint: ChatEndpoint

const clientOptions: ChatClientOptions = {
  retry: { maxRetries: 1, baseDelayMs: 5, maxRetryAfterMs: 2_000, headersTimeoutMs: 400 },
  idleTimeoutMs: 400,
  appUrl: 'https://chat.example.com',
  appTitle: 'OR3 Chat',
}

const request: ChatCompletionRequest = { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream: true }

async function collect(options: { signal?: AbortSignal, abortAfterText?: AbortController } = {}): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = []
  for await (const event of streamChatCompletion(endpoint, request, { ...clientOptions, signal: options.signal })) {
    events.push(event)
    if (options.abortAfterText && event.type === 'text-delta') options.abortAfterText.abort()
  }
  return events
}

const textOf = (events: ChatStreamEvent[]) => events.flatMap(event => (event.type === 'text-delta' ? [event.text] : [])).join('')
const toolCallsOf = (events: ChatStreamEvent[]): StreamedToolCall[] => events.flatMap(event => (event.type === 'tool-call' ? [event.toolCall] : []))
const finishOf = (events: ChatStreamEvent[]) => events.at(-1) as Extract<ChatStreamEvent, { type: 'finish' }>
const errorOf = (events: ChatStreamEvent[]) => (events.find(event => event.type === 'error') as { error: OpenRouterError } | undefined)?.error

function stream(...steps: StreamStep[]): FakeReply {
  return { type: 'stream', steps }
}

beforeEach(() => {
  endpoint = { baseUrl: fake.url, apiKey: 'sk-or-test-key', label: 'OpenRouter' }
})

describe('request', () => {
  it('posts the body to {baseUrl}/chat/completions with auth and attribution headers', async () => {
    fake.script([textReply('ok')])
    await collect()
    const [recorded] = fake.requests.slice(-1)
    expect(recorded!.path).toBe('/chat/completions')
    expect(recorded!.body).toEqual(request)
    expect(recorded!.headers.authorization).toBe('Bearer sk-or-test-key')
    expect(recorded!.headers['http-referer']).toBe('https://chat.example.com')
    expect(recorded!.headers['x-openrouter-title']).toBe('OR3 Chat')
    expect(recorded!.headers['x-title']).toBe('OR3 Chat')
    expect(recorded!.headers['content-type']).toBe('application/json')
  })

  it('works against a base URL with a trailing slash and without a key (local servers)', async () => {
    endpoint = { baseUrl: `${fake.url}/`, label: 'localhost' }
    fake.script([textReply('ok')])
    expect(textOf(await collect())).toBe('ok')
    expect(fake.requests.at(-1)!.headers.authorization).toBeUndefined()
  })
})

describe('streaming', () => {
  it('yields text deltas in order, usage, and finish; the generation id first', async () => {
    fake.script([textReply('The quick brown fox jumps over the lazy dog.', { pieceSize: 2, usage: { prompt: 12, completion: 9, cost: 0.0003 } })])
    const events = await collect()
    expect(events[0]).toEqual({ type: 'response-start', generationId: 'gen-fake-1' })
    expect(textOf(events)).toBe('The quick brown fox jumps over the lazy dog.')
    expect(events.filter(event => event.type === 'text-delta').length).toBe(22)
    expect(events.find(event => event.type === 'usage')).toEqual({
      type: 'usage',
      usage: { promptTokens: 12, completionTokens: 9, totalTokens: 21, cachedTokens: 0, reasoningTokens: 0, cost: 0.0003 },
    })
    expect(finishOf(events)).toEqual({ type: 'finish', finishReason: 'stop', nativeFinishReason: 'stop' })
  })

  it('reports length as the finish reason when the answer was cut', async () => {
    fake.script([textReply('truncat', { finishReason: 'length' })])
    expect(finishOf(await collect()).finishReason).toBe('length')
  })

  it('keeps reasoning apart from the answer and collects reasoning_details to send back', async () => {
    fake.script([stream(
      { chunk: roleChunk(meta) },
      { chunk: { choices: [{ index: 0, delta: { reasoning: 'Think', reasoning_details: [{ type: 'reasoning.text', text: 'Think', index: 0 }] } }] } },
      { chunk: { choices: [{ index: 0, delta: { reasoning: 'ing…', reasoning_details: [{ type: 'reasoning.text', text: 'ing…', index: 0 }] } }] } },
      { chunk: { choices: [{ index: 0, delta: { reasoning_details: [{ type: 'reasoning.encrypted', data: 'xyz', index: 1 }] } }] } },
      { chunk: textChunk(meta, 'Answer') },
      { chunk: finishChunk(meta, 'stop') },
      { done: true },
    )])
    const events = await collect()
    expect(textOf(events)).toBe('Answer')
    expect(events.filter(event => event.type === 'reasoning-delta').map(event => (event as { text: string }).text)).toEqual(['Think', 'ing…'])
    expect(events.find(event => event.type === 'reasoning-details')).toEqual({
      type: 'reasoning-details',
      details: [{ type: 'reasoning.text', text: 'Thinking…', index: 0 }, { type: 'reasoning.encrypted', data: 'xyz', index: 1 }],
    })
  })

  it('accumulates fragmented tool calls and emits them complete, then finish tool_calls', async () => {
    fake.script([toolCallReply([{ id: 'call_1', name: 'get_current_weather', arguments: '{"location":"Paris, France","unit":"celsius"}' }], { pieceSize: 3 })])
    const events = await collect()
    expect(toolCallsOf(events)).toEqual([{ id: 'call_1', name: 'get_current_weather', arguments: '{"location":"Paris, France","unit":"celsius"}', index: 0 }])
    expect(finishOf(events).finishReason).toBe('tool_calls')
  })

  it('separates parallel calls whose fragments interleave', async () => {
    fake.script([toolCallReply([
      { id: 'call_1', name: 'get_weather', arguments: '{"city":"Tokyo"}' },
      { id: 'call_2', name: 'get_time', arguments: '{"zone":"UTC"}' },
    ], { interleave: true, pieceSize: 4 })])
    expect(toolCallsOf(await collect())).toEqual([
      { id: 'call_1', name: 'get_weather', arguments: '{"city":"Tokyo"}', index: 0 },
      { id: 'call_2', name: 'get_time', arguments: '{"zone":"UTC"}', index: 1 },
    ])
  })

  it('accepts a non-streamed JSON answer from a server that ignores stream: true', async () => {
    fake.script([{ type: 'json', body: { choices: [{ index: 0, message: { role: 'assistant', content: 'whole answer' }, finish_reason: 'stop' }], usage: { prompt_tokens: 3, completion_tokens: 2 } } }])
    const events = await collect()
    expect(textOf(events)).toBe('whole answer')
    expect(finishOf(events).finishReason).toBe('stop')
  })
})

describe('quirks of real traffic (docs: openrouter-wire-format)', () => {
  it('1: skips SSE comment keep-alives before and between events', async () => {
    fake.script([stream(
      { comment: 'OPENROUTER PROCESSING' },
      { comment: 'OPENROUTER PROCESSING' },
      { chunk: roleChunk(meta) },
      { comment: 'OPENROUTER PROCESSING' },
      { chunk: textChunk(meta, 'Hel') },
      { raw: ': OPENROUTER PROCESSING\n\n' },
      { chunk: textChunk(meta, 'lo') },
      { chunk: finishChunk(meta, 'stop') },
      { done: true },
    )])
    const events = await collect()
    expect(textOf(events)).toBe('Hello')
    expect(errorOf(events)).toBeUndefined()
  })

  it('2: empty role deltas, repeated roles and null content produce no events', async () => {
    fake.script([stream(
      { chunk: roleChunk(meta) },
      { chunk: roleChunk(meta) },
      { chunk: { choices: [{ index: 0, delta: { role: 'assistant', content: null } }] } },
      { chunk: textChunk(meta, 'x') },
      { chunk: { choices: [{ index: 0, delta: {} }] } },
      { chunk: finishChunk(meta, 'stop') },
      { done: true },
    )])
    const events = await collect()
    expect(events.map(event => event.type)).toEqual(['response-start', 'text-delta', 'finish'])
  })

  it('3: keys fragments by index, not id (the id is only on the first fragment)', async () => {
    fake.script([stream(
      { chunk: toolCallOpenChunk(meta, 0, 'call_a', 'calculate') },
      { chunk: toolCallArgumentsChunk(meta, 0, '{"expression":') },
      { chunk: { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: '', function: { arguments: '"1+1"}' } }] } }] } },
      { chunk: finishChunk(meta, 'tool_calls') },
      { done: true },
    )])
    expect(toolCallsOf(await collect())).toEqual([{ id: 'call_a', name: 'calculate', arguments: '{"expression":"1+1"}', index: 0 }])
  })

  it('4: empty or missing arguments mean {}', async () => {
    fake.script([stream(
      { chunk: toolCallOpenChunk(meta, 0, 'call_a', 'get_current_time') },
      { chunk: { choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_current_time' } }] } }] } },
      { chunk: finishChunk(meta, 'tool_calls') },
      { done: true },
    )])
    expect(toolCallsOf(await collect()).map(call => call.arguments)).toEqual(['{}', '{}'])
  })

  it('5: without index, a fragment with an id opens a call and others continue the last one', async () => {
    fake.script([stream(
      { chunk: { choices: [{ delta: { tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'first', arguments: '{"a":' } }] } }] } },
      { chunk: { choices: [{ delta: { tool_calls: [{ function: { arguments: '1}' } }] } }] } },
      { chunk: { choices: [{ delta: { tool_calls: [{ id: 'call_b', type: 'function', function: { name: 'second', arguments: '' } }] } }] } },
      { chunk: { choices: [{ delta: { tool_calls: [{ function: { arguments: '{"b":2}' } }] } }] } },
      { chunk: finishChunk(meta, 'tool_calls') },
      { done: true },
    )])
    expect(toolCallsOf(await collect())).toEqual([
      { id: 'call_a', name: 'first', arguments: '{"a":1}', index: 0 },
      { id: 'call_b', name: 'second', arguments: '{"b":2}', index: 1 },
    ])
  })

  it('6: empty, null and duplicated ids become unique ids', async () => {
    fake.script([stream(
      { chunk: { choices: [{ index: 0, delta: { tool_calls: [{ index: 0, id: '', type: 'function', function: { name: 'a', arguments: '{}' } }] } }] } },
      { chunk: { choices: [{ index: 0, delta: { tool_calls: [{ index: 1, id: null, type: 'function', function: { name: 'b', arguments: '{}' } }] } }] } },
      { chunk: { choices: [{ index: 0, delta: { tool_calls: [{ index: 2, id: 'dup', type: 'function', function: { name: 'c', arguments: '{}' } }] } }] } },
      { chunk: { choices: [{ index: 0, delta: { tool_calls: [{ index: 3, id: 'dup', type: 'function', function: { name: 'd', arguments: '{}' } }] } }] } },
      { chunk: finishChunk(meta, 'tool_calls') },
      { done: true },
    )])
    const calls = toolCallsOf(await collect())
    expect(calls.map(call => call.name)).toEqual(['a', 'b', 'c', 'd'])
    expect(calls[2]!.id).toBe('dup')
    const ids = calls.map(call => call.id)
    expect(new Set(ids).size).toBe(4)
    for (const id of ids) expect(id).toMatch(/^(dup|call_[a-f0-9]{24})$/)
  })

  it('6b: providers that number every call 0 still give separate calls', async () => {
    fake.script([stream(
      { chunk: toolCallOpenChunk(meta, 0, 'call_a', 'first') },
      { chunk: toolCallArgumentsChunk(meta, 0, '{}') },
      { chunk: toolCallOpenChunk(meta, 0, 'call_b', 'second') },
      { chunk: toolCallArgumentsChunk(meta, 0, '{"x":1}') },
      { chunk: finishChunk(meta, 'tool_calls') },
      { done: true },
    )])
    expect(toolCallsOf(await collect()).map(call => [call.id, call.name, call.arguments])).toEqual([['call_a', 'first', '{}'], ['call_b', 'second', '{"x":1}']])
  })

  it.each([
    ['"stop"', 'stop' as const],
    ['null (no finishing chunk at all)', null],
  ])('7: tool calls that end with finish_reason %s still end the round in tool_calls', async (_label, reason) => {
    fake.script([toolCallReply([{ id: 'call_1', name: 'calculate', arguments: '{"expression":"2+2"}' }], { finishReason: reason })])
    const events = await collect()
    expect(toolCallsOf(events)).toHaveLength(1)
    expect(finishOf(events).finishReason).toBe('tool_calls')
    expect(errorOf(events)).toBeUndefined()
  })

  it('8: chunks with choices: [] (usage, some errors) are handled without indexing choices[0]', async () => {
    fake.script([stream(
      { chunk: { choices: [] } },
      { chunk: textChunk(meta, 'hi') },
      { chunk: finishChunk(meta, 'stop') },
      { chunk: usageChunk(meta, { prompt: 1, completion: 1 }) },
      { done: true },
    )])
    const events = await collect()
    expect(textOf(events)).toBe('hi')
    expect(events.some(event => event.type === 'usage')).toBe(true)
  })

  it.each([
    ['a numeric code', 502, /OpenRouter: model provider is down or sent an invalid answer \(502\)/],
    ['a string code', 'server_error', /OpenRouter: Provider returned error \(server_error\)/],
  ])('9: a mid-stream error chunk with %s keeps the partial text and records the error', async (_label, code, message) => {
    fake.script([midStreamErrorReply('Partial answer', code, 'Provider returned error')])
    const events = await collect()
    expect(textOf(events)).toBe('Partial answer')
    expect(errorOf(events)?.message).toMatch(message)
    expect(errorOf(events)?.upstreamMessage).toBe('Provider returned error')
    expect(finishOf(events).finishReason).toBe('error')
  })

  it('9b: an error chunk with choices: [] is an error too', async () => {
    fake.script([stream({ chunk: textChunk(meta, 'so far') }, { chunk: { choices: [], error: { code: 429, message: 'Rate limit exceeded upstream' } } }, { done: true })])
    const events = await collect()
    expect(textOf(events)).toBe('so far')
    expect(errorOf(events)?.kind).toBe('rate_limited')
  })

  it('10: a stream that ends without [DONE] or a finish is an error, and the partial text is kept', async () => {
    fake.script([stream({ chunk: roleChunk(meta) }, { chunk: textChunk(meta, 'half an ans') })])
    const events = await collect()
    expect(textOf(events)).toBe('half an ans')
    expect(errorOf(events)?.kind).toBe('stream_interrupted')
    expect(finishOf(events).finishReason).toBe('error')
  })

  it('10b: a socket destroyed mid-stream is an error, and the partial text is kept', async () => {
    fake.script([stream({ chunk: textChunk(meta, 'before the cut') }, { delayMs: 20 }, { destroy: true })])
    const events = await collect()
    expect(textOf(events)).toBe('before the cut')
    expect(errorOf(events)?.kind).toBe('stream_interrupted')
    expect(finishOf(events).finishReason).toBe('error')
  })

  it('10c: a finished answer whose [DONE] never came is accepted', async () => {
    fake.script([stream({ chunk: textChunk(meta, 'complete') }, { chunk: finishChunk(meta, 'stop') })])
    const events = await collect()
    expect(errorOf(events)).toBeUndefined()
    expect(finishOf(events).finishReason).toBe('stop')
  })

  it('11: invalid JSON in accumulated arguments is passed on as is (the registry reports it to the model)', async () => {
    fake.script([toolCallReply([{ id: 'call_1', name: 'calculate', arguments: '{"expression": "1+' }])])
    expect(toolCallsOf(await collect())[0]!.arguments).toBe('{"expression": "1+')
  })

  it('12: a 200 JSON body with error and no choices is an error', async () => {
    fake.script([{ type: 'json', body: { error: { code: 402, message: 'This free model needs credits today' } } }])
    const events = await collect()
    expect(errorOf(events)?.message).toBe('OpenRouter: insufficient credits (402)')
    expect(errorOf(events)?.upstreamMessage).toBe('This free model needs credits today')
    expect(finishOf(events).finishReason).toBe('error')
  })
})

describe('errors before the stream and retries', () => {
  it.each([
    [400, 'bad request'],
    [401, 'invalid or missing API key'],
    [402, 'insufficient credits'],
    [403, 'request refused (moderation or permissions)'],
  ])('never retries %s and says "OpenRouter: … (status)" with the upstream message', async (status, phrase) => {
    const before = fake.requests.length
    fake.script([{ type: 'http-error', status, body: { error: { code: status, message: `upstream says ${status}` } } }, textReply('must not be reached')])
    const events = await collect()
    expect(fake.requests.length - before).toBe(1)
    const error = errorOf(events)!
    expect(error.message).toBe(`OpenRouter: ${phrase} (${status})`)
    expect(error.status).toBe(status)
    expect(error.upstreamMessage).toBe(`upstream says ${status}`)
    expect(error.hint).toBeTypeOf(status === 400 ? 'object' : 'string')
    expect(finishOf(events).finishReason).toBe('error')
  })

  it.each([500, 502, 524])('retries a %s once and then succeeds', async (status) => {
    const before = fake.requests.length
    fake.script([{ type: 'http-error', status }, textReply('second time lucky')])
    const events = await collect()
    expect(fake.requests.length - before).toBe(2)
    expect(textOf(events)).toBe('second time lucky')
  })

  it('gives up after one retry of a 5xx, with the upstream message', async () => {
    const before = fake.requests.length
    fake.script([{ type: 'http-error', status: 502, body: { error: { code: 502, message: 'Upstream overloaded' } } }, { type: 'http-error', status: 502, body: { error: { code: 502, message: 'Still overloaded' } } }, textReply('never')])
    const error = errorOf(await collect())!
    expect(fake.requests.length - before).toBe(2)
    expect(error).toMatchObject({ status: 502, upstreamMessage: 'Still overloaded', kind: 'upstream_unavailable' })
  })

  it('retries a dropped connection once', async () => {
    const before = fake.requests.length
    fake.script([{ type: 'drop-connection' }, textReply('reconnected')])
    expect(textOf(await collect())).toBe('reconnected')
    expect(fake.requests.length - before).toBe(2)
  })

  it('reports an unreachable server in plain words', async () => {
    const port = await freePort() // free, so nothing listens there
    endpoint = { baseUrl: `http://127.0.0.1:${port}/api/v1`, label: `127.0.0.1:${port}` }
    const error = errorOf(await collect())!
    expect(error.kind).toBe('upstream_unavailable')
    expect(error.message).toMatch(new RegExp(`^127\\.0\\.0\\.1:${port}: could not connect \\(.*ECONNREFUSED.*\\)$`))
  })

  it('stops waiting for headers at the deadline (and retries once)', async () => {
    const before = fake.requests.length
    fake.script([{ type: 'stall-headers' }, { type: 'stall-headers' }])
    const error = errorOf(await collect())!
    expect(error.kind).toBe('timeout')
    expect(error.message).toBe('OpenRouter: no response within 400 ms')
    expect(fake.requests.length - before).toBe(2)
  })

  it('ends a stalled stream at the idle deadline, keeping the partial text', async () => {
    fake.script([stream({ chunk: textChunk(meta, 'and then') }, { stall: true })])
    const events = await collect()
    expect(textOf(events)).toBe('and then')
    expect(errorOf(events)?.kind).toBe('timeout')
    expect(finishOf(events).finishReason).toBe('error')
    expect((await fake.settled(fake.requests.length - 1)).clientDisconnected).toBe(true)
  })

  it('keep-alive comments count as life: a slow but talking upstream is not cut', async () => {
    const keepAlives: StreamStep[] = Array.from({ length: 6 }, () => [{ delayMs: 150 }, { comment: 'OPENROUTER PROCESSING' }] as StreamStep[]).flat()
    fake.script([stream({ chunk: roleChunk(meta) }, ...keepAlives, { chunk: textChunk(meta, 'worth the wait') }, { chunk: finishChunk(meta, 'stop') }, { done: true })])
    const events = await collect()
    expect(textOf(events)).toBe('worth the wait')
    expect(errorOf(events)).toBeUndefined()
  })
})

describe('fetchWithRetry: Retry-After', () => {
  const policy = { maxRetries: 1, baseDelayMs: 5, maxRetryAfterMs: 5_000, headersTimeoutMs: 1_000 }

  async function fetchRecordingSleeps(): Promise<{ sleeps: number[], outcome: Response | OpenRouterError }> {
    const sleeps: number[] = []
    const sleep = async (ms: number) => { sleeps.push(ms) }
    try {
      const response = await fetchWithRetry(`${fake.url}/chat/completions`, { method: 'POST', body: '{}' }, { label: 'OpenRouter', policy, sleep })
      return { sleeps, outcome: response }
    } catch (error) {
      return { sleeps, outcome: error as OpenRouterError }
    }
  }

  it('waits for a 429 Retry-After within the cap, then retries', async () => {
    fake.script([{ type: 'http-error', status: 429, headers: { 'Retry-After': '3' } }, textReply('ok')])
    const { sleeps, outcome } = await fetchRecordingSleeps()
    expect(sleeps).toEqual([3_000])
    expect((outcome as Response).status).toBe(200)
    await (outcome as Response).body?.cancel()
  })

  it('honours metadata.retry_after_seconds when there is no header', async () => {
    fake.script([{ type: 'http-error', status: 503, body: { error: { code: 503, message: 'No provider', metadata: { retry_after_seconds: 2 } } } }, textReply('ok')])
    const { sleeps, outcome } = await fetchRecordingSleeps()
    expect(sleeps).toEqual([2_000])
    expect((outcome as Response).ok).toBe(true)
    await (outcome as Response).body?.cancel()
  })

  it('fails at once with the upstream message when Retry-After is over the cap', async () => {
    const before = fake.requests.length
    fake.script([{ type: 'http-error', status: 429, headers: { 'Retry-After': '60' }, body: { error: { code: 429, message: 'Rate limit exceeded: free-models-per-min' } } }, textReply('never')])
    const { sleeps, outcome } = await fetchRecordingSleeps()
    expect(sleeps).toEqual([])
    expect(fake.requests.length - before).toBe(1)
    expect(outcome).toMatchObject({ message: 'OpenRouter: rate limited (429)', upstreamMessage: 'Rate limit exceeded: free-models-per-min', kind: 'rate_limited' })
  })

  it('fails at once on a 429 that does not say when to retry', async () => {
    fake.script([{ type: 'http-error', status: 429 }, textReply('never')])
    const { sleeps, outcome } = await fetchRecordingSleeps()
    expect(sleeps).toEqual([])
    expect((outcome as OpenRouterError).status).toBe(429)
  })

  it('retries a 503 without Retry-After like any 5xx, with backoff', async () => {
    fake.script([{ type: 'http-error', status: 503 }, textReply('ok')])
    const { sleeps, outcome } = await fetchRecordingSleeps()
    expect(sleeps).toEqual([5])
    expect((outcome as Response).ok).toBe(true)
    await (outcome as Response).body?.cancel()
  })

  it('accepts an HTTP-date Retry-After', async () => {
    const inTwoSeconds = new Date(Date.now() + 2_000).toUTCString()
    fake.script([{ type: 'http-error', status: 429, headers: { 'Retry-After': inTwoSeconds } }, textReply('ok')])
    const { sleeps, outcome } = await fetchRecordingSleeps()
    expect(sleeps).toHaveLength(1)
    expect(sleeps[0]).toBeGreaterThan(0)
    expect(sleeps[0]).toBeLessThanOrEqual(2_000)
    await (outcome as Response).body?.cancel()
  })
})

describe('cancellation', () => {
  it('an abort mid-stream closes the upstream connection and the fake stops writing', async () => {
    const steps: StreamStep[] = [{ chunk: roleChunk(meta) }]
    for (let i = 0; i < 50; i++) steps.push({ chunk: textChunk(meta, `${i} `) }, { delayMs: 10 })
    steps.push({ chunk: finishChunk(meta, 'stop') }, { done: true })
    fake.script([stream(...steps)])
    const controller = new AbortController()
    const events = await collect({ signal: controller.signal, abortAfterText: controller })
    expect(errorOf(events)?.kind).toBe('aborted')
    expect(finishOf(events).finishReason).toBe('error')
    const recorded = await fake.settled(fake.requests.length - 1)
    expect(recorded.clientDisconnected).toBe(true)
    expect(recorded.stepsWritten).toBeLessThan(steps.length)
  })

  it('an abort while waiting for headers ends the request without a retry', async () => {
    const before = fake.requests.length
    fake.script([{ type: 'stall-headers' }, textReply('never')])
    const controller = new AbortController()
    const collecting = collect({ signal: controller.signal })
    // Aborted once the request is there (waiting on that, not on a clock a busy machine can outrun).
    await vi.waitFor(() => expect(fake.requests.length - before).toBe(1), { timeout: 30_000, interval: 5 })
    controller.abort()
    const events = await collecting
    expect(errorOf(events)?.kind).toBe('aborted')
    expect(fake.requests.length - before).toBe(1)
  })

  it('an already-aborted signal sends nothing', async () => {
    const before = fake.requests.length
    const events = await collect({ signal: AbortSignal.abort() })
    expect(errorOf(events)?.kind).toBe('aborted')
    expect(fake.requests.length).toBe(before)
  })
})

describe('a mid-stream error chunk built by the shared builder', () => {
  it('matches the wire format: HTTP 200, finish_reason error, top-level error', () => {
    expect(errorChunk(meta, 'server_error', 'boom')).toMatchObject({ error: { code: 'server_error', message: 'boom' }, choices: [{ finish_reason: 'error' }] })
  })
})
