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

/** Everyday phrasings a person might type on a first day (issue 29): typos, umbrellas, tips and discounts, currency. */
const EVERYDAY: Array<[string, Expected[]]> = [
  ['whats the time in berlin', [time('Europe/Berlin')]],
  ['time now in Seoul?', [time('Asia/Seoul')]],
  ['hey, current time in Mumbai please', [time('Asia/Kolkata')]],
  ['what time is it over in Chicago right now', [time('America/Chicago')]],
  ['Could you tell me the time in Toronto?', [time('America/Toronto')]],
  ['local time in Singapore', [time('Asia/Singapore')]],
  ['what hour is it in Moscow', [time('Europe/Moscow')]],
  ['time in cairo pls', [time('Africa/Cairo')]],
  ['tokyo time?', [time('Asia/Tokyo')]],
  ['What day is it in Auckland right now?', [time('Pacific/Auckland')]],
  ['Is it morning in Sydney?', [time('Australia/Sydney')]],
  ['What time is it in NYC at the moment?', [time('America/New_York')]],
  ['What is the time in Rio?', [time('America/Sao_Paulo')]],
  ['time in hanoi', [time('Asia/Ho_Chi_Minh')]],
  ['what time is it in new delhi', [time('Asia/Kolkata')]],
  ['wether in paris', [weather('Paris')]],
  ['weathr in Rome today', [weather('Rome')]],
  ['whats the weaher like in Amsterdam', [weather('Amsterdam')]],
  ['the wheather in Vienna', [weather('Vienna')]],
  ['waether for Oslo', [weather('Oslo')]],
  ['Do I need an umbrella in London today?', [weather('London')]],
  ['should I bring an umbrella in Seattle', [weather('Seattle')]],
  ['Do I need a jacket in Chicago?', [weather('Chicago')]],
  ['Is it sunny in Barcelona?', [weather('Barcelona')]],
  ['how warm is it in Athens', [weather('Athens')]],
  ['what\'s the temperature in Toronto in fahrenheit', [weather('Toronto', 'fahrenheit')]],
  ['is it snowing in Denver?', [weather('Denver')]],
  ['Will it rain in Dublin?', [weather('Dublin')]],
  ['How humid is it in Singapore?', [weather('Singapore')]],
  ['weather berlin', [weather('Berlin')]],
  ['What is 18% tip on $45?', [calc(8.1)]],
  ['20 percent tip on 60 dollars', [calc(12)]],
  ['how much is a 15% tip on 80', [calc(12)]],
  ['tip of 20% on 35', [calc(7)]],
  ['what is 25% off 80', [calc(60)]],
  ['30% off $120', [calc(84)]],
  ['10% discount on 250', [calc(225)]],
  ['price after a 40% discount on £50', [calc(30)]],
  ['what is 7.5% of 2000', [calc(150)]],
  ['what is 15% of 1,200', [calc(180)]],
  ['what is €30 plus €12.50', [calc(42.5)]],
  ['3 plus 4 times 2', [calc(11)]],
  ['What is 1000 minus 1', [calc(999)]],
  ['calculate 45 / 9', [calc(5)]],
  ['How much is 6 times 7?', [calc(42)]],
  ['what\'s 2 to the power of 8', [calc(256)]],
  ['sqrt 81', [calc(9)]],
  ['what is 50% of 50', [calc(25)]],
  ['eleven plus twelve', [calc(23)]],
  ['nine squared', [calc(81)]],
  ['what is 2.5 * 4', [calc(10)]],
  ['what is 100 - 37?', [calc(63)]],
  ['1/4 + 1/4', [calc(0.5)]],
  ['work out 17 * 23', [calc(391)]],
  ['evaluate (2+3)*(4+5)', [calc(45)]],
  ['what is 99 plus 1', [calc(100)]],
  ['so what\'s 8 times 8?', [calc(64)]],
  ['ok and 81 divided by 9', [calc(9)]],
  ['how many km is 26.2 miles', [convert(26.2, 'mi', 'km')]],
  ['convert 5 feet to cm', [convert(5, 'ft', 'cm')]],
  ['180 cm in feet', [convert(180, 'cm', 'ft')]],
  ['70 kg to lbs', [convert(70, 'kg', 'lb')]],
  ['1 gallon in liters', [convert(1, 'gal', 'l')]],
  ['what is 30 C in F', [convert(30, 'c', 'f')]],
  ['how many meters in a kilometer', [convert(1, 'km', 'm')]],
  ['100 km/h in mph', [convert(100, 'km/h', 'mph')]],
  ['3 miles to km', [convert(3, 'mi', 'km')]],
  ['convert 0 celsius to kelvin', [convert(0, 'c', 'k')]],
  ['12 inches in cm', [convert(12, 'in', 'cm')]],
  ['How many ounces in a pound?', [convert(1, 'lb', 'oz')]],
  ['time in Lagos', [time('Africa/Lagos')]],
  ['weather in Honolulu in fahrenheit', [weather('Honolulu', 'fahrenheit')]],
  ['how much is 12.5% of 80', [calc(10)]],
  ['a 25% tip on a bill of 48', [calc(12)]],
]

