import { beforeEach, describe, expect, it } from 'vitest'
import { finishChunk, roleChunk, textChunk } from '../../../server/lib/openrouter/chunks'
import { executeToolLoop, type ToolExecutionLoopParams } from '../../../server/lib/agent/tool-loop'
import { registerServerTool } from '../../../server/lib/tools/registry'
import type { ChatMessage } from '../../../server/lib/openrouter/types'
import {
  fakeChunkMeta as meta,
  midStreamErrorReply,
  textReply,
  toolCallReply,
  useFakeOpenRouter,
  type FakeReply,
  type RecordedRequest,
} from '../../support/fake-openrouter'
import { registerBuiltinToolsOnly } from '../../support/upstream'

const fake = useFakeOpenRouter()

function params(overrides: Partial<ToolExecutionLoopParams> = {}): ToolExecutionLoopParams {
  return {
    jobId: 'job-1',
    userId: 'user-1',
    threadId: 'thread-1',
    model: 'openai/gpt-4o-mini',
    initialMessages: [{ role: 'user', content: 'What time is it in Tokyo?' }],
    endpoint: { baseUrl: fake.url, apiKey: 'sk-test', label: 'OpenRouter' },
    client: { retry: { maxRetries: 1, baseDelayMs: 5, maxRetryAfterMs: 1000, headersTimeoutMs: 1000 }, idleTimeoutMs: 1000 },
    ...overrides,
  }
}

const lastMessage = (request: RecordedRequest) => request.body.messages.at(-1) as ChatMessage
const toolMessages = (request: RecordedRequest) => request.body.messages.filter(message => message.role === 'tool') as Array<Extract<ChatMessage, { role: 'tool' }>>

beforeEach(() => {
  registerBuiltinToolsOnly()
})

