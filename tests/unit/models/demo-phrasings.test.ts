/**
 * The offline demo model reads people the way they write: a table of phrasings (trailing words,
 * multi-word cities, percentages, numbers in words, functions, unit conversions, °C/°F, two
 * requests in one message), follow-ups that refer to the previous answer, and a short fallback.
 */
import { beforeEach, describe, expect, it } from 'vitest'
import { planDemoReply } from '../../../server/lib/models/demo/demo-planner'
import { getEnabledDefinitions, registerServerTool } from '../../../server/lib/tools/registry'
import { evaluateExpression } from '../../../server/lib/tools/builtin/expression-evaluator'
import convertUnitsTool from '../../../server/tools/convert-units'
import type { ChatMessage } from '../../../server/lib/openrouter/types'
import { registerBuiltinToolsOnly } from '../../support/upstream'

beforeEach(() => {
  registerBuiltinToolsOnly()
  registerServerTool(convertUnitsTool.definition, convertUnitsTool.handler, { ...convertUnitsTool.options, override: true })
})

const plan = (messages: ChatMessage[]) => planDemoReply({ messages, tools: getEnabledDefinitions() })
const ask = (content: string) => plan([{ role: 'user', content }])
const time = (timezone: string) => ({ name: 'get_current_time', arguments: { timezone } })
const weather = (location: string, unit?: 'celsius' | 'fahrenheit') => ({ name: 'get_current_weather', arguments: { location, ...(unit ? { unit } : {}) } })
const convert = (value: number, from: string, to: string) => ({ name: 'convert_units', arguments: { value, from, to } })
/** A calculate call whose expression evaluates to `result`. */
const calc = (result: number) => ({ name: 'calculate', result })

type Expected = ReturnType<typeof time> | ReturnType<typeof weather> | ReturnType<typeof convert> | ReturnType<typeof calc>

function check(content: string, expected: Expected[]): void {
  const reply = ask(content)
  expect(reply.kind, content).toBe('tool-calls')
  const calls = (reply as Extract<typeof reply, { kind: 'tool-calls' }>).calls
  expect(calls.length, `${content} → ${JSON.stringify(calls)}`).toBe(expected.length)
  expected.forEach((want, index) => {
    const call = calls[index]!
    if ('result' in want) {
      expect(call.name, content).toBe('calculate')
      expect(evaluateExpression(String(call.arguments.expression)), `${content} → ${String(call.arguments.expression)}`).toBeCloseTo(want.result, 6)
    } else {
      expect(call, content).toEqual(want)
    }
  })
}

