/**
 * What dictation and read aloud share: the operator's OpenAI-compatible endpoint (its model, base
 * URL and key), a rate per person, and how its failures are told (`VoiceError`: what happened and
 * what to do, never the service's own words).
 */
import { DomainError, type HttpAnswer } from '../domain-error'
import { takePoint, type LimiterFactory } from '../stores/rate-limits/limiters'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'

/** A dictation or a reading aloud that could not be made, in words a person can act on; `refusedBy` names the rate that refused it (429). */
export class VoiceError extends DomainError {
  override name = 'VoiceError'
  constructor(message: string, readonly statusCode: 400 | 413 | 415 | 429 | 502 | 503 | 504, readonly retryAfterSeconds?: number, readonly refusedBy = 'dictations_user') {
    super(message)
  }

  httpAnswer(): HttpAnswer {
    const texts = { 400: 'Bad request', 413: 'Too large', 415: 'Unsupported audio', 429: 'Too many requests', 502: 'Voice service failed', 503: 'Not set up', 504: 'Voice service timed out' }
    return { statusCode: this.statusCode, statusMessage: texts[this.statusCode], message: this.message, ...(this.retryAfterSeconds ? { retryAfterSeconds: this.retryAfterSeconds } : {}), ...(this.statusCode === 429 ? { refusedBy: this.refusedBy } : {}) }
  }
}

/** What every voice endpoint needs of the settings. */
export interface VoiceEndpointSettings {
  model: string
  baseUrl: string
  apiKey: string
  timeoutMs: number
  perMinute: number
}

/** One voice service at the operator's endpoint (see the module comment). */
export abstract class VoiceEndpoint<S extends VoiceEndpointSettings> {
  private readonly limiter: RateLimiterAbstract

  constructor(protected readonly settings: S, limiterFor: LimiterFactory, private readonly what: { service: string, refusedBy: string, keyPrefix: string }, private readonly fetcher: typeof fetch = fetch) {
    this.limiter = limiterFor({ keyPrefix: what.keyPrefix, points: settings.perMinute, duration: 60 })
  }

  /** Whether the operator named a model (else the browser's own recognition or voice is used). */
  get available(): boolean {
    return this.settings.model !== '' && this.settings.baseUrl !== ''
  }

  /** Counts one for `userId`; `unit` names what they did too often ("dictations"). */
  protected async takeTurn(userId: string, unit: string): Promise<void> {
    const wait = await takePoint(this.limiter, userId)
    if (wait !== undefined) throw new VoiceError(`At most ${this.settings.perMinute} ${unit} a minute; try again in ${wait} s.`, 429, wait, this.what.refusedBy)
  }

  /** POSTs `body` to `path` of the endpoint within the timeout; a 2xx response, else a `VoiceError` saying what failed. */
  protected async post(path: string, body: BodyInit, headers: Record<string, string> = {}): Promise<Response> {
    const { settings, what } = this
    let response: Response
    try {
      response = await this.fetcher(`${settings.baseUrl.replace(/\/+$/, '')}/${path}`, {
        method: 'POST',
        headers: { ...headers, ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
        body,
        signal: AbortSignal.timeout(settings.timeoutMs),
      })
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') throw new VoiceError(`The ${what.service} did not answer within ${Math.round(settings.timeoutMs / 1000)} s; try again.`, 504)
      throw new VoiceError(`The ${what.service} could not be reached; try again later.`, 502)
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      throw new VoiceError(`The ${what.service} answered ${response.status}; try again later.`, 502)
    }
    return response
  }
}
