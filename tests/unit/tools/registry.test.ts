import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { clearServerTools, configureServerToolRegistry, DEFAULT_TOOL_TIMEOUT_MS, getEnabledDefinitions, getServerTool, listServerTools, registerServerTool, unregisterServerTool } from '../../../server/lib/tools/registry'
import type { ServerToolDefinition, ToolExecutionContext } from '../../../server/lib/tools/tool-types'
import { executeServerTool } from '../../../server/lib/tools/execute-tool'
import { defineServerTool } from '../../../server/lib/tools/define-tool'

function weatherDefinition(overrides: Partial<ServerToolDefinition> = {}): ServerToolDefinition {
  return {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Weather for a city',
      parameters: {
        type: 'object',
        properties: {
          city: { type: 'string', minLength: 1 },
          days: { type: 'integer', minimum: 1, maximum: 7 },
        },
        required: ['city'],
      },
    },
    ...overrides,
  }
}

function namedTool(name: string, extra: Partial<ServerToolDefinition> = {}): ServerToolDefinition {
  return { type: 'function', function: { name, description: `${name} tool`, parameters: { type: 'object', properties: {} } }, ...extra }
}

beforeEach(() => {
  clearServerTools()
  configureServerToolRegistry({ defaultTimeoutMs: DEFAULT_TOOL_TIMEOUT_MS })
})

afterEach(() => {
  vi.useRealTimers()
})

describe('registration', () => {
  it('registers a tool under its function name with hybrid runtime by default', () => {
    registerServerTool(weatherDefinition(), () => 'sunny')
    const tool = getServerTool('get_weather')
    expect(tool).toMatchObject({ name: 'get_weather', description: 'Weather for a city', runtime: 'hybrid', enabled: true })
    expect(tool?.parameters.required).toEqual(['city'])
  })

  it('refuses a duplicate name unless override is set, and override replaces the handler', async () => {
    registerServerTool(weatherDefinition(), () => 'first')
    expect(() => registerServerTool(weatherDefinition(), () => 'second')).toThrow(/already registered.*override: true/)
    expect((await executeServerTool('get_weather', '{"city":"Oslo"}')).result).toBe('first')

    registerServerTool(weatherDefinition(), () => 'second', { override: true })
    expect((await executeServerTool('get_weather', '{"city":"Oslo"}')).result).toBe('second')
    expect(listServerTools()).toHaveLength(1)
  })

  it('takes runtime from options first, then the definition, then hybrid', () => {
    registerServerTool(namedTool('a', { runtime: 'server' }), () => 'x', { runtime: 'client' })
    registerServerTool(namedTool('b', { runtime: 'server' }), () => 'x')
    registerServerTool(namedTool('c'), () => 'x')
    expect(listServerTools().map(tool => [tool.name, tool.runtime])).toEqual([['a', 'client'], ['b', 'server'], ['c', 'hybrid']])
  })

  it('unregisters tools and reports whether one existed', async () => {
    registerServerTool(weatherDefinition(), () => 'sunny')
    expect(unregisterServerTool('get_weather')).toBe(true)
    expect(unregisterServerTool('get_weather')).toBe(false)
    expect(getServerTool('get_weather')).toBeUndefined()
    expect((await executeServerTool('get_weather', '{"city":"Oslo"}')).error).toBe('Tool "get_weather" is not registered on server.')
    // The name is free again.
    expect(() => registerServerTool(weatherDefinition(), () => 'again')).not.toThrow()
  })

  it('lists tools in registration order', () => {
    for (const name of ['zeta', 'alpha', 'mid']) registerServerTool(namedTool(name), () => name)
    expect(listServerTools().map(tool => tool.name)).toEqual(['zeta', 'alpha', 'mid'])
  })

  it.each([
    ['a bad name', namedTool('has spaces'), /Invalid tool name/],
    ['a name over 64 characters', namedTool('x'.repeat(65)), /Invalid tool name/],
    ['parameters that are not an object schema', { type: 'function', function: { name: 'arr', parameters: { type: 'array' } } }, /must describe an object/],
    ['an invalid JSON schema', { type: 'function', function: { name: 'bad', parameters: { type: 'object', properties: { a: { type: 'no-such-type' } } } } }, /invalid parameters schema/],
    // A validator is compiled at a tool's first call; these are still found when it registers.
    ['a pattern that is not a regular expression', { type: 'function', function: { name: 'bad', parameters: { type: 'object', properties: { a: { type: 'string', pattern: '(' } } } } }, /invalid parameters schema/],
    ['a $ref to nothing', { type: 'function', function: { name: 'bad', parameters: { type: 'object', properties: { a: { $ref: '#/definitions/missing' } } } } }, /invalid parameters schema/],
    ['a missing function block', { type: 'function' }, /shape/],
    ['a wrong definition type', { type: 'retrieval', function: { name: 'r' } }, /definition.type must be "function"/],
  ])('throws a clear error for %s', (_label, definition, message) => {
    expect(() => registerServerTool(definition as ServerToolDefinition, () => 'x')).toThrow(message)
  })

  it('rejects invalid runtimes, timeouts and handlers', () => {
    expect(() => registerServerTool(namedTool('a'), () => 'x', { runtime: 'edge' as never })).toThrow(/runtime must be one of/)
    expect(() => registerServerTool(namedTool('a'), () => 'x', { timeoutMs: 0 })).toThrow(/timeoutMs must be a positive/)
    expect(() => registerServerTool(namedTool('a'), () => 'x', { timeoutMs: Number.NaN })).toThrow(/timeoutMs/)
    expect(() => registerServerTool(namedTool('a'), 'not a function' as never)).toThrow(/handler must be a function/)
    expect(listServerTools()).toHaveLength(0)
  })

  it('converts a zod parameters schema to JSON Schema without $schema', () => {
    registerServerTool({
      type: 'function',
      function: {
        name: 'search',
        description: 'Search',
        parameters: z.object({ query: z.string().describe('What to look for'), limit: z.number().int().default(5) }),
      },
    }, () => 'ok')
    const { parameters } = getServerTool('search')!
    expect(parameters).not.toHaveProperty('$schema')
    expect(parameters.type).toBe('object')
    expect(parameters.required).toEqual(['query'])
    expect(parameters.properties).toMatchObject({ query: { type: 'string', description: 'What to look for' }, limit: { type: 'integer', default: 5 } })
  })
})