const PHRASINGS: Array<[string, Expected[]]> = [
  // Time, the way people ask it.
  ['What time is it in Tokyo?', [time('Asia/Tokyo')]],
  ['time in Tokyo right now', [time('Asia/Tokyo')]],
  ['whats the time in tokyo rn?', [time('Asia/Tokyo')]],
  ['What time is it in New York City?', [time('America/New_York')]],
  ['time in NYC please', [time('America/New_York')]],
  ['what\'s the time over in los angeles at the moment', [time('America/Los_Angeles')]],
  ['Current time in São Paulo', [time('America/Sao_Paulo')]],
  ['what time is it', [time('UTC')]],
  ['time in Europe/Vienna', [time('Europe/Vienna')]],
  ['Do you know what time it is in Mexico City today?', [time('America/Mexico_City')]],
  ['clock in sydney', [time('Australia/Sydney')]],
  ['What is the date in Auckland?', [time('Pacific/Auckland')]],
  ['hey what time is it in hong kong', [time('Asia/Hong_Kong')]],
  ['Time in San Francisco, please!', [time('America/Los_Angeles')]],
  ['tell me the time in buenos aires', [time('America/Argentina/Buenos_Aires')]],
  // Weather, with places and units.
  ['weather in Berlin in celsius please', [weather('Berlin', 'celsius')]],
  ["What's the weather in Paris?", [weather('Paris')]],
  ['weather for new york city in fahrenheit', [weather('New York', 'fahrenheit')]],
  ['is it raining in London right now?', [weather('London')]],
  ['how hot is it in Dubai today', [weather('Dubai')]],
  ['forecast for Lisbon', [weather('Lisbon')]],
  ['What is the temperature in Reykjavik in °C?', [weather('Reykjavik', 'celsius')]],
  ['weather in Springfield', [weather('Springfield')]],
  ['Weather in Cape Town, metric please', [weather('Cape Town', 'celsius')]],
  ['is it cold in Oslo', [weather('Oslo')]],
  // Arithmetic in symbols and in words.
  ['What is 12 * (3 + 4)?', [calc(84)]],
  ['15% of 240', [calc(36)]],
  ['what is 15 percent of 240?', [calc(36)]],
  ['twelve times seven', [calc(84)]],
  ['what is twelve times seven', [calc(84)]],
  ['square root of 144', [calc(12)]],
  ['What is the square root of 2?', [calc(Math.SQRT2)]],
  ['calculate 2 to the power of 10', [calc(1024)]],
  ['7 squared', [calc(49)]],
  ['what\'s 3 cubed', [calc(27)]],
  ['100 divided by 8', [calc(12.5)]],
  ['how much is 1,250 + 3,750?', [calc(5000)]],
  ['twenty five plus seventeen', [calc(42)]],
  ['one hundred and five minus six', [calc(99)]],
  ['compute sqrt(2) * (3 + 4)^2', [calc(Math.SQRT2 * 49)]],
  ['half of 90', [calc(45)]],
  ['2+2', [calc(4)]],
  ['what is 9 mod 4', [calc(1)]],
  ['a dozen times three', [calc(36)]],
  ['cube root of 27', [calc(3)]],
  ['What is 3 x 5?', [calc(15)]],
  // Unit conversions.
  ['convert 10 km to miles', [convert(10, 'km', 'mi')]],
  ['10 km in miles', [convert(10, 'km', 'mi')]],
  ['how many feet in 3 meters', [convert(3, 'm', 'ft')]],
  ['how many feet are in a mile', [convert(1, 'mi', 'ft')]],
  ['100 F in C', [convert(100, 'f', 'c')]],
  ['convert 100 fahrenheit to celsius', [convert(100, 'f', 'c')]],
  ['what is 5 pounds in kg?', [convert(5, 'lb', 'kg')]],
  ['2 liters to gallons', [convert(2, 'l', 'gal')]],
  ['60 miles per hour in km/h', [convert(60, 'mph', 'km/h')]],
  ['convert twenty kilometres to miles', [convert(20, 'km', 'mi')]],
  ['how many grams is 3 ounces', [convert(3, 'oz', 'g')]],
  ['37 degrees celsius to fahrenheit', [convert(37, 'c', 'f')]],
  // Two requests in one message.
  ['time in Sydney and the weather there', [time('Australia/Sydney'), weather('Sydney')]],
  ['What time is it in Tokyo and what is the weather in Lisbon?', [time('Asia/Tokyo'), weather('Lisbon')]],
  ['convert 5 km to miles and what is 15% of 80', [convert(5, 'km', 'mi'), calc(12)]],
  ['time in London; weather in Paris in celsius', [time('Europe/London'), weather('Paris', 'celsius')]],
]

describe('the demo model reads phrasings the way people write them', () => {
  it('has a table of at least 60', () => {
    expect(PHRASINGS.length).toBeGreaterThanOrEqual(60)
  })

  it.each(PHRASINGS)('%s', (content, expected) => check(content, expected))
})

