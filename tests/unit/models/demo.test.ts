import { beforeEach, describe, expect, it } from 'vitest'
import { DEMO_MODEL_ID, planDemoReply } from '../../../server/lib/models/demo/demo-planner'
import { parseServerConfig } from '../../../server/lib/config/server-config'
import { chatClientOptions, MissingApiKeyError, resolveChatEndpoint } from '../../../server/lib/models/chat-endpoint'
import { executeToolLoop } from '../../../server/lib/agent/tool-loop'
import { getEnabledDefinitions } from '../../../server/lib/tools/registry'
import { streamChatCompletion } from '../../../server/lib/openrouter/chat-client'
import type { ChatMessage, ChatStreamEvent } from '../../../server/lib/openrouter/types'
import { testServerConfig } from '../../support/server-config'
import { registerBuiltinToolsOnly } from '../../support/upstream'

beforeEach(() => {
  registerBuiltinToolsOnly()
})

const ask = (content: string, tools = getEnabledDefinitions()) => planDemoReply({ messages: [{ role: 'user', content }], tools })

describe('the demo model planner', () => {
  it.each([
    ['What time is it in Tokyo?', { name: 'get_current_time', arguments: { timezone: 'Asia/Tokyo' } }],
    ['what time is it in new york', { name: 'get_current_time', arguments: { timezone: 'America/New_York' } }],
    ['What time is it?', { name: 'get_current_time', arguments: { timezone: 'UTC' } }],
    ['time in Europe/Vienna', { name: 'get_current_time', arguments: { timezone: 'Europe/Vienna' } }],
    ['What is 12 * (3 + 4)?', { name: 'calculate', arguments: { expression: '12 * (3 + 4)' } }],
    ['calculate sqrt(2) * 10', { name: 'calculate', arguments: { expression: 'sqrt(2) * 10' } }],
    ["What's the weather in Paris?", { name: 'get_current_weather', arguments: { location: 'Paris' } }],
  ])('%s → calls %o', (question, call) => {
    expect(ask(question)).toEqual({ kind: 'tool-calls', calls: [call] })
  })

  it('asks for several tools in parallel when the question has several parts', () => {
    expect(ask('What time is it in Tokyo and what is the weather in Lisbon?')).toEqual({
      kind: 'tool-calls',
      calls: [
        { name: 'get_current_time', arguments: { timezone: 'Asia/Tokyo' } },
        { name: 'get_current_weather', arguments: { location: 'Lisbon' } },
      ],
    })
  })

  it('never calls tools that were not offered, or when tool_choice is "none"', () => {
    expect(ask('What time is it in Tokyo?', []).kind).toBe('text')
    expect(planDemoReply({ messages: [{ role: 'user', content: 'What time is it in Tokyo?' }], tools: getEnabledDefinitions(), tool_choice: 'none' }).kind).toBe('text')
  })

  it('introduces itself and suggests what to try', () => {
    const plan = ask('hello')
    expect(plan.kind).toBe('text')
    expect((plan as { text: string }).text).toMatch(/offline demo model/)
    expect((plan as { text: string }).text).toMatch(/What time is it in Tokyo\?/)
  })

  it('writes a long answer when asked for one', () => {
    const plan = ask('Write a long answer about background jobs') as { kind: 'text', text: string }
    expect(plan.text.split(/\s+/).length).toBeGreaterThan(250)
  })

  it('answers from tool results, including errors', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'time in Tokyo and 1/0' },
      { role: 'assistant', content: null, tool_calls: [
        { id: 'a', type: 'function', function: { name: 'get_current_time', arguments: '{"timezone":"Asia/Tokyo"}' } },
        { id: 'b', type: 'function', function: { name: 'calculate', arguments: '{"expression":"1/0"}' } },
      ] },
      { role: 'tool', tool_call_id: 'a', content: JSON.stringify({ timezone: 'Asia/Tokyo', local: 'Sunday, November 22, 2026 at 3:30:15 PM GMT+9', utcOffset: '+09:00' }) },
      { role: 'tool', tool_call_id: 'b', content: 'Error executing tool "calculate": Tool "calculate" failed: division by zero' },
    ]
    const plan = planDemoReply({ messages, tools: getEnabledDefinitions() }) as { text: string }
    expect(plan.text).toContain('In **Asia/Tokyo** it is **Sunday, November 22, 2026 at 3:30:15 PM GMT+9** (UTC+09:00).')
    expect(plan.text).toContain('I could not get that from `calculate`: Tool "calculate" failed: division by zero')
    expect(plan.text).toContain('_Answered by the offline demo model with `get_current_time`, `calculate`._')
  })
})