describe('executeToolLoop', () => {
  it('offers, checks and runs the tools of the registry it is given, not the process\'s', async () => {
    const ran: string[] = []
    const tool = { name: 'private_lookup', description: 'Looks something up in a registry of its own.', parameters: { type: 'object' as const, properties: {} }, runtime: 'server' as const, enabled: true, idempotent: true, needsApproval: false, handler: () => 'found', requiresCredentials: [], capabilities: [] }
    const tools = {
      get: (name: string) => (name === tool.name ? tool : undefined),
      definitions: () => [{ type: 'function' as const, function: { name: tool.name, description: tool.description, parameters: tool.parameters } }],
      ready: async () => {},
      run: async (name: string) => {
        ran.push(name)
        return { result: 'found it', toolName: name, timedOut: false, executionTimeMs: 1 }
      },
    }
    fake.script([toolCallReply([{ id: 'call_private', name: 'private_lookup', arguments: '{}' }]), textReply('Found it.')])
    const before = fake.requests.length
    const result = await executeToolLoop(params({ tools }))
    expect(result.finalContent).toBe('Found it.')
    expect(ran).toEqual(['private_lookup'])
    // Only its tools were offered: the process's built-ins (get_current_time…) were not.
    expect(fake.requests[before]!.body.tools?.map(item => item.function.name)).toEqual(['private_lookup'])
    expect(toolMessages(fake.requests[before + 1]!)[0]!.content).toBe('found it')
  })

  it('with 200 tools offers the most relevant ones and find_tools, and what find_tools finds is callable from the next round', async () => {
    for (let index = 0; index < 196; index++) {
      registerServerTool({ type: 'function', function: { name: `filler_${index}`, description: `Does unrelated task number ${index}.`, parameters: { type: 'object', properties: {} } } }, () => 'filler', { runtime: 'server', override: true })
    }
    registerServerTool({ type: 'function', function: { name: 'stock_quote', description: 'Latest price of a stock ticker on the exchange.', parameters: { type: 'object', properties: { ticker: { type: 'string' } } } } }, ({ ticker }) => `${String(ticker)}: 123.45`, { runtime: 'server', override: true })
    fake.script([
      toolCallReply([{ id: 'call_find', name: 'find_tools', arguments: '{"query":"stock price"}' }]),
      toolCallReply([{ id: 'call_quote', name: 'stock_quote', arguments: '{"ticker":"ACME"}' }]),
      textReply('ACME trades at 123.45.'),
    ])
    const result = await executeToolLoop(params({ initialMessages: [{ role: 'user', content: 'What is the weather and the time in Tokyo?' }], maxOfferedTools: 40 }))
    expect(result).toMatchObject({ finishReason: 'stop', finalContent: 'ACME trades at 123.45.' })
    const offered = fake.requests.slice(-3).map(request => request.body.tools!.map(tool => tool.function.name))
    // First: at most 40, the weather and time tools ranked first, and find_tools.
    expect(offered[0]).toHaveLength(40)
    expect(offered[0]!.slice(0, 2).sort()).toEqual(['get_current_time', 'get_current_weather'])
    expect(offered[0]).toContain('find_tools')
    expect(offered[0]).not.toContain('stock_quote')
    // find_tools answered with the match, which is offered from the next request and runs.
    const found = JSON.parse(toolMessages(fake.requests.at(-2)!).at(-1)!.content)
    expect(found.found[0]).toMatchObject({ name: 'stock_quote' })
    expect(offered[1]).toContain('stock_quote')
    expect(result.toolRounds[1]!.toolCalls[0]).toMatchObject({ name: 'stock_quote', status: 'completed', result: 'ACME: 123.45' })
  })

  it('reads the tool set again before every request: a tool added between rounds is offered from the next', async () => {
    fake.script([
      toolCallReply([{ id: 'call_1', name: 'calculate', arguments: '{"expression":"1+1"}' }]),
      textReply('Done.'),
    ])
    const result = await executeToolLoop(params({
      callbacks: {
        onRoundFinish: ({ toolCalls }) => {
          if (toolCalls.length > 0) registerServerTool({ type: 'function', function: { name: 'arrived_late', parameters: { type: 'object', properties: {} } } }, () => 'late', { runtime: 'server', override: true })
        },
      },
    }))
    expect(result.finishReason).toBe('stop')
    const [first, second] = fake.requests.slice(-2).map(request => request.body.tools!.map(tool => tool.function.name))
    expect(first).not.toContain('arrived_late')
    expect(second).toContain('arrived_late')
  })

  it('follows the tool policy read before every request: a denied tool is not offered, a call to it is refused naming the policy, a change applies from the next round', async () => {
    fake.script([
      toolCallReply([{ id: 'call_1', name: 'calculate', arguments: '{"expression":"1+1"}' }]),
      toolCallReply([{ id: 'call_2', name: 'calculate', arguments: '{"expression":"2+2"}' }]),
      textReply('Done.'),
    ])
    let denied = false
    const result = await executeToolLoop(params({
      toolAccess: async () => tool => (denied && tool.name === 'calculate' ? 'denied by the tool policy "no maths" for guests' : undefined),
      callbacks: {
        onRoundFinish: ({ toolCalls }) => {
          if (toolCalls.length > 0) denied = true
        },
      },
    }))
    expect(result.finishReason).toBe('stop')
    const [first, second] = fake.requests.slice(-3).map(request => request.body.tools!.map(tool => tool.function.name))
    expect(first).toContain('calculate')
    expect(second).not.toContain('calculate')
    expect(result.toolRounds[0]!.toolCalls[0]).toMatchObject({ status: 'completed' })
    // The model called it anyway: refused with the policy's words, not run.
    expect(result.toolRounds[1]!.toolCalls[0]).toMatchObject({ status: 'refused', result: 'Error executing tool "calculate": tool "calculate" is not available here: denied by the tool policy "no maths" for guests.' })
  })

  it('tells a tool the server tools its caller may use (the job\'s narrowed set, after the policy): what a subagent may get', async () => {
    let seen: readonly string[] | undefined
    registerServerTool({ type: 'function', function: { name: 'hand_on', parameters: { type: 'object', properties: {} } } }, (_args, context) => {
      seen = context.availableTools
      return 'ok'
    }, { runtime: 'server', override: true })
    fake.script([toolCallReply([{ id: 'call_1', name: 'hand_on', arguments: '{}' }]), textReply('Done.')])
    await executeToolLoop(params({ toolNames: ['hand_on', 'calculate', 'get_current_time'], toolAccess: async () => tool => (tool.name === 'calculate' ? 'denied' : undefined) }))
    expect([...seen!].sort()).toEqual(['get_current_time', 'hand_on'])
  })

  it('answers in one round when the model calls no tool, offering every enabled tool', async () => {
    fake.script([textReply('Hello there!', { usage: { prompt: 10, completion: 3, cost: 0.001 } })])
    const result = await executeToolLoop(params())
    expect(result).toMatchObject({ finalContent: 'Hello there!', totalRounds: 1, totalToolCalls: 0, toolRounds: [], finishReason: 'stop' })
    expect(result.usage).toMatchObject({ promptTokens: 10, completionTokens: 3, totalTokens: 13, cost: 0.001 })
    const sent = fake.requests.at(-1)!.body
    expect(sent.tools!.map(tool => tool.function.name)).toEqual(['get_current_time', 'calculate', 'get_current_weather'])
    expect(sent.stream).toBe(true)
    expect(sent.tool_choice).toBeUndefined()
    expect(result.messages.at(-1)).toEqual({ role: 'assistant', content: 'Hello there!' })
  })

  it('runs a tool, feeds its result back, and streams the answer that uses it', async () => {
    fake.script([
      toolCallReply([{ id: 'call_t', name: 'get_current_time', arguments: '{"timezone":"Asia/Tokyo"}' }]),
      textReply('It is afternoon in Tokyo.'),
    ])
    const deltas: string[] = []
    const started: string[] = []
    const finished: Array<{ name: string, status: string }> = []
    const result = await executeToolLoop(params({
      callbacks: {
        onTextDelta: text => deltas.push(text),
        onToolCallStart: event => started.push(event.name),
        onToolCallFinish: event => finished.push({ name: event.name, status: event.status }),
      },
    }))

    expect(result.finishReason).toBe('stop')
    expect(result.totalRounds).toBe(2)
    expect(result.totalToolCalls).toBe(1)
    expect(result.finalContent).toBe('It is afternoon in Tokyo.')
    expect(deltas.join('')).toBe(result.finalContent)
    expect(started).toEqual(['get_current_time'])
    expect(finished).toEqual([{ name: 'get_current_time', status: 'completed' }])

    const followUp = fake.requests.at(-1)!
    expect(followUp.body.tools).toHaveLength(3)
    const [assistant, tool] = followUp.body.messages.slice(-2)
    expect(assistant).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'call_t', type: 'function', function: { name: 'get_current_time', arguments: '{"timezone":"Asia/Tokyo"}' } }] })
    expect(tool).toMatchObject({ role: 'tool', tool_call_id: 'call_t' })
    expect(JSON.parse((tool as { content: string }).content)).toMatchObject({ timezone: 'Asia/Tokyo', utcOffset: '+09:00' })
    expect(result.toolRounds[0]!.toolCalls[0]).toMatchObject({ id: 'call_t', name: 'get_current_time', status: 'completed', timedOut: false })
  })

  it('runs two dependent rounds: the second call is built from the first result', async () => {
    fake.script((request, index) => {
      if (index === 0) return toolCallReply([{ id: 'c1', name: 'calculate', arguments: '{"expression":"6*7"}' }])
      if (index === 1) {
        const first = JSON.parse((lastMessage(request) as { content: string }).content) as { result: number }
        return toolCallReply([{ id: 'c2', name: 'calculate', arguments: JSON.stringify({ expression: `${first.result} / 2` }) }])
      }
      const second = JSON.parse((lastMessage(request) as { content: string }).content) as { result: number }
      return textReply(`Half of 6×7 is ${second.result}.`)
    })
    const result = await executeToolLoop(params({ initialMessages: [{ role: 'user', content: 'Half of 6 times 7?' }] }))
    expect(result.finalContent).toBe('Half of 6×7 is 21.')
    expect(result.totalRounds).toBe(3)
    expect(result.toolRounds.map(round => round.toolCalls[0]!.arguments)).toEqual(['{"expression":"6*7"}', '{"expression":"42 / 2"}'])
  })

  it('runs parallel calls of one round concurrently and returns results in call order', async () => {
    let running = 0
    let mostAtOnce = 0
    for (const name of ['slow_a', 'slow_b', 'slow_c']) {
      registerServerTool({ type: 'function', function: { name, parameters: { type: 'object', properties: { ms: { type: 'number' } } } } }, async (args) => {
        running++
        mostAtOnce = Math.max(mostAtOnce, running)
        await new Promise(resolve => setTimeout(resolve, Number(args.ms)))
        running--
        return `${name} done`
      })
    }
    fake.script([
      toolCallReply([
        { id: 'a', name: 'slow_a', arguments: '{"ms":60}' },
        { id: 'b', name: 'slow_b', arguments: '{"ms":10}' },
        { id: 'c', name: 'slow_c', arguments: '{"ms":30}' },
      ], { interleave: true }),
      textReply('All done.'),
    ])
    const result = await executeToolLoop(params({ toolConcurrency: 2 }))
    expect(mostAtOnce).toBe(2)
    expect(toolMessages(fake.requests.at(-1)!).map(message => [message.tool_call_id, message.content])).toEqual([['a', 'slow_a done'], ['b', 'slow_b done'], ['c', 'slow_c done']])
    expect(result.finishReason).toBe('stop')
  })

  it('feeds failures back to the model instead of ending: throw, timeout, invalid JSON, invalid arguments', async () => {
    registerServerTool({ type: 'function', function: { name: 'explode' } }, () => {
      throw new Error('disk on fire')
    })
    registerServerTool({ type: 'function', function: { name: 'hang' } }, () => new Promise(() => {}), { timeoutMs: 30 })
    fake.script([
      toolCallReply([
        { id: '1', name: 'explode', arguments: '{}' },
        { id: '2', name: 'hang', arguments: '' },
        { id: '3', name: 'calculate', arguments: '{"expression": "1+' },
        { id: '4', name: 'get_current_weather', arguments: '{}' },
      ]),
      textReply('Sorry, the tools failed.'),
    ])
    const result = await executeToolLoop(params())
    expect(result.finishReason).toBe('stop')
    const results = toolMessages(fake.requests.at(-1)!).map(message => message.content)
    expect(results[0]).toBe('Error executing tool "explode": Tool "explode" failed: disk on fire')
    expect(results[1]).toBe('Error executing tool "hang": Tool "hang" timed out after 30 ms.')
    expect(results[2]).toMatch(/^Error executing tool "calculate": Invalid arguments for tool "calculate": arguments are not valid JSON/)
    expect(results[3]).toMatch(/^Error executing tool "get_current_weather": .*missing required field "location"/)
    expect(result.toolRounds[0]!.toolCalls.map(call => call.status)).toEqual(['error', 'timeout', 'error', 'error'])
  })

  it('refuses calls to tools that were not offered, and to unknown tools, without running them', async () => {
    let weatherRan = false
    registerServerTool({ type: 'function', function: { name: 'secret_tool' } }, () => {
      weatherRan = true
      return 'ran'
    })
    fake.script([
      toolCallReply([
        { id: '1', name: 'secret_tool', arguments: '{}' },
        { id: '2', name: 'no_such_tool', arguments: '{}' },
        { id: '3', name: 'calculate', arguments: '{"expression":"1+1"}' },
      ]),
      textReply('ok'),
    ])
    const result = await executeToolLoop(params({ toolNames: ['calculate'] }))
    expect(fake.requests.at(-2)!.body.tools!.map(tool => tool.function.name)).toEqual(['calculate'])
    expect(weatherRan).toBe(false)
    const results = toolMessages(fake.requests.at(-1)!).map(message => message.content)
    expect(results[0]).toBe('Error executing tool "secret_tool": tool "secret_tool" was not offered in this conversation, so it was not run.')
    expect(results[1]).toMatch(/^Error executing tool "no_such_tool": tool "no_such_tool" was not offered/)
    expect(JSON.parse(results[2]!)).toEqual({ expression: '1+1', result: 2 })
    expect(result.toolRounds[0]!.toolCalls.map(call => call.status)).toEqual(['refused', 'refused', 'completed'])
  })

  it('offers no tools when tool execution is off', async () => {
    fake.script([textReply('plain')])
    await executeToolLoop(params({ toolsEnabled: false }))
    expect(fake.requests.at(-1)!.body.tools).toBeUndefined()
  })

  it('gives extra calls beyond maxToolsPerRound an error result saying the limit was hit', async () => {
    fake.script([
      toolCallReply([1, 2, 3].map(n => ({ id: `c${n}`, name: 'calculate', arguments: `{"expression":"${n}+${n}"}` }))),
      textReply('done'),
    ])
    const result = await executeToolLoop(params({ maxToolsPerRound: 2 }))
    const results = toolMessages(fake.requests.at(-1)!).map(message => message.content)
    expect(JSON.parse(results[0]!).result).toBe(2)
    expect(JSON.parse(results[1]!).result).toBe(4)
    expect(results[2]).toBe('Error executing tool "calculate": not run: the model asked for 3 tool calls in one round and at most 2 run per round. Ask for fewer at a time.')
    expect(result.totalToolCalls).toBe(3)
  })

  it('after maxRounds tool rounds, forces a final answer with tool_choice "none" and reports tool_limit', async () => {
    fake.script(request => request.body.tool_choice === 'none'
      ? textReply('Here is what I found so far.')
      : toolCallReply([{ id: `c${fake.requests.length}`, name: 'calculate', arguments: '{"expression":"1+1"}' }]))
    const result = await executeToolLoop(params({ maxRounds: 2 }))
    expect(result.finishReason).toBe('tool_limit')
    expect(result.totalRounds).toBe(3)
    expect(result.toolRounds).toHaveLength(2)
    expect(result.finalContent).toBe('Here is what I found so far.')
    const last = fake.requests.at(-1)!.body
    expect(last.tool_choice).toBe('none')
    expect(last.tools).toHaveLength(3) // tools are sent again with tool results
    expect(toolMessages(fake.requests.at(-1)!)).toHaveLength(2)
  })

  it('ignores tool calls a model makes despite tool_choice "none"', async () => {
    fake.script([
      toolCallReply([{ id: 'c1', name: 'calculate', arguments: '{"expression":"1"}' }]),
      toolCallReply([{ id: 'c2', name: 'calculate', arguments: '{"expression":"2"}' }], { text: 'Final words.' }),
    ])
    const result = await executeToolLoop(params({ maxRounds: 1 }))
    expect(result).toMatchObject({ finishReason: 'tool_limit', totalToolCalls: 1, finalContent: 'Final words.' })
  })

  it('separates the text of successive rounds with a blank line', async () => {
    fake.script([
      toolCallReply([{ id: 'c1', name: 'calculate', arguments: '{"expression":"2+2"}' }], { text: 'Let me check.' }),
      textReply('It is 4.'),
    ])
    const deltas: string[] = []
    const result = await executeToolLoop(params({ callbacks: { onTextDelta: text => deltas.push(text) } }))
    expect(result.finalContent).toBe('Let me check.\n\nIt is 4.')
    expect(deltas.join('')).toBe(result.finalContent)
    expect(fake.requests.at(-1)!.body.messages.at(-2)).toMatchObject({ role: 'assistant', content: 'Let me check.' })
  })

  it('sends reasoning_details back unchanged on the assistant turn that called tools', async () => {
    fake.script([
      {
        type: 'stream',
        steps: [
          { chunk: { choices: [{ index: 0, delta: { reasoning: 'Need math.', reasoning_details: [{ type: 'reasoning.encrypted', data: 'opaque', index: 0 }] } }] } },
          ...(toolCallReply([{ id: 'c1', name: 'calculate', arguments: '{"expression":"3*3"}' }]) as Extract<FakeReply, { type: 'stream' }>).steps,
        ],
      },
      textReply('9'),
    ])
    const result = await executeToolLoop(params())
    expect(result.reasoning).toBe('Need math.')
    expect(fake.requests.at(-1)!.body.messages.at(-2)).toMatchObject({ role: 'assistant', reasoning_details: [{ type: 'reasoning.encrypted', data: 'opaque', index: 0 }] })
  })

  it('sums usage over rounds', async () => {
    fake.script([toolCallReply([{ id: 'c1', name: 'calculate', arguments: '{"expression":"1"}' }]), textReply('1', { usage: { prompt: 30, completion: 2 } })])
    const result = await executeToolLoop(params())
    expect(result.usage).toMatchObject({ promptTokens: 50, completionTokens: 10, totalTokens: 60 })
  })

  it.each([
    ['an HTTP error', { type: 'http-error' as const, status: 402, body: { error: { code: 402, message: 'Insufficient credits' } } }, 'OpenRouter: insufficient credits (402)'],
    ['a mid-stream error chunk', midStreamErrorReply('Partial', 'server_error', 'Provider crashed'), 'OpenRouter: Provider crashed (server_error)'],
  ])('ends with finishReason error on %s, keeping what was streamed', async (_label, reply, message) => {
    fake.script([reply])
    const result = await executeToolLoop(params())
    expect(result.finishReason).toBe('error')
    expect(result.error?.message).toBe(message)
    if (reply.type === 'stream') expect(result.finalContent).toBe('Partial')
  })

  it('keeps earlier rounds when a later round fails', async () => {
    fake.script([toolCallReply([{ id: 'c1', name: 'calculate', arguments: '{"expression":"1"}' }], { text: 'Working on it.' }), { type: 'http-error', status: 401 }])
    const result = await executeToolLoop(params())
    expect(result).toMatchObject({ finishReason: 'error', finalContent: 'Working on it.', totalToolCalls: 1 })
    expect(result.error?.status).toBe(401)
  })

  it('stops on abort mid-stream, reporting aborted and keeping the partial text', async () => {
    const steps = [{ chunk: roleChunk(meta) }, ...Array.from({ length: 40 }, (_, i) => [{ chunk: textChunk(meta, `w${i} `) }, { delayMs: 10 }]).flat(), { chunk: finishChunk(meta, 'stop') }, { done: true as const }]
    fake.script([{ type: 'stream', steps }])
    const controller = new AbortController()
    const result = await executeToolLoop(params({
      signal: controller.signal,
      callbacks: { onTextDelta: (text) => { if (text.startsWith('w2')) controller.abort() } },
    }))
    expect(result.finishReason).toBe('aborted')
    expect(result.finalContent).toBe('w0 w1 w2 ')
    expect((await fake.settled(fake.requests.length - 1)).clientDisconnected).toBe(true)
  })

  it('aborts running tools when the job is aborted', async () => {
    let toolSignal: AbortSignal | undefined
    const controller = new AbortController()
    registerServerTool({ type: 'function', function: { name: 'long_job' } }, (_args, context) => {
      toolSignal = context.signal
      setTimeout(() => controller.abort(), 10)
      return new Promise(() => {})
    })
    fake.script([toolCallReply([{ id: 'c1', name: 'long_job', arguments: '{}' }]), textReply('never')])
    const before = fake.requests.length
    const result = await executeToolLoop(params({ signal: controller.signal }))
    expect(result.finishReason).toBe('aborted')
    expect(toolSignal?.aborted).toBe(true)
    expect(fake.requests.length - before).toBe(1)
  })

  it('ends a round that outlives roundTimeoutMs with an error, not a hang', async () => {
    registerServerTool({ type: 'function', function: { name: 'glacial' } }, () => new Promise(() => {}), { timeoutMs: 60_000 })
    fake.script([toolCallReply([{ id: 'c1', name: 'glacial', arguments: '{}' }]), textReply('never')])
    const result = await executeToolLoop(params({ roundTimeoutMs: 80 }))
    expect(result.finishReason).toBe('error')
    expect(result.error?.message).toBe('Round 1 took longer than 80 ms and was stopped.')
  })

  it('stops the round\'s clock while a call waits for a person, and runs it again afterwards', async () => {
    let ran = 0
    registerServerTool({ type: 'function', function: { name: 'send_note' }, needsApproval: true }, () => {
      ran++
      return 'sent'
    })
    registerServerTool({ type: 'function', function: { name: 'glacial' } }, () => new Promise(() => {}), { timeoutMs: 60_000 })
    fake.script([toolCallReply([{ id: 'c1', name: 'send_note', arguments: '{}' }]), toolCallReply([{ id: 'c2', name: 'glacial', arguments: '{}' }]), textReply('never')])
    const asked: string[] = []
    const people = {
      // The person takes far longer than the round may.
      approve: async (call: { name: string }) => {
        asked.push(call.name)
        await new Promise(resolve => setTimeout(resolve, 400))
        return { approved: true as const }
      },
      runInBrowser: async () => ({ error: 'no browser' }),
      ask: async () => ({ action: 'cancel' as const }),
    }
    const result = await executeToolLoop(params({ roundTimeoutMs: 150, people }))
    expect(asked).toEqual(['send_note'])
    expect(ran).toBe(1)
    // Round 1 finished although its approval took 400 ms of a 150 ms round; round 2's clock ran as usual.
    expect(result.toolRounds[0]!.toolCalls[0]).toMatchObject({ name: 'send_note', status: 'completed', result: 'sent' })
    expect(result.error?.message).toBe('Round 2 took longer than 150 ms and was stopped.')
  })

  it('refuses a call that needs approval when nobody can answer for the job', async () => {
    registerServerTool({ type: 'function', function: { name: 'send_note' }, needsApproval: true }, () => 'sent')
    fake.script([toolCallReply([{ id: 'c1', name: 'send_note', arguments: '{}' }]), textReply('ok')])
    const result = await executeToolLoop(params())
    expect(result.toolRounds[0]!.toolCalls[0]).toMatchObject({ status: 'refused', error: expect.stringContaining('needs its user\'s approval, and nobody can answer') })
  })
})

