import { getRequestIP, type H3Event } from 'h3'
import type { ServerConfig } from '../config/server-config'

/**
 * The client address every per-address limit counts (job starts and slots, guest sessions, bodies
 * in flight): the socket's, or X-Forwarded-For's when `limits.trustProxy` says a proxy in front
 * sets it. One rule, so no limit can be dodged where another is not.
 */
export function clientAddress(event: H3Event, config: Pick<ServerConfig, 'limits'>): string | undefined {
  return getRequestIP(event, { xForwardedFor: config.limits.trustProxy })
}
