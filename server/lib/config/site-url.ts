/**
 * `siteUrl` (NUXT_SITE_URL), the one origin of a public deployment: checked by the config schema,
 * read by the request's site (lib/http/site-origin.ts).
 */

/** The origin of `siteUrl` (`https://chat.example.com`), or undefined when it is not set. */
export function siteOriginOf(siteUrl: string): string | undefined {
  const text = siteUrl.trim()
  return text === '' ? undefined : new URL(text).origin
}

/** Why `siteUrl` cannot be used (for the config schema), or undefined. */
export function siteUrlProblem(siteUrl: string): string | undefined {
  const text = siteUrl.trim()
  if (text === '') return undefined
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'must be the URL people open, such as https://chat.example.com'
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must start with https:// (or http://)'
  if ((url.pathname !== '/' && url.pathname !== '') || url.search || url.hash || url.username || url.password) return 'must be an origin only (scheme, host and port), such as https://chat.example.com'
  return undefined
}
