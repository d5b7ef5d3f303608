import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { builtinServerTools } from '../../../server/lib/tools/builtin'
import { describeTimeInZone } from '../../../server/lib/tools/builtin/get-current-time'
import { sunnyWeather } from '../../../server/lib/tools/builtin/get-current-weather'
import { convertUnits } from '../../../server/tools/convert-units'
import convertUnitsTool from '../../../server/tools/convert-units'
import { clearServerTools, getEnabledDefinitions, registerServerTool } from '../../../server/lib/tools/registry'
import { executeServerTool } from '../../../server/lib/tools/execute-tool'

function parsed(outcome: { result: string | null, error?: string }) {
  expect(outcome.error).toBeUndefined()
  return JSON.parse(outcome.result!)
}

beforeEach(() => {
  clearServerTools()
  for (const tool of [...builtinServerTools, convertUnitsTool]) registerServerTool(tool.definition, tool.handler, tool.options)
})

afterEach(() => {
  vi.useRealTimers()
})

describe('built-in tools', () => {
  it('are offered to the model with descriptions and parameter schemas', () => {
    const definitions = getEnabledDefinitions()
    expect(definitions.map(d => d.function.name)).toEqual(['get_current_time', 'calculate', 'get_current_weather', 'convert_units'])
    for (const definition of definitions) {
      expect(definition.function.description.length).toBeGreaterThan(20)
      expect(definition.function.parameters.type).toBe('object')
    }
    const weather = definitions.find(d => d.function.name === 'get_current_weather')!
    expect(weather.function.parameters.required).toEqual(['location'])
  })
})

describe('get_current_time', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(new Date('2026-11-22T06:30:15Z'))
  })

  it('defaults to UTC', async () => {
    expect(parsed(await executeServerTool('get_current_time', ''))).toMatchObject({
      timezone: 'UTC',
      iso: '2026-11-22T06:30:15+00:00',
      utcOffset: '+00:00',
      unixMs: Date.parse('2026-11-22T06:30:15Z'),
    })
  })

  it('gives the time in an IANA zone with its offset', async () => {
    const tokyo = parsed(await executeServerTool('get_current_time', '{"timezone":"Asia/Tokyo"}'))
    expect(tokyo).toMatchObject({ timezone: 'Asia/Tokyo', iso: '2026-11-22T15:30:15+09:00', utcOffset: '+09:00' })
    expect(tokyo.local).toMatch(/Sunday, November 22, 2026 at 3:30:15\sPM/)
  })

  it('handles half-hour and negative offsets', () => {
    const at = new Date('2026-11-22T06:30:15Z')
    expect(describeTimeInZone(at, 'Asia/Kolkata').iso).toBe('2026-11-22T12:00:15+05:30')
    expect(describeTimeInZone(at, 'America/New_York').iso).toBe('2026-11-22T01:30:15-05:00')
  })

  it('rejects an unknown zone with a clear error', async () => {
    const outcome = await executeServerTool('get_current_time', '{"timezone":"Mars/Olympus_Mons"}')
    expect(outcome.result).toBeNull()
    expect(outcome.error).toMatch(/Unknown time zone "Mars\/Olympus_Mons"\. Use an IANA name such as "Asia\/Tokyo"/)
  })

  it('refuses a zone longer than any real one instead of echoing it back', async () => {
    const outcome = await executeServerTool('get_current_time', JSON.stringify({ timezone: 'Z'.repeat(65_000) }))
    expect(outcome.errorCode).toBe('invalid_arguments')
    expect(outcome.error!.length).toBeLessThan(500)
  })

  it('rejects a non-string zone through validation', async () => {
    expect((await executeServerTool('get_current_time', '{"timezone":9}')).errorCode).toBe('invalid_arguments')
  })
})

describe('calculate', () => {
  it('evaluates an expression', async () => {
    expect(parsed(await executeServerTool('calculate', '{"expression":"(2 + 3) * 4 ^ 2"}'))).toEqual({ expression: '(2 + 3) * 4 ^ 2', result: 80 })
  })

  it('reports evaluation errors to the model', async () => {
    expect((await executeServerTool('calculate', '{"expression":"1/0"}')).error).toBe('Tool "calculate" failed: division by zero')
    expect((await executeServerTool('calculate', '{"expression":"require(1)"}')).error).toMatch(/unknown name "require"/)
    expect((await executeServerTool('calculate', '{"expression":"process.exit(1)"}')).error).toMatch(/unexpected character "\." at position 8/)
  })

  it('requires an expression', async () => {
    expect((await executeServerTool('calculate', '{}')).error).toMatch(/missing required field "expression"/)
    expect((await executeServerTool('calculate', '{"expression":"   "}')).errorCode).toBe('invalid_arguments')
  })
})

describe('get_current_weather', () => {
  it('is always sunny between 65 and 75 °F', async () => {
    for (let i = 0; i < 50; i++) {
      const report = parsed(await executeServerTool('get_current_weather', '{"location":"Paris, France"}'))
      expect(report).toMatchObject({ location: 'Paris, France', condition: 'sunny', unit: 'fahrenheit' })
      expect(report.temperature).toBeGreaterThanOrEqual(65)
      expect(report.temperature).toBeLessThanOrEqual(75)
    }
  })

  it('covers both ends of the range and converts to celsius', () => {
    expect(sunnyWeather('X', 'fahrenheit', () => 0).temperature).toBe(65)
    expect(sunnyWeather('X', 'fahrenheit', () => 1).temperature).toBe(75)
    expect(sunnyWeather('X', 'celsius', () => 0).temperature).toBe(18.3)
    expect(sunnyWeather('X', 'celsius', () => 1).temperature).toBe(23.9)
  })

  it('requires a location', async () => {
    expect((await executeServerTool('get_current_weather', '{}')).error).toMatch(/missing required field "location"/)
    expect((await executeServerTool('get_current_weather', '{"location":"  "}')).errorCode).toBe('invalid_arguments')
    expect((await executeServerTool('get_current_weather', '{"location":"Rome","unit":"kelvin"}')).error).toMatch(/field "unit" must be one of/)
  })
})

describe('convert_units (discovered example tool)', () => {
  it.each([
    [10, 'km', 'mi', 6.21371192237],
    [100, 'c', 'f', 212],
    [32, 'F', 'C', 0],
    [0, 'c', 'k', 273.15],
    [1, 'lb', 'kg', 0.45359237],
    [100, 'km/h', 'mph', 62.1371192237],
  ])('converts %s %s to %s', (value, from, to, expected) => {
    expect(convertUnits(value, from, to)).toBe(expected)
  })

  it('refuses mixed dimensions and unknown units', async () => {
    expect((await executeServerTool('convert_units', '{"value":1,"from":"kg","to":"km"}')).error).toMatch(/Cannot convert mass \(kg\) to length \(km\)/)
    expect((await executeServerTool('convert_units', '{"value":1,"from":"parsec","to":"km"}')).error).toMatch(/Unknown unit "parsec"/)
  })
})
