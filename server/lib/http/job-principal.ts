import { getRequestIP, type H3Event } from 'h3'
import type { ServerConfig } from '../config/server-config'
import type { JobPrincipal } from '../jobs/admission/principal'
import type { SessionPrincipal } from '../../../shared/types/account'

/**
 * Who starts a job from this request, as admission counts them: the session's user and role, and
 * the client address (the socket's, or X-Forwarded-For's when `limits.trustProxy` says a proxy
 * sets it). `userId` is the owner the job runs for when it differs (a workflow's owner).
 */
export function jobPrincipal(event: H3Event, config: ServerConfig, user: SessionPrincipal, userId = user.id): JobPrincipal {
  return { userId, role: user.role, ip: getRequestIP(event, { xForwardedFor: config.limits.trustProxy }) }
}