describe('getEnabledDefinitions', () => {
  it('returns enabled, server-executable tools in the exact OpenRouter tools shape', () => {
    registerServerTool(weatherDefinition(), () => 'sunny')
    registerServerTool(namedTool('browser_only'), () => 'x', { runtime: 'client' })
    registerServerTool(namedTool('switched_off', { enabled: false }), () => 'x')
    registerServerTool(namedTool('server_side'), () => 'x', { runtime: 'server' })

    const definitions = getEnabledDefinitions()
    expect(definitions.map(definition => definition.function.name)).toEqual(['get_weather', 'server_side'])
    expect(definitions[0]).toEqual({
      type: 'function',
      function: {
        name: 'get_weather',
        description: 'Weather for a city',
        parameters: weatherDefinition().function.parameters,
      },
    })
    expect(Object.keys(definitions[0]!)).toEqual(['type', 'function'])
  })

  it('filters by name and hands out copies the caller cannot use to change the registry', () => {
    registerServerTool(weatherDefinition(), () => 'sunny')
    registerServerTool(namedTool('other'), () => 'x')
    const [definition] = getEnabledDefinitions(['get_weather', 'not_registered'])
    expect(getEnabledDefinitions(['get_weather'])).toHaveLength(1)
    ;(definition!.function.parameters.required as string[]).push('mutated')
    expect(getServerTool('get_weather')!.parameters.required).toEqual(['city'])
  })
})

