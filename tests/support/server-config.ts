import { vi } from 'vitest'
import { parseServerConfig, type ServerConfig } from '../../server/lib/config/server-config'

// nuxt.config.ts calls Nuxt's global defineNuxtConfig, an identity function outside Nuxt.
vi.stubGlobal('defineNuxtConfig', (config: unknown) => config)
const { default: nuxtConfig } = await import('../../nuxt.config')

/** The runtimeConfig defaults exactly as nuxt.config.ts declares them (a fresh copy). */
export function runtimeConfigDefaults(): Record<string, any> {
  return structuredClone(nuxtConfig.runtimeConfig) as Record<string, any>
}

type DeepPartial<T> = { [K in keyof T]?: T[K] extends object ? DeepPartial<T[K]> : T[K] }

function merge(base: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const result = { ...base }
  for (const [key, value] of Object.entries(patch)) {
    result[key] = typeof value === 'object' && value !== null && !Array.isArray(value)
      ? merge(base[key] as Record<string, unknown>, value as Record<string, unknown>)
      : value
  }
  return result
}

/** The defaults of nuxt.config.ts with `overrides`, validated like the server does at start-up. */
export function testServerConfig(overrides: DeepPartial<ServerConfig> = {}): ServerConfig {
  return parseServerConfig(merge(runtimeConfigDefaults(), overrides as Record<string, unknown>))
}