describe('the demo model through the real client and tool loop', () => {
  const config = testServerConfig({ demoModel: { enabled: true, tokenDelayMs: 0 } })

  it('streams in the wire format: many small text deltas, usage, finish', async () => {
    const endpoint = resolveChatEndpoint(DEMO_MODEL_ID, config)
    const events: ChatStreamEvent[] = []
    for await (const event of streamChatCompletion(endpoint, { model: DEMO_MODEL_ID, messages: [{ role: 'user', content: 'hello' }], stream: true }, chatClientOptions(config))) events.push(event)
    expect(events.filter(event => event.type === 'text-delta').length).toBeGreaterThan(20)
    expect(events.some(event => event.type === 'usage')).toBe(true)
    expect(events.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' })
  })

  it('answers "what time is it in Tokyo?" by calling get_current_time and using its result', async () => {
    const toolCalls: string[] = []
    const result = await executeToolLoop({
      jobId: 'j', userId: 'u', threadId: 't',
      model: DEMO_MODEL_ID,
      initialMessages: [{ role: 'user', content: 'What time is it in Tokyo?' }],
      endpoint: resolveChatEndpoint(DEMO_MODEL_ID, config),
      client: chatClientOptions(config),
      callbacks: { onToolCallFinish: event => toolCalls.push(`${event.name}:${event.status}`) },
    })
    expect(result.finishReason).toBe('stop')
    expect(toolCalls).toEqual(['get_current_time:completed'])
    const toolResult = JSON.parse(result.toolRounds[0]!.toolCalls[0]!.result) as { local: string }
    expect(result.finalContent).toContain(`In **Asia/Tokyo** it is **${toolResult.local}**`)
  })

  it('runs parallel tool calls and answers with every result', async () => {
    const result = await executeToolLoop({
      jobId: 'j', userId: 'u', threadId: 't',
      model: DEMO_MODEL_ID,
      initialMessages: [{ role: 'user', content: 'What is 6*7 and what is the weather in Oslo?' }],
      endpoint: resolveChatEndpoint(DEMO_MODEL_ID, config),
      client: chatClientOptions(config),
    })
    expect(result.toolRounds[0]!.toolCalls.map(call => call.name)).toEqual(['calculate', 'get_current_weather'])
    expect(result.finalContent).toContain('`6*7` = **42**')
    expect(result.finalContent).toMatch(/It is \*\*sunny\*\* in Oslo/)
  })
})

describe('resolveChatEndpoint', () => {
  it('needs a key for OpenRouter models and says how to get one', () => {
    expect(() => resolveChatEndpoint('openai/gpt-4o-mini', testServerConfig())).toThrow(MissingApiKeyError)
    expect(() => resolveChatEndpoint('openai/gpt-4o-mini', testServerConfig())).toThrow(/add yours in Settings.*NUXT_OPENROUTER_API_KEY.*or3\/offline-demo/)
  })

  it("prefers the user's key over the server's, and needs none for a local server", () => {
    const withServerKey = testServerConfig({ openrouter: { apiKey: 'sk-server' } })
    expect(resolveChatEndpoint('m', withServerKey, 'sk-user').apiKey).toBe('sk-user')
    expect(resolveChatEndpoint('m', withServerKey).apiKey).toBe('sk-server')
    const local = testServerConfig({ openrouter: { baseUrl: 'http://localhost:11434/v1' } })
    expect(resolveChatEndpoint('llama3.2', local)).toMatchObject({ baseUrl: 'http://localhost:11434/v1', label: 'localhost:11434', apiKey: undefined })
  })

  it('refuses the demo model when it is switched off', () => {
    expect(() => resolveChatEndpoint(DEMO_MODEL_ID, testServerConfig({ demoModel: { enabled: false, tokenDelayMs: 0 } }))).toThrow(/switched off/)
  })

  it('parses the default config', () => {
    expect(parseServerConfig(testServerConfig()).demoModel.enabled).toBe(true)
  })
})

describe('the demo planner on hostile input', () => {
  it('answers a 100,000-character message by reading only its start', () => {
    const text = `What time is it in a${' '.repeat(100_000)}1`
    const plan = planDemoReply({ messages: [{ role: 'user', content: text }], tools: getEnabledDefinitions() })
    // Whatever it makes of it, nothing it plans carries more than the start of the message.
    expect(JSON.stringify(plan).length).toBeLessThan(4_000)
  })
})


describe('the demo model\'s numbers and counts read as a person expects (issue 29)', () => {
  it('counts a file\'s lines without the one after its last newline', async () => {
    const { countText } = await import('../../../server/lib/models/demo/demo-files')
    expect(countText('name,age\nAda,36\nAlan,41\nGrace,85\n')).toEqual({ lines: 4, words: 4 })
    expect(countText('name,age\nAda,36\nAlan,41\nGrace,85')).toEqual({ lines: 4, words: 4 })
    expect(countText('one line')).toEqual({ lines: 1, words: 2 })
    expect(countText('\n')).toEqual({ lines: 1, words: 0 })
    expect(countText('')).toEqual({ lines: 0, words: 0 })
  })

  it('rounds a conversion to 4 decimals and a calculation\'s floating-point noise away', async () => {
    const { readableNumber } = await import('../../../server/lib/models/demo/demo-planner')
    expect(readableNumber(6.21371192237, 4)).toBe('6.2137')
    expect(readableNumber(100, 4)).toBe('100')
    expect(readableNumber(0.1 + 0.2, 10)).toBe('0.3')
    expect(readableNumber(1 / 3, 10)).toBe('0.3333333333')
    expect(readableNumber(0.00001234, 4)).toBe('0.0000123')
    expect(readableNumber(-37.77777777, 4)).toBe('-37.7778')
    expect(readableNumber('n/a', 4)).toBe('n/a')
  })
})

describe('the demo model in workflow steps', () => {
  const step = (system: string, user: string) => {
    const plan = planDemoReply({ messages: [{ role: 'system', content: system }, { role: 'user', content: user }] })
    return plan.kind === 'text' ? plan.text : ''
  }

  it('does what a step of the shipped examples asks, to the text it was given', () => {
    expect(step('You write a clear first draft from the research.', 'Question: What is 12 * 7?\n\nResearch:\n`12 * 7` = **84**')).toBe('Draft: What is 12 * 7? `12 * 7` = **84**')
    expect(step('You point out what the draft gets wrong or leaves out.', 'Draft: the answer is 84')).toMatch(/^Critique: .*"the answer is 84"/)
    const final = step('You write the final answer, fixing what the critique found.', 'Draft:\nDraft: the answer is 84\n\nCritique:\nCritique: say where it comes from')
    expect(final).toBe('the answer is 84\n\n_Revised after the critique: say where it comes from_')
    expect(step('You polish the approved draft without changing what it says.', 'Draft: a short note   about tides')).toBe('a short note about tides')
    expect(step('You research the question with the tools you have and list the facts you found.', 'Why is the sea salty?')).toMatch(/^The question: "Why is the sea salty\?"/)
  })

  it('keeps to its rules for instructions it does not know', () => {
    expect(step('You answer anything else.', 'Tell me a story')).not.toMatch(/^Draft|^Critique/)
  })
})
