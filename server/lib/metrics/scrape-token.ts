/** Whether a scrape of `/metrics` carries the operator's token (NUXT_METRICS_TOKEN): a bearer token compared in constant time. */
export { isBearerToken as isScrapeToken } from '../security/bearer-token'
