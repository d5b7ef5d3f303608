/**
 * Cross-site request forgery: a page on another origin (another port of the same host counts, and
 * there SameSite cookies are still sent) can make the browser send a request with the user's
 * cookie. Browsers say where a request comes from (`Sec-Fetch-Site`, and `Origin` on every
 * cross-origin request), so a state-changing request is refused unless it comes from this origin,
 * an origin the operator allowed, or no browser at all (a script sends neither header).
 */

/** Methods that change nothing and are never refused. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS'])

/** What the check reads from a request. */
export interface OriginCheckInput {
  method: string
  /** The origin this server is reached at, e.g. `http://localhost:3000`. */
  ownOrigin: string
  origin?: string
  secFetchSite?: string
  /** Further origins allowed to call the API (the operator's list). */
  allowedOrigins: readonly string[]
}

/** Why the request must be refused, or undefined when it may go on. */
export function crossSiteRefusal(input: OriginCheckInput): string | undefined {
  if (SAFE_METHODS.has(input.method.toUpperCase())) return undefined
  const site = input.secFetchSite?.toLowerCase()
  // The browser itself vouches for the page (no page can set this header). This also covers a
  // proxy that terminates TLS, where the server sees http but the page's Origin says https.
  if (site === 'same-origin') return undefined
  const origin = input.origin?.toLowerCase()
  const allowed = origin !== undefined && (origin === input.ownOrigin.toLowerCase() || input.allowedOrigins.some(item => item.toLowerCase() === origin))
  if (allowed) return undefined
  if (origin === undefined && (site === undefined || site === 'none')) return undefined
  return `Requests that change something must come from this app's own pages (this one came from ${origin ?? `a ${site} page`}). To call the API from another origin, add it to NUXT_CSRF_ALLOWED_ORIGINS.`
}