describe('executeServerTool', () => {
  it('runs the handler with parsed arguments and context, and reports timing', async () => {
    const handler = vi.fn((args: Record<string, unknown>, _context: ToolExecutionContext) => `weather in ${String(args.city)}`)
    registerServerTool(weatherDefinition(), handler, { runtime: 'server' })
    const outcome = await executeServerTool('get_weather', '{"city":"Tokyo","days":2}', { userId: 'u1', threadId: 't1', jobId: 'j1' })

    expect(outcome).toEqual({
      result: 'weather in Tokyo',
      toolName: 'get_weather',
      timedOut: false,
      runtime: 'server',
      executionTimeMs: expect.any(Number),
    })
    expect(outcome.executionTimeMs).toBeGreaterThanOrEqual(0)
    const [args, context] = handler.mock.calls[0]!
    expect(args).toEqual({ city: 'Tokyo', days: 2 })
    expect(context).toMatchObject({ userId: 'u1', threadId: 't1', jobId: 'j1' })
    expect(context!.signal).toBeInstanceOf(AbortSignal)
  })

  it('reports an unknown tool with the exact message', async () => {
    expect(await executeServerTool('nope', '{}')).toMatchObject({
      result: null,
      toolName: 'nope',
      timedOut: false,
      error: 'Tool "nope" is not registered on server.',
      errorCode: 'not_registered',
    })
  })

  it('rejects client-only tools without running them', async () => {
    const handler = vi.fn(() => 'ran')
    registerServerTool(namedTool('pick_file'), handler, { runtime: 'client' })
    const outcome = await executeServerTool('pick_file', '{}')
    expect(outcome).toMatchObject({ result: null, errorCode: 'client_only', runtime: 'client' })
    expect(outcome.error).toMatch(/client-only/)
    expect(handler).not.toHaveBeenCalled()
  })

  it('refuses disabled tools', async () => {
    const handler = vi.fn(() => 'ran')
    registerServerTool(namedTool('off', { enabled: false }), handler)
    expect(await executeServerTool('off', '{}')).toMatchObject({ errorCode: 'disabled', error: 'Tool "off" is disabled.' })
    expect(handler).not.toHaveBeenCalled()
  })

  describe('argument validation', () => {
    beforeEach(() => {
      registerServerTool(weatherDefinition(), () => 'sunny')
    })

    it.each([
      ['invalid JSON', '{"city": "Oslo"', /not valid JSON/],
      ['a JSON array', '["Oslo"]', /must be a JSON object, got an array/],
      ['JSON null', 'null', /must be a JSON object, got null/],
      ['a JSON string', '"Oslo"', /must be a JSON object, got a string/],
      ['a missing required field', '{"days": 2}', /missing required field "city"/],
      ['a wrong type', '{"city": 42}', /field "city" must be string/],
      ['an out-of-range number', '{"city": "Oslo", "days": 9}', /field "days" must be <= 7/],
      ['empty arguments against a required field', '', /missing required field "city"/],
    ])('returns a validation error naming the problem for %s', async (_label, argsJson, message) => {
      const outcome = await executeServerTool('get_weather', argsJson)
      expect(outcome.result).toBeNull()
      expect(outcome.errorCode).toBe('invalid_arguments')
      expect(outcome.error).toMatch(/^Invalid arguments for tool "get_weather": /)
      expect(outcome.error).toMatch(message)
    })

    it('lists every invalid field at once', async () => {
      const outcome = await executeServerTool('get_weather', '{"city": "", "days": "two"}')
      expect(outcome.error).toMatch(/field "city" must NOT have fewer than 1 characters/)
      expect(outcome.error).toMatch(/field "days" must be integer/)
    })

    it('names nested fields by path', async () => {
      registerServerTool({
        type: 'function',
        function: {
          name: 'order',
          parameters: {
            type: 'object',
            properties: { items: { type: 'array', items: { type: 'object', properties: { qty: { type: 'integer' } }, required: ['qty'] } } },
            required: ['items'],
          },
        },
      }, () => 'ok')
      const outcome = await executeServerTool('order', '{"items":[{"qty":1},{"qty":"x"},{}]}')
      expect(outcome.error).toMatch(/field "items\[1\].qty" must be integer/)
      expect(outcome.error).toMatch(/missing required field "items\[2\].qty"/)
    })

    it('treats empty, whitespace and missing arguments as {} for tools without required fields', async () => {
      const handler = vi.fn((_args: Record<string, unknown>) => 'ok')
      registerServerTool(namedTool('no_args'), handler)
      for (const argsJson of ['', '   ', undefined, null]) {
        expect((await executeServerTool('no_args', argsJson)).result).toBe('ok')
      }
      expect(handler.mock.calls.every(([args]) => JSON.stringify(args) === '{}')).toBe(true)
    })
  })

  describe('prototype pollution', () => {
    it.each(['__proto__', 'constructor', 'prototype'])('refuses a "%s" key at any depth and pollutes nothing', async (key) => {
      const handler = vi.fn((args: Record<string, unknown>) => JSON.stringify(Object.assign({}, args)))
      registerServerTool({ type: 'function', function: { name: 'merge', parameters: { type: 'object' } } }, handler)

      const top = await executeServerTool('merge', `{"${key}": {"polluted": true}}`)
      const nested = await executeServerTool('merge', `{"a": {"b": [{"${key}": {"polluted": true}}]}}`)

      expect(top).toMatchObject({ errorCode: 'invalid_arguments', error: expect.stringContaining(`field "${key}" is not allowed`) })
      expect(nested).toMatchObject({ errorCode: 'invalid_arguments', error: expect.stringContaining(`field "a.b[0].${key}" is not allowed`) })
      expect(handler).not.toHaveBeenCalled()
      expect(({} as Record<string, unknown>).polluted).toBeUndefined()
      expect(Object.prototype).not.toHaveProperty('polluted')
    })
  })

  describe('size limits', () => {
    it('refuses arguments over 64 KiB before parsing them', async () => {
      const handler = vi.fn(() => 'ok')
      registerServerTool({ type: 'function', function: { name: 'echo', parameters: { type: 'object', properties: { text: { type: 'string' } } } } }, handler)
      const justUnder = JSON.stringify({ text: 'a'.repeat(64 * 1024 - 20) })
      const over = JSON.stringify({ text: 'a'.repeat(64 * 1024) })
      expect((await executeServerTool('echo', justUnder)).result).toBe('ok')
      const outcome = await executeServerTool('echo', over)
      expect(outcome).toMatchObject({ result: null, errorCode: 'invalid_arguments' })
      expect(outcome.error).toMatch(/over the 64\.0 KiB limit/)
      expect(handler).toHaveBeenCalledTimes(1)
    })

    it('counts bytes, not characters', async () => {
      registerServerTool({ type: 'function', function: { name: 'echo', parameters: { type: 'object' } } }, () => 'ok')
      // 22,000 three-byte characters: under 64 K characters, over 64 KiB of UTF-8.
      const outcome = await executeServerTool('echo', JSON.stringify({ text: '€'.repeat(22_000) }))
      expect(outcome.errorCode).toBe('invalid_arguments')
    })

    it('refuses results over 256 KiB with a clear error', async () => {
      registerServerTool(namedTool('big'), () => 'x'.repeat(256 * 1024 + 1))
      registerServerTool(namedTool('fits'), () => 'x'.repeat(256 * 1024))
      expect((await executeServerTool('fits', '')).result).toHaveLength(256 * 1024)
      const outcome = await executeServerTool('big', '')
      expect(outcome).toMatchObject({ result: null, errorCode: 'invalid_result' })
      expect(outcome.error).toMatch(/over the 256 KiB limit; return less data/)
    })
  })

  describe('results', () => {
    it.each([
      ['an object', { temperature: 70, unit: 'F' }, '{"temperature":70,"unit":"F"}'],
      ['an array', [1, 'two'], '[1,"two"]'],
      ['a number', 42, '42'],
      ['a boolean', false, 'false'],
      ['null', null, 'null'],
      ['an empty string', '', ''],
    ])('serialises %s', async (_label, value, expected) => {
      registerServerTool(namedTool('value'), () => value)
      expect((await executeServerTool('value', '')).result).toBe(expected)
    })

    it('awaits async handlers', async () => {
      registerServerTool(namedTool('later'), async () => {
        await new Promise(resolve => setTimeout(resolve, 5))
        return { done: true }
      })
      expect((await executeServerTool('later', '')).result).toBe('{"done":true}')
    })

    it.each([
      ['undefined', () => undefined, /returned nothing/],
      ['a function', () => () => 1, /function, which is not JSON-serialisable/],
      ['a cycle', () => { const a: Record<string, unknown> = {}; a.self = a; return a }, /not JSON-serialisable/],
      ['a BigInt', () => ({ n: 10n }), /not JSON-serialisable/],
    ])('turns %s into an error', async (_label, handler, message) => {
      registerServerTool(namedTool('bad_value'), handler)
      const outcome = await executeServerTool('bad_value', '')
      expect(outcome).toMatchObject({ result: null, errorCode: 'invalid_result', timedOut: false })
      expect(outcome.error).toMatch(message)
    })
  })

  describe('failures', () => {
    it('turns a thrown error into an error result', async () => {
      registerServerTool(namedTool('boom'), () => {
        throw new Error('database unreachable')
      })
      expect(await executeServerTool('boom', '')).toMatchObject({
        result: null,
        timedOut: false,
        errorCode: 'execution_failed',
        error: 'Tool "boom" failed: database unreachable',
      })
    })

    it('turns a rejection with a non-Error value into an error result', async () => {
      registerServerTool(namedTool('reject'), () => Promise.reject({ reason: 'nope' }))
      expect((await executeServerTool('reject', '')).error).toBe('Tool "reject" failed: {"reason":"nope"}')
    })
  })

  describe('timeouts and aborts', () => {
    it('times out, says so, and aborts the signal the handler was given', async () => {
      vi.useFakeTimers()
      let handlerSignal: AbortSignal | undefined
      registerServerTool(namedTool('slow'), (_args, context) => {
        handlerSignal = context.signal
        return new Promise(() => {})
      }, { timeoutMs: 50 })

      const pending = executeServerTool('slow', '')
      await vi.advanceTimersByTimeAsync(49)
      expect(handlerSignal?.aborted).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      const outcome = await pending

      expect(outcome).toMatchObject({ result: null, timedOut: true, errorCode: 'timeout', error: 'Tool "slow" timed out after 50 ms.' })
      expect(handlerSignal?.aborted).toBe(true)
      expect((handlerSignal?.reason as DOMException).name).toBe('TimeoutError')
      expect(vi.getTimerCount()).toBe(0)
    })

    it('uses the configured default timeout when the tool sets none', async () => {
      vi.useFakeTimers()
      configureServerToolRegistry({ defaultTimeoutMs: 200 })
      registerServerTool(namedTool('slow'), () => new Promise(() => {}))
      const pending = executeServerTool('slow', '')
      await vi.advanceTimersByTimeAsync(200)
      expect(await pending).toMatchObject({ timedOut: true, error: 'Tool "slow" timed out after 200 ms.' })
    })

    it('defaults to 10 seconds', async () => {
      vi.useFakeTimers()
      registerServerTool(namedTool('slow'), () => new Promise(() => {}))
      const pending = executeServerTool('slow', '')
      await vi.advanceTimersByTimeAsync(9_999)
      let settled = false
      void pending.then(() => { settled = true })
      await vi.advanceTimersByTimeAsync(0)
      expect(settled).toBe(false)
      await vi.advanceTimersByTimeAsync(1)
      expect(await pending).toMatchObject({ timedOut: true })
    })

    it('clears its timer when the handler finishes in time', async () => {
      vi.useFakeTimers()
      registerServerTool(namedTool('fast'), () => 'done')
      expect((await executeServerTool('fast', '')).result).toBe('done')
      expect(vi.getTimerCount()).toBe(0)
    })

    it('stops when the caller aborts and passes the abort on to the handler', async () => {
      let handlerSignal: AbortSignal | undefined
      registerServerTool(namedTool('long'), (_args, context) => {
        handlerSignal = context.signal
        return new Promise(() => {})
      })
      const controller = new AbortController()
      const pending = executeServerTool('long', '', { signal: controller.signal })
      await Promise.resolve()
      controller.abort()
      expect(await pending).toMatchObject({ result: null, timedOut: false, errorCode: 'aborted' })
      expect(handlerSignal?.aborted).toBe(true)
    })

    it('does not start the handler when the caller has already aborted', async () => {
      const handler = vi.fn(() => 'ran')
      registerServerTool(namedTool('never'), handler)
      const outcome = await executeServerTool('never', '', { signal: AbortSignal.abort() })
      expect(outcome.errorCode).toBe('aborted')
      expect(handler).not.toHaveBeenCalled()
    })
  })

  describe('zod-defined tools', () => {
    const schema = z.object({
      city: z.string().trim().min(1),
      unit: z.enum(['c', 'f']).default('c'),
    }).refine(args => args.city.toLowerCase() !== 'atlantis', { message: 'Atlantis has no weather service', path: ['city'] })

    it('applies defaults and transforms before calling the handler', async () => {
      const handler = vi.fn((_args: Record<string, unknown>) => 'ok')
      registerServerTool({ type: 'function', function: { name: 'zw', parameters: schema as unknown as z.ZodObject } }, handler)
      await executeServerTool('zw', '{"city":"  Lima  "}')
      expect(handler.mock.calls[0]![0]).toEqual({ city: 'Lima', unit: 'c' })
    })

    it('enforces refinements JSON Schema cannot express', async () => {
      registerServerTool({ type: 'function', function: { name: 'zw', parameters: schema as unknown as z.ZodObject } }, () => 'ok')
      expect((await executeServerTool('zw', '{"city":"Atlantis"}')).error).toMatch(/field "city" Atlantis has no weather service/)
      expect((await executeServerTool('zw', '{"city":"   "}')).error).toMatch(/field "city"/)
      expect((await executeServerTool('zw', '{"city":"Lima","unit":"k"}')).error).toMatch(/field "unit" must be one of "c", "f"/)
    })
  })
})

