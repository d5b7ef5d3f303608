import { z } from 'zod'
import { defineServerTool } from '../utils/chat/tool-registry'

/**
 * An example of a discovered tool: this file is registered at start-up because it sits under
 * server/tools/ and default-exports defineServerTool(...). Copy server/tools/_template.ts to add one.
 */

type Dimension = 'length' | 'mass' | 'volume' | 'temperature' | 'speed'

// Factors to the dimension's base unit (metre, kilogram, litre, metre per second).
const LINEAR_UNITS: Record<string, { dimension: Exclude<Dimension, 'temperature'>, toBase: number }> = {
  mm: { dimension: 'length', toBase: 0.001 },
  cm: { dimension: 'length', toBase: 0.01 },
  m: { dimension: 'length', toBase: 1 },
  km: { dimension: 'length', toBase: 1000 },
  in: { dimension: 'length', toBase: 0.0254 },
  ft: { dimension: 'length', toBase: 0.3048 },
  yd: { dimension: 'length', toBase: 0.9144 },
  mi: { dimension: 'length', toBase: 1609.344 },
  g: { dimension: 'mass', toBase: 0.001 },
  kg: { dimension: 'mass', toBase: 1 },
  oz: { dimension: 'mass', toBase: 0.028349523125 },
  lb: { dimension: 'mass', toBase: 0.45359237 },
  ml: { dimension: 'volume', toBase: 0.001 },
  l: { dimension: 'volume', toBase: 1 },
  gal: { dimension: 'volume', toBase: 3.785411784 },
  'm/s': { dimension: 'speed', toBase: 1 },
  'km/h': { dimension: 'speed', toBase: 1 / 3.6 },
  mph: { dimension: 'speed', toBase: 0.44704 },
  kn: { dimension: 'speed', toBase: 1852 / 3600 },
}

const TEMPERATURE_UNITS = {
  c: { toKelvin: (v: number) => v + 273.15, fromKelvin: (k: number) => k - 273.15 },
  f: { toKelvin: (v: number) => ((v - 32) * 5) / 9 + 273.15, fromKelvin: (k: number) => ((k - 273.15) * 9) / 5 + 32 },
  k: { toKelvin: (v: number) => v, fromKelvin: (k: number) => k },
} as const

const UNIT_NAMES = [...Object.keys(LINEAR_UNITS), ...Object.keys(TEMPERATURE_UNITS)]

function dimensionOf(unit: string): Dimension {
  if (unit in TEMPERATURE_UNITS) return 'temperature'
  const linear = LINEAR_UNITS[unit]
  if (!linear) throw new Error(`Unknown unit "${unit}". Known units: ${UNIT_NAMES.join(', ')}.`)
  return linear.dimension
}

/** Converts `value` between two units of the same dimension. */
export function convertUnits(value: number, from: string, to: string): number {
  const [source, target] = [from.toLowerCase(), to.toLowerCase()]
  const [sourceDimension, targetDimension] = [dimensionOf(source), dimensionOf(target)]
  if (sourceDimension !== targetDimension) {
    throw new Error(`Cannot convert ${sourceDimension} (${from}) to ${targetDimension} (${to}).`)
  }
  const converted = sourceDimension === 'temperature'
    ? TEMPERATURE_UNITS[target as keyof typeof TEMPERATURE_UNITS].fromKelvin(TEMPERATURE_UNITS[source as keyof typeof TEMPERATURE_UNITS].toKelvin(value))
    : (value * LINEAR_UNITS[source]!.toBase) / LINEAR_UNITS[target]!.toBase
  return Number.parseFloat(converted.toPrecision(12))
}

export default defineServerTool({
  name: 'convert_units',
  description: `Convert a value between units of length, mass, volume, speed or temperature. Units: ${UNIT_NAMES.join(', ')} (c, f, k are °C, °F, kelvin).`,
  parameters: z.object({
    value: z.number().describe('The amount to convert.'),
    from: z.string().min(1).describe('Unit of the value, e.g. "km".'),
    to: z.string().min(1).describe('Unit to convert to, e.g. "mi".'),
  }),
  runtime: 'hybrid',
  idempotent: true,
  timeoutMs: 1000,
  handler: ({ value, from, to }) => ({ value, from, to, result: convertUnits(value, from, to) }),
})