describe('follow-ups', () => {
  const afterTime: ChatMessage[] = [
    { role: 'user', content: 'What time is it in Tokyo?' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_current_time', arguments: '{"timezone":"Asia/Tokyo"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: '{"timezone":"Asia/Tokyo","local":"10:00"}' },
    { role: 'assistant', content: 'In Asia/Tokyo it is 10:00.' },
  ]
  const afterSum: ChatMessage[] = [
    { role: 'user', content: 'what is 12 * 7' },
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'calculate', arguments: '{"expression":"12 * 7"}' } }] },
    { role: 'tool', tool_call_id: 'c1', content: '{"expression":"12 * 7","result":84}' },
    { role: 'assistant', content: '12 * 7 = 84' },
  ]

  it.each([
    ['and in Madrid?', time('Europe/Madrid')],
    ['what about London', time('Europe/London')],
    ['how about New York?', time('America/New_York')],
  ])('reads "%s" after a time question as the same question', (content, call) => {
    expect(plan([...afterTime, { role: 'user', content }])).toEqual({ kind: 'tool-calls', calls: [call] })
  })

  it('reads the previous result from the answer text when the conversation is sent again without tool messages', () => {
    const reply = plan([{ role: 'user', content: 'what is 12 * 7' }, { role: 'assistant', content: '`12 * 7` = **84**\n\n_Answered by the offline demo model with `calculate`._' }, { role: 'user', content: 'now divide that by 4' }])
    expect(evaluateExpression(String((reply as Extract<typeof reply, { kind: 'tool-calls' }>).calls[0]!.arguments.expression))).toBe(21)
  })

  it('asks for the weather there after a time question', () => {
    expect(plan([...afterTime, { role: 'user', content: 'and the weather there?' }])).toEqual({ kind: 'tool-calls', calls: [weather('Tokyo')] })
  })

  it.each([
    ['now divide that by 4', 21],
    ['double it', 168],
    ['add 16 to that', 100],
    ['that times 2', 168],
    ['and divided by 4?', 21],
    ['multiply it by ten', 840],
  ])('puts the previous result into "%s"', (content, result) => {
    const reply = plan([...afterSum, { role: 'user', content }])
    expect(reply.kind, content).toBe('tool-calls')
    const call = (reply as Extract<typeof reply, { kind: 'tool-calls' }>).calls[0]!
    expect(evaluateExpression(String(call.arguments.expression))).toBe(result)
  })
})

describe('what it cannot do', () => {
  it('says so briefly and differently, without the introduction', () => {
    const answers = ['Tell me a joke', 'Who won the world cup in 1998?', 'Translate hello into French', 'What is love?', 'Summarise this article for me'].map((content) => {
      const reply = ask(content)
      expect(reply.kind).toBe('text')
      return (reply as { text: string }).text
    })
    for (const answer of answers) {
      expect(answer).not.toMatch(/Hi! I am the/)
      expect(answer.length).toBeLessThan(260)
      expect(answer).toMatch(/try "/)
    }
    expect(new Set(answers.map(answer => answer.split('.')[0])).size).toBeGreaterThan(1)
  })

  it('says when it does not know a place\'s time zone instead of guessing one', () => {
    expect(ask('what time is it in Springfield?')).toEqual({ kind: 'text', text: expect.stringMatching(/do not know which time zone "Springfield"/) })
  })

  it('repeats what it is asked to say, verbatim (markup included: rendering makes it harmless)', () => {
    expect(ask('Say hello world')).toEqual({ kind: 'text', text: 'hello world' })
    expect(ask('repeat after me: <b>bold</b> ![x](https://a.example/p.png)')).toEqual({ kind: 'text', text: '<b>bold</b> ![x](https://a.example/p.png)' })
    expect(ask('Please echo: 42')).toEqual({ kind: 'text', text: '42' })
  })

  it('still introduces itself to a greeting', () => {
    expect((ask('hello there') as { text: string }).text).toMatch(/offline demo model/)
  })
})

describe('the demo model and the tools the browser runs', () => {
  const browserTools = [
    { type: 'function' as const, function: { name: 'get_user_location', description: 'Where the user is.', parameters: { type: 'object' as const, properties: {} } } },
    { type: 'function' as const, function: { name: 'get_browser_context', description: 'The browser\'s time zone.', parameters: { type: 'object' as const, properties: {} } } },
  ]
  const withBrowser = (content: string) => planDemoReply({ messages: [{ role: 'user', content }], tools: [...getEnabledDefinitions(), ...browserTools] })

  it.each([
    ['Where am I?', 'get_user_location'],
    ['what is my current location', 'get_user_location'],
    ['What\'s my time zone?', 'get_browser_context'],
    ['what time is it here', 'get_browser_context'],
  ])('%s → %s, when the app offers it', (content, tool) => {
    const reply = withBrowser(content)
    expect(reply).toMatchObject({ kind: 'tool-calls', calls: [{ name: tool }] })
    // Without the browser's tools, no such call is made.
    expect(JSON.stringify(ask(content))).not.toContain(tool)
  })

  it('answers from what the browser sent back', () => {
    const reply = planDemoReply({
      tools: browserTools,
      messages: [
        { role: 'user', content: 'Where am I?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_user_location', arguments: '{"precision":"city"}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: '{"latitude":52.52,"longitude":13.4,"accuracyMeters":1000}' },
      ],
    })
    expect(reply).toMatchObject({ kind: 'text', text: expect.stringContaining('**52.52, 13.4**') })
  })
})
