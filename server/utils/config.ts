import type { H3Event } from 'h3'
import { parseServerConfig, type ServerConfig } from '../lib/config/server-config'

export type { ServerConfig } from '../lib/config/server-config'

let cached: ServerConfig | undefined

/**
 * The validated server runtime config. Validation runs once (at start-up, from
 * server/plugins/00.config.ts); later calls return the same object.
 */
export function useServerConfig(event?: H3Event): ServerConfig {
  cached ??= parseServerConfig(useRuntimeConfig(event))
  return cached
}
