import { getRequestIP, type H3Event } from 'h3'
import type { ServerConfig } from '../config/server-config'
import type { BackgroundJobManager } from '../jobs/manager'

/**
 * Counts a job start against the user's and the client address's rate (`RateLimitError` over
 * it). The address is the socket's, or X-Forwarded-For's when `limits.trustProxy` says a proxy
 * sets it.
 */
export function countJobStart(event: H3Event, jobs: BackgroundJobManager, config: ServerConfig, userId: string): Promise<void> {
  return jobs.startRate.consume(userId, getRequestIP(event, { xForwardedFor: config.limits.trustProxy }))
}