describe('executeToolLoop: messages sent to the running answer (steers)', () => {
  it('gives them to the model at the next round boundary, as the person\'s turns after the tool results, recorded before that request goes', async () => {
    fake.script([
      toolCallReply([{ id: 'call_1', name: 'calculate', arguments: '{"expression":"6*7"}' }]),
      textReply('Using what I have: 42.'),
    ])
    const waiting = [{ id: 'steer-1', content: 'stop searching, use what you have' }]
    const order: string[] = []
    const result = await executeToolLoop(params({
      // Asked before every request; the message is handed over once.
      takeSteers: async () => waiting.splice(0),
      callbacks: {
        onSteered: async ({ round, steers, messages }) => {
          order.push(`steered before request ${round}: ${steers.map(steer => steer.id).join()}`)
          expect(messages.at(-1)).toEqual({ role: 'user', content: 'stop searching, use what you have' })
        },
        beforeModelRequest: ({ round }) => {
          order.push(`request ${round}`)
        },
      },
    }))
    expect(result).toMatchObject({ finishReason: 'stop', finalContent: 'Using what I have: 42.' })
    // Already there at the first boundary: it goes with the first request, after the question.
    expect(order).toEqual(['steered before request 1: steer-1', 'request 1', 'request 2'])
    const [first, second] = fake.requests.slice(-2)
    expect(first!.body.messages.map(message => message.role)).toEqual(['user', 'user'])
    expect(lastMessage(first!)).toEqual({ role: 'user', content: 'stop searching, use what you have' })
    // Given once: the next request has it where it was read, not again at the end.
    expect(second!.body.messages.filter(message => message.role === 'user' && message.content === 'stop searching, use what you have')).toHaveLength(1)
    expect(lastMessage(second!).role).toBe('tool')
    expect(result.messages.filter(message => message.role === 'user')).toHaveLength(2)
  })

  it('reads a steer that arrives while a tool runs after that tool\'s result', async () => {
    const waiting: Array<{ id: string, content: string }> = []
    registerServerTool({ type: 'function', function: { name: 'slow_search', parameters: { type: 'object', properties: {} } } }, () => {
      waiting.push({ id: 'steer-2', content: 'that is enough' })
      return 'three results'
    }, { runtime: 'server', override: true })
    fake.script([toolCallReply([{ id: 'call_s', name: 'slow_search', arguments: '{}' }]), textReply('Fine.')])
    const steered: number[] = []
    await executeToolLoop(params({ takeSteers: async () => waiting.splice(0), callbacks: { onSteered: async ({ round }) => { steered.push(round) } } }))
    expect(steered).toEqual([2])
    const roles = fake.requests.at(-1)!.body.messages.map(message => message.role)
    expect(roles).toEqual(['user', 'assistant', 'tool', 'user'])
  })

  it('goes on without steers when reading them fails', async () => {
    fake.script([textReply('Hello.')])
    const result = await executeToolLoop(params({ takeSteers: () => Promise.reject(new Error('store down')) }))
    expect(result).toMatchObject({ finishReason: 'stop', finalContent: 'Hello.' })
  })
})
