/**
 * A comma-separated list of origins from the config (`NUXT_CSRF_ALLOWED_ORIGINS`,
 * `NUXT_PUBLIC_IMAGE_HOSTS`) as origins: items trimmed, a trailing slash dropped, empties skipped.
 * The server (config check, CSRF, CSP) and the app (which images to show) read them the same way.
 */
export function parseOriginList(value: string): string[] {
  return value.split(',').map(item => item.trim().replace(/\/$/, '')).filter(Boolean)
}
