import { clientAddress } from '../lib/http/client-address'
import { hostMatchesSite, requestSiteOf, type RequestSite } from '../lib/http/site-origin'

declare module 'h3' {
  interface H3EventContext {
    /** The client address per-address limits count (lib/http/client-address). */
    clientAddress?: string
    /** How the request reaches the app: the configured site, whether it is local, the origin to give to others. */
    site: RequestSite
  }
}

/**
 * Reads, once per request, who is asking from where (`event.context.clientAddress`,
 * `event.context.site`). With NUXT_SITE_URL set, answers only requests for that host (421
 * Misdirected Request for any other name, `/api/health` and `/metrics` excepted for load balancers
 * and Prometheus, which call by address; `/metrics` wants its token or an admin's session, which
 * a page on another name does not have): a page on another name that resolves to this server
 * (DNS rebinding) gets nothing.
 */
export default defineEventHandler((event) => {
  const config = useServerConfig(event)
  event.context.clientAddress = clientAddress(event, config)
  const site = requestSiteOf(event, config)
  event.context.site = site
  if (!site.siteOrigin || event.path === '/api/health' || event.path === '/metrics') return
  const host = config.limits.trustProxy ? getRequestHeader(event, 'x-forwarded-host') ?? getRequestHeader(event, 'host') : getRequestHeader(event, 'host')
  if (hostMatchesSite(host, site.siteOrigin)) return
  throw createError({ statusCode: 421, statusMessage: 'Misdirected request', message: `This server answers only at ${site.siteOrigin} (NUXT_SITE_URL); this request was for ${host ?? 'no host'}.` })
})
