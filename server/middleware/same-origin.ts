import { crossSiteRefusal, parseAllowedOrigins } from '../lib/http/same-origin'

/** Refuses state-changing API requests sent by another site's page (CSRF): 403 with what to do. */
export default defineEventHandler((event) => {
  if (!event.path.startsWith('/api/')) return
  const refusal = crossSiteRefusal({
    method: event.method,
    ownOrigin: `${getRequestProtocol(event, { xForwardedProto: false })}://${getRequestHost(event, { xForwardedHost: false })}`,
    origin: getRequestHeader(event, 'origin'),
    secFetchSite: getRequestHeader(event, 'sec-fetch-site'),
    allowedOrigins: parseAllowedOrigins(useServerConfig(event).security.allowedOrigins),
  })
  if (refusal) throw createError({ statusCode: 403, statusMessage: 'Cross-site request refused', message: refusal })
})
