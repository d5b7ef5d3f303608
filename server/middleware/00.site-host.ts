import { hostMatchesSite } from '../lib/http/site-origin'

/**
 * With NUXT_SITE_URL set, answers only requests for that host (421 Misdirected Request for any
 * other name, `/api/health` excepted for load balancers that call by address): a page on another
 * name that resolves to this server (DNS rebinding) gets nothing.
 */
export default defineEventHandler((event) => {
  const { siteOrigin } = requestSite(event)
  if (!siteOrigin || event.path === '/api/health') return
  const trustProxy = useServerConfig(event).limits.trustProxy
  const host = trustProxy ? getRequestHeader(event, 'x-forwarded-host') ?? getRequestHeader(event, 'host') : getRequestHeader(event, 'host')
  if (hostMatchesSite(host, siteOrigin)) return
  throw createError({ statusCode: 421, statusMessage: 'Misdirected request', message: `This server answers only at ${siteOrigin} (NUXT_SITE_URL); this request was for ${host ?? 'no host'}.` })
})