describe('defineServerTool', () => {
  it('packages a one-file tool as the arguments of registerServerTool', async () => {
    const tool = defineServerTool({
      name: 'roll_die',
      description: 'Rolls a die',
      parameters: z.object({ sides: z.number().int().min(2).default(6) }),
      runtime: 'server',
      timeoutMs: 500,
      handler: ({ sides }) => ({ sides, value: sides }),
    })
    const registered = registerServerTool(tool.definition, tool.handler, tool.options)
    expect(registered).toMatchObject({ name: 'roll_die', runtime: 'server', timeoutMs: 500 })
    expect((await executeServerTool('roll_die', '')).result).toBe('{"sides":6,"value":6}')
    expect((await executeServerTool('roll_die', '{"sides":1}')).errorCode).toBe('invalid_arguments')
  })

  it('accepts a plain JSON Schema and tools without parameters', async () => {
    const withSchema = defineServerTool({
      name: 'echo',
      description: 'Echo',
      parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
      handler: args => String(args.text),
    })
    const withoutParameters = defineServerTool({ name: 'ping', description: 'Ping', handler: () => 'pong' })
    for (const tool of [withSchema, withoutParameters]) registerServerTool(tool.definition, tool.handler, tool.options)
    expect((await executeServerTool('echo', '{"text":"hi"}')).result).toBe('hi')
    expect((await executeServerTool('ping', '')).result).toBe('pong')
    expect(getServerTool('ping')!.parameters).toEqual({ type: 'object', properties: {} })
  })
})
