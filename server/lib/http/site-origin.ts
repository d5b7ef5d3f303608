/**
 * Where people reach this app. With `siteUrl` set (NUXT_SITE_URL) that is the one origin: every URL
 * the app gives to others (an OAuth callback) is built on it, the cross-site check compares with
 * it, and a request for another host name is refused (421), which also defeats DNS rebinding (a
 * page on another name that resolves to this server). Without it the origin is the request's own,
 * and the first admin account can be created only from this machine (loopback) or with the
 * one-time setup code the server prints at start-up (first-run.ts).
 */
import { isIP } from 'node:net'
import { getRequestHeader, getRequestURL, type H3Event } from 'h3'
import type { ServerConfig } from '../config/server-config'
import { siteOriginOf } from '../config/site-url'
import { forwardedAddresses } from './client-address'

/** How one request reaches the app (set on `event.context.site` for every request). */
export interface RequestSite {
  /** NUXT_SITE_URL's origin, when set. */
  siteOrigin?: string
  siteConfigured: boolean
  /** From this machine (its socket's peer), for a loopback host name, not forwarded by a proxy. */
  readonly loopback: boolean
  /** The origin to give to others (OAuth callbacks): see `appOriginFor`. */
  readonly appOrigin: string
}

/** NUXT_SITE_URL's origin per value: parsed once, not on every request. */
const siteOrigins = new Map<string, string | undefined>()

/**
 * How `event` reaches the app under `config`. Read on every request, so what only the first-run
 * and OAuth routes need (`loopback`, `appOrigin`) is worked out when they ask.
 */
export function requestSiteOf(event: H3Event, config: Pick<ServerConfig, 'siteUrl' | 'limits'>): RequestSite {
  if (!siteOrigins.has(config.siteUrl)) siteOrigins.set(config.siteUrl, siteOriginOf(config.siteUrl))
  const siteOrigin = siteOrigins.get(config.siteUrl)
  const host = () => getRequestHeader(event, 'host')
  const trustProxy = config.limits.trustProxy
  return {
    siteOrigin,
    siteConfigured: siteOrigin !== undefined,
    // Every hop: the socket's peer (none on a Unix socket, which only this machine can open:
    // `nuxt dev` serves through one) and each forwarded address (a proxy on this machine forwards
    // others' requests; `nuxt dev`'s own proxy forwards this machine's).
    get loopback() {
      return isLocalPeer(event.node.req.socket?.remoteAddress) && isLoopbackHost(host()) && forwardedAddresses(event.node.req.headers['x-forwarded-for']).every(isLoopbackAddress)
    },
    get appOrigin() {
      return appOriginFor({ siteOrigin, origin: getRequestHeader(event, 'origin'), host: host(), requestOrigin: getRequestURL(event, { xForwardedHost: trustProxy, xForwardedProto: trustProxy }).origin })
    },
  }
}

/** Whether a request for `host` (its Host header, with any port) is for the site at `siteOrigin`. */
export function hostMatchesSite(host: string | undefined, siteOrigin: string): boolean {
  if (!host) return false
  const site = new URL(siteOrigin)
  const wanted = site.host.toLowerCase()
  const given = host.trim().toLowerCase()
  // A default port may or may not be written.
  const defaultPort = site.protocol === 'https:' ? '443' : '80'
  return given === wanted || given === `${wanted}:${defaultPort}`
}

/** Whether a socket's peer is this machine: a loopback address, or none (a Unix socket). */
function isLocalPeer(address: string | undefined): boolean {
  return address === undefined || address === '' || isLoopbackAddress(address)
}

/** Whether `host` (a Host header) names this machine: localhost, 127.x or ::1, with any port. */
export function isLoopbackHost(host: string | undefined): boolean {
  if (!host) return false
  const name = host.trim().toLowerCase().replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1')
  if (name === 'localhost' || name.endsWith('.localhost')) return true
  return isLoopbackAddress(name)
}

/** Whether `address` is a loopback address (127.0.0.0/8, ::1, or IPv4-mapped 127.x). */
export function isLoopbackAddress(address: string | undefined): boolean {
  if (!address) return false
  const bare = address.replace(/^::ffff:/i, '')
  if (isIP(bare) === 4) return bare.startsWith('127.')
  return bare === '::1'
}

/**
 * The origin to give to others for a request: the configured site's, else the page's own origin
 * when the browser says it (`Origin`) and it names the host the request was sent to (behind a TLS
 * proxy the page is https while the server sees http), else the request's.
 */
export function appOriginFor(request: { siteOrigin?: string, origin?: string, host?: string, requestOrigin: string }): string {
  if (request.siteOrigin) return request.siteOrigin
  const origin = request.origin?.trim()
  if (origin && origin !== 'null' && request.host) {
    try {
      const url = new URL(origin)
      if ((url.protocol === 'https:' || url.protocol === 'http:') && url.host.toLowerCase() === request.host.trim().toLowerCase()) return url.origin
    } catch {}
  }
  return request.requestOrigin
}
