/**
 * Dictation: a recording from the composer made into text by the operator's OpenAI-compatible
 * `/audio/transcriptions` endpoint (voice settings). Bounded before anything is sent: the person's
 * rate, the recording's size and type, and the time the endpoint may take. The recording is sent on
 * and kept nowhere.
 */
import { DomainError, type HttpAnswer } from '../domain-error'
import { takePoint, type LimiterFactory } from '../stores/rate-limits/limiters'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'

/** The recordings browsers make (MediaRecorder) and Whisper-style endpoints take. */
export const AUDIO_TYPES = ['audio/webm', 'audio/ogg', 'audio/wav', 'audio/x-wav', 'audio/mpeg', 'audio/mp4', 'audio/m4a', 'audio/x-m4a', 'audio/flac'] as const

/** What a transcription needs of the voice settings. */
export interface TranscriptionSettings {
  model: string
  baseUrl: string
  apiKey: string
  audioBytes: number
  timeoutMs: number
  perMinute: number
}

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

/** The server's dictation (see the module comment). */
export class Transcriptions {
  private readonly limiter: RateLimiterAbstract

  constructor(private readonly settings: TranscriptionSettings, limiterFor: LimiterFactory, private readonly fetcher: typeof fetch = fetch) {
    this.limiter = limiterFor({ keyPrefix: 'dictation-user', points: settings.perMinute, duration: 60 })
  }

  /** Whether the operator named a transcription model (else the browser's own recognition is used). */
  get available(): boolean {
    return this.settings.model !== '' && this.settings.baseUrl !== ''
  }

  /** `audio` (of `mediaType`) as text, for `userId`; `language` (a BCP 47 tag) helps the model. */
  async transcribe(userId: string, audio: Uint8Array, mediaType: string, language?: string): Promise<string> {
    const { settings } = this
    if (!this.available) throw new VoiceError('Dictation by the server is not set up here (NUXT_VOICE_TRANSCRIPTION_MODEL); the browser\'s own recognition is used where it has one.', 503)
    const type = mediaType.split(';', 1)[0]!.trim().toLowerCase()
    if (!(AUDIO_TYPES as readonly string[]).includes(type)) throw new VoiceError(`mediaType: send one of ${AUDIO_TYPES.join(', ')}.`, 415)
    if (audio.byteLength === 0) throw new VoiceError('audio: the recording is empty; speak, then stop.', 400)
    if (audio.byteLength > settings.audioBytes) throw new VoiceError(`The recording is larger than ${Math.round(settings.audioBytes / 1024 / 1024)} MiB; dictate in shorter parts.`, 413)
    const wait = await takePoint(this.limiter, userId)
    if (wait !== undefined) throw new VoiceError(`At most ${settings.perMinute} dictations a minute; try again in ${wait} s.`, 429, wait)
    const form = new FormData()
    form.set('model', settings.model)
    form.set('file', new Blob([new Uint8Array(audio)], { type }), `dictation.${type.split('/')[1]!.replace('x-', '')}`)
    if (language) form.set('language', language.split('-', 1)[0]!)
    let response: Response
    try {
      response = await this.fetcher(`${settings.baseUrl.replace(/\/+$/, '')}/audio/transcriptions`, {
        method: 'POST',
        headers: settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {},
        body: form,
        signal: AbortSignal.timeout(settings.timeoutMs),
      })
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') throw new VoiceError(`The transcription service did not answer within ${Math.round(settings.timeoutMs / 1000)} s; try again.`, 504)
      throw new VoiceError('The transcription service could not be reached; try again later.', 502)
    }
    const body = await response.text().catch(() => '')
    if (!response.ok) throw new VoiceError(`The transcription service answered ${response.status}; try again later.`, 502)
    let text: unknown
    try {
      text = (JSON.parse(body) as { text?: unknown }).text
    } catch {
      text = undefined
    }
    if (typeof text !== 'string') throw new VoiceError('The transcription service answered without text.', 502)
    return text.trim().slice(0, 100_000)
  }
}
