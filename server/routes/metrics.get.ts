/**
 * Prometheus metrics (server/lib/metrics/app-metrics.ts): 404 unless NUXT_METRICS_ENABLED; then
 * to the operator's scrape token (NUXT_METRICS_TOKEN as a bearer token) or to an admin.
 */
export default defineEventHandler(async (event) => {
  const { metrics } = await useMonitoring(event, 'scraper')
  setResponseHeader(event, 'Content-Type', metrics.contentType)
  setResponseHeader(event, 'Cache-Control', 'no-store')
  return metrics.render()
})
