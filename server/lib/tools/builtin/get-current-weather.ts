import { z } from 'zod'
import { defineServerTool } from '../define-tool'

/** A demo weather report: always sunny, 65-75 °F, so the tool loop can be shown without a weather API. */
export interface DemoWeatherReport {
  location: string
  condition: 'sunny'
  temperature: number
  unit: 'fahrenheit' | 'celsius'
  humidityPercent: number
  note: string
}

/** Builds the always-sunny report; `random` is injectable so the range can be pinned down in tests. */
export function sunnyWeather(location: string, unit: 'fahrenheit' | 'celsius', random: () => number = Math.random): DemoWeatherReport {
  const fahrenheit = 65 + Math.round(random() * 10)
  const temperature = unit === 'celsius' ? Math.round(((fahrenheit - 32) * 5) / 9 * 10) / 10 : fahrenheit
  return {
    location,
    condition: 'sunny',
    temperature,
    unit,
    humidityPercent: 30 + Math.round(random() * 20),
    note: 'Demo data: this tool always reports sunny weather.',
  }
}

export default defineServerTool({
  name: 'get_current_weather',
  description: 'Get the current weather for a location (demo data: always sunny, 65-75 °F).',
  parameters: z.object({
    location: z.string().trim().min(1).describe('City and country, e.g. "Paris, France".'),
    unit: z.enum(['fahrenheit', 'celsius']).default('fahrenheit').describe('Temperature unit.'),
  }),
  runtime: 'hybrid',
  idempotent: true,
  handler: ({ location, unit }) => sunnyWeather(location, unit),
})
