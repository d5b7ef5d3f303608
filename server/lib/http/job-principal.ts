import type { H3Event } from 'h3'
import { clientAddress } from './client-address'
import { requestLocale } from './request-locale'
import type { ServerConfig } from '../config/server-config'
import type { JobPrincipal } from '../jobs/admission/principal'
import type { SessionPrincipal } from '../../../shared/types/account'

/**
 * Who starts a job from this request, as admission counts them: the session's user and role, and
 * the client address (see client-address.ts), and the language they read. `userId` is the owner the job runs for when it differs (a workflow's owner).
 */
export function jobPrincipal(event: H3Event, config: ServerConfig, user: SessionPrincipal, userId = user.id): JobPrincipal {
  return { userId, role: user.role, ip: clientAddress(event, config), locale: requestLocale(event) }
}