/** What it half-understands or does not understand: a helpful answer, never a tool call that fails. */
const GRACEFUL: Array<[string, RegExp]> = [
  ['what is the meaning of life', /tell the time, do arithmetic/],
  ['and what about it?', /tell the time, do arithmetic/],
  ['what is 15% of that', /tell the time, do arithmetic|previous result/],
  ['calculate the area of my kitchen', /tell the time, do arithmetic/],
  ['what is x + 2', /tell the time, do arithmetic/],
  ['how much is 2 + banana', /tell the time, do arithmetic/],
  ['what\'s 5 apples plus 3 oranges', /tell the time, do arithmetic/],
  ['convert 500 ml to ounces', /same kind/],
  ['how many kg in a mile', /same kind/],
  ['weather', /Which place/],
  ['Is it going to be nice tomorrow?', /Which place/],
  ['Do I need an umbrella?', /Which place/],
  ['time in Atlantis', /do not know which time zone "Atlantis"/],
  ['Write a long story about a dragon', /cannot write a story about a dragon/],
  ['Write me a poem about the sea', /cannot write/],
  ['convert 2 cups to ml', /tell the time, do arithmetic/],
  ['what is 1 divided by 0', /tell the time, do arithmetic/],
]

describe('the demo model reads phrasings the way people write them', () => {
  it('has a table of at least 150 phrasings', () => {
    expect(PHRASINGS.length + EVERYDAY.length + GRACEFUL.length).toBeGreaterThanOrEqual(150)
  })

  it.each(PHRASINGS)('%s', (content, expected) => check(content, expected))
  it.each(EVERYDAY)('%s', (content, expected) => check(content, expected))

  it.each(GRACEFUL)('answers "%s" in words, with no tool call', (content, answer) => {
    const reply = ask(content)
    expect(reply, content).toMatchObject({ kind: 'text', text: expect.stringMatching(answer) })
  })

  it('never plans a calculation the calculator would refuse, whatever the words', () => {
    const words = ['what', 'is', 'of', 'that', 'x', 'plus', 'minus', 'times', '15%', '2', 'and', 'banana', '(', ')', '^', 'sqrt', 'half', 'percent', 'tip', 'off', '$', 'divided by', 'it']
    let seed = 7
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648)
    for (let sample = 0; sample < 500; sample++) {
      const content = Array.from({ length: 2 + (next() % 6) }, () => words[next() % words.length]).join(' ')
      const reply = ask(content)
      if (reply.kind !== 'tool-calls') continue
      for (const call of reply.calls.filter(item => item.name === 'calculate')) {
        expect(() => evaluateExpression(String(call.arguments.expression)), `${content} → ${String(call.arguments.expression)}`).not.toThrow()
      }
    }
  })
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
    ['and Berlin?', time('Europe/Berlin')],
  ])('reads "%s" after a time question as the same question', (content, call) => {
    expect(plan([...afterTime, { role: 'user', content }])).toEqual({ kind: 'tool-calls', calls: [call] })
  })

  const afterWeather: ChatMessage[] = [
    { role: 'user', content: 'weather in Berlin?' },
    { role: 'assistant', content: 'It is **sunny** in Berlin: **20 °C**, humidity 40%. (Demo data: this tool always reports sunshine.)' },
  ]
  it.each([
    ['and in Madrid?', weather('Madrid')],
    ['what about Rome', weather('Rome')],
    ['Paris?', weather('Paris')],
    ['how about in Lisbon tomorrow', weather('Lisbon')],
    ['and Tokyo', weather('Tokyo')],
  ])('reads "%s" after a weather question as the same question for another place', (content, call) => {
    expect(plan([...afterWeather, { role: 'user', content }])).toEqual({ kind: 'tool-calls', calls: [call] })
  })

  it('asks for the weather of the place already named when it names none', () => {
    expect(plan([...afterTime, { role: 'user', content: 'and the weather?' }])).toEqual({ kind: 'tool-calls', calls: [weather('Tokyo')] })
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
    ['and 25% of that?', 21],
    ['what\'s 10% of that', 8.4],
    ['minus 4', 80],
    ['take 50% off that', 42],
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
