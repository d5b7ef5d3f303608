import { parseOriginList } from '../../shared/origin-list'
import { crossSiteRefusal } from '../lib/http/same-origin'

/** The operator's extra origins, parsed once (the config does not change while the server runs). */
let allowedOrigins: string[] | undefined

/**
 * Refuses state-changing API requests sent by another site's page (CSRF): 403 with what to do.
 * A request with `Authorization: Bearer` is exempt: a browser never adds that header on its own,
 * and such a request is authenticated by its token alone, never by the cookie. So is a workflow's
 * webhook (`/api/hooks/`): its URL carries its own secret, and it never reads the cookie.
 */
export default defineEventHandler((event) => {
  if (!event.path.startsWith('/api/')) return
  if (/^Bearer\s/i.test(getRequestHeader(event, 'authorization') ?? '')) return
  if (event.path.startsWith('/api/hooks/')) return
  allowedOrigins ??= parseOriginList(useServerConfig(event).csrf.allowedOrigins)
  const refusal = crossSiteRefusal({
    method: event.method,
    // The configured site when there is one; a Host header alone is what DNS rebinding forges.
    ownOrigin: event.context.site.siteOrigin ?? `${getRequestProtocol(event, { xForwardedProto: false })}://${getRequestHost(event, { xForwardedHost: false })}`,
    origin: getRequestHeader(event, 'origin'),
    secFetchSite: getRequestHeader(event, 'sec-fetch-site'),
    allowedOrigins,
  })
  if (refusal) throw createError({ statusCode: 403, statusMessage: 'Cross-site request refused', message: refusal })
})
