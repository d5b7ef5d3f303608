/**
 * Who may create the first (admin) account. Until it exists anyone who reaches the server could
 * take it, including a page on another site whose name resolves to this machine (DNS rebinding).
 * So it is created only through the configured site (NUXT_SITE_URL: requests for other host names
 * are refused), from this machine itself (a loopback peer asking for a loopback host name), or
 * with the one-time setup code the server prints to its log at start-up, as Grafana and Jupyter do.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto'

/** How a request for the first account arrived. */
export interface FirstRunRequest {
  /** NUXT_SITE_URL is set (and the request's host matched it). */
  siteConfigured: boolean
  /** The request came from this machine for a loopback host name. */
  loopback: boolean
  setupCode?: string
}

/** The setup code of this process, and the check. */
export class FirstRunGuard {
  /** `XXXX-XXXX-XXXX`: about 70 bits, read from the log and typed in once. */
  readonly setupCode: string

  constructor(code?: string) {
    this.setupCode = code ?? randomBytes(9).toString('base64url').replace(/[-_]/g, 'x').slice(0, 12).toUpperCase().replace(/(.{4})(?=.)/g, '$1-')
  }

  /** Whether a first-account request may go on without a code. */
  static codeNeeded(request: Omit<FirstRunRequest, 'setupCode'>): boolean {
    return !request.siteConfigured && !request.loopback
  }

  /** Why the first account may not be created by `request`, or undefined when it may. */
  refusal(request: FirstRunRequest): string | undefined {
    if (!FirstRunGuard.codeNeeded(request)) return undefined
    const given = Buffer.from((request.setupCode ?? '').trim().toUpperCase())
    const expected = Buffer.from(this.setupCode)
    if (given.length === expected.length && timingSafeEqual(given, expected)) return undefined
    return request.setupCode
      ? 'That setup code is not the one this server printed. Copy it from the server\'s log (it changes on every start).'
      : 'Creating the admin account from another machine needs the setup code the server printed to its log at start-up (or set NUXT_SITE_URL, or open the app on the server itself at http://localhost).'
  }
}
