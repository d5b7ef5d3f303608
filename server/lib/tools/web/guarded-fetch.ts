/**
 * An HTTP GET made for a model (or a POST for a person's webhook), which must not reach the server's own network: every hop (the
 * first request and each redirect) is checked where it connects. A host that is an IP address is
 * checked as it is; a name is resolved by the guard's own lookup, which hands the socket only
 * addresses that pass (so DNS that answers 127.0.0.1, or changes its answer between a check and
 * the connection, reaches nothing). Only http and https, no credentials in the URL, at most
 * `maxRedirects` hops, `timeoutMs` in all, and at most `maxBytes` of body (the rest is cut off).
 * A POST (`send`) follows no redirect (the 3xx is its answer): its body goes only where it was addressed.
 */
import { lookup as dnsLookup } from 'node:dns'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type BlockList, type LookupFunction } from 'node:net'
import { addressRefusal } from './address-guard'

/** A fetch refused or failed, with what happened in words the model (and its person) can act on. */
export class WebFetchError extends Error {
  override name = 'WebFetchError'
}

export interface GuardedFetchOptions {
  /** Networks the operator lets fetches reach although they are private. */
  allowed?: BlockList
  maxBytes: number
  timeoutMs: number
  maxRedirects: number
  userAgent: string
  /** Name resolution (tests); the system's otherwise. */
  resolve?: (hostname: string) => Promise<Array<{ address: string, family: number }>>
  /** A POST of this body with these headers instead of a GET (no redirect is followed). */
  send?: { body: string | Uint8Array, headers: Record<string, string> }
}

export interface FetchedPage {
  /** Where the body came from (after redirects). */
  url: string
  status: number
  contentType: string
  body: Buffer
  /** The body was longer than `maxBytes` and was cut there. */
  truncated: boolean
}

const systemResolve = (hostname: string) => new Promise<Array<{ address: string, family: number }>>((resolve, reject) => {
  dnsLookup(hostname, { all: true }, (error, addresses) => error ? reject(error) : resolve(addresses))
})

/** A socket lookup that yields only the addresses the guard lets through. */
function guardedLookup(options: GuardedFetchOptions): LookupFunction {
  const resolve = options.resolve ?? systemResolve
  return (hostname, lookupOptions, callback) => {
    resolve(hostname).then((addresses) => {
      const passing = addresses.filter(candidate => addressRefusal(candidate.address, options.allowed) === undefined)
      if (passing.length === 0) {
        const reason = addresses.length === 0 ? 'has no address' : addressRefusal(addresses[0]!.address, options.allowed)
        return callback(new WebFetchError(`${hostname} cannot be fetched: ${reason}.`), '', 0)
      }
      if ((lookupOptions as { all?: boolean }).all) return (callback as unknown as (error: null, all: typeof passing) => void)(null, passing)
      callback(null, passing[0]!.address, passing[0]!.family)
    }, (error: Error) => callback(new WebFetchError(`${hostname} could not be resolved (${error.message}).`), '', 0))
  }
}

/** Checks a URL before it is requested; returns it parsed. */
function checkedUrl(raw: string, options: GuardedFetchOptions): URL {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    throw new WebFetchError(`"${raw.slice(0, 200)}" is not a URL.`)
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new WebFetchError(`Only http and https pages can be fetched, not ${url.protocol.replace(':', '')}.`)
  if (url.username || url.password) throw new WebFetchError('A URL with a user name or password in it is not fetched.')
  const host = url.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host)) {
    const refusal = addressRefusal(host, options.allowed)
    if (refusal) throw new WebFetchError(`${url.host} cannot be fetched: ${refusal}.`)
  }
  return url
}

/** One hop: the response's head, and its body read up to `maxBytes`. */
function requestOnce(url: URL, options: GuardedFetchOptions, signal: AbortSignal): Promise<{ response: IncomingMessage, body: () => Promise<{ body: Buffer, truncated: boolean }> }> {
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve, reject) => {
    const outgoing = request(url, {
      method: options.send ? 'POST' : 'GET',
      lookup: guardedLookup(options),
      signal,
      headers: { 'user-agent': options.userAgent, 'accept': 'text/html,application/xhtml+xml,text/plain;q=0.9,application/json;q=0.8,*/*;q=0.5', 'accept-encoding': 'identity', ...options.send?.headers },
    }, (response) => {
      resolve({
        response,
        body: () => new Promise((done, fail) => {
          const parts: Buffer[] = []
          let size = 0
          let stopped = false
          response.on('data', (part: Buffer) => {
            if (stopped) return
            const room = options.maxBytes - size
            if (part.byteLength <= room) {
              parts.push(part)
              size += part.byteLength
              return
            }
            // Past the limit: what fits is kept, the rest is never read.
            parts.push(part.subarray(0, room))
            stopped = true
            response.destroy()
            done({ body: Buffer.concat(parts), truncated: true })
          })
          response.on('end', () => done({ body: Buffer.concat(parts), truncated: false }))
          response.on('error', error => stopped ? undefined : fail(error))
        }),
      })
    })
    outgoing.on('error', reject)
    outgoing.end(options.send?.body)
  })
}

/** Fetches `rawUrl` within the guard (see the file's comment). */
export async function guardedFetch(rawUrl: string, options: GuardedFetchOptions, signal?: AbortSignal): Promise<FetchedPage> {
  const deadline = AbortSignal.timeout(options.timeoutMs)
  const combined = signal ? AbortSignal.any([signal, deadline]) : deadline
  let url = checkedUrl(rawUrl, options)
  try {
    for (let hop = 0; ; hop++) {
      const { response, body } = await requestOnce(url, options, combined)
      const status = response.statusCode ?? 0
      const location = response.headers.location
      // A POST's redirect is answered as it is: its body goes nowhere but where it was addressed.
      if (status >= 300 && status < 400 && location && !options.send) {
        response.destroy()
        if (hop >= options.maxRedirects) throw new WebFetchError(`${rawUrl} redirected more than ${options.maxRedirects} times.`)
        url = checkedUrl(new URL(location, url).toString(), options)
        continue
      }
      const read = await body()
      return { url: url.toString(), status, contentType: String(response.headers['content-type'] ?? ''), ...read }
    }
  } catch (error) {
    if (error instanceof WebFetchError) throw error
    if (deadline.aborted) throw new WebFetchError(`${url.host} did not answer within ${Math.round(options.timeoutMs / 1000)} s.`)
    if (signal?.aborted) throw new WebFetchError('The fetch was stopped.')
    const cause = (error as { cause?: unknown }).cause
    if (cause instanceof WebFetchError) throw cause
    throw new WebFetchError(`${url.host} could not be fetched: ${(error as Error).message}.`)
  }
}
