/**
 * Read aloud by the server: an answer's words made into speech by the operator's OpenAI-compatible
 * `/audio/speech` endpoint (voice settings), one part of at most `chars` characters per request (the
 * app sends a long answer in parts, sentence by sentence). Bounded before anything is sent (the
 * person's rate, the text's length) and after (the audio's size, the time the endpoint may take).
 * The text is sent on and kept nowhere; nor is the audio.
 */
import { readBytesUpTo } from '../bounded-body'
import { VoiceError } from './transcriptions'
import { takePoint, type LimiterFactory } from '../stores/rate-limits/limiters'
import type { RateLimiterAbstract } from 'rate-limiter-flexible'

/** What speech needs of the voice settings. */
export interface SpeechSettings {
  model: string
  voice: string
  baseUrl: string
  apiKey: string
  /** Characters of one request at most. */
  chars: number
  timeoutMs: number
  perMinute: number
}

/** Largest audio one part may come back as (about ten minutes of MP3). */
const MAX_AUDIO_BYTES = 16 * 1024 * 1024
const AUDIO_TYPES = new Set(['audio/mpeg', 'audio/mp3', 'audio/wav', 'audio/x-wav', 'audio/ogg', 'audio/opus', 'audio/aac', 'audio/flac', 'audio/webm'])

/** The server's read aloud (see the module comment). */
export class Speech {
  private readonly limiter: RateLimiterAbstract

  constructor(private readonly settings: SpeechSettings, limiterFor: LimiterFactory, private readonly fetcher: typeof fetch = fetch) {
    this.limiter = limiterFor({ keyPrefix: 'speech-user', points: settings.perMinute, duration: 60 })
  }

  /** Whether the operator named a speech model (else the browser's own speech synthesis reads). */
  get available(): boolean {
    return this.settings.model !== '' && this.settings.baseUrl !== ''
  }

  /** How many characters one part may have. */
  get chars(): number {
    return this.settings.chars
  }

  /** `text` spoken, for `userId`: the audio and its media type. */
  async speak(userId: string, text: string): Promise<{ audio: Uint8Array, mediaType: string }> {
    const { settings } = this
    if (!this.available) throw new VoiceError('Reading aloud by the server is not set up here (NUXT_VOICE_SPEECH_MODEL); the browser\'s own voice is used where it has one.', 503)
    const input = text.trim()
    if (!input) throw new VoiceError('text: there is nothing to read.', 400)
    if (input.length > settings.chars) throw new VoiceError(`text: at most ${settings.chars} characters per part; send a long answer in parts.`, 413)
    const wait = await takePoint(this.limiter, userId)
    if (wait !== undefined) throw new VoiceError(`At most ${settings.perMinute} parts read aloud a minute; try again in ${wait} s.`, 429, wait, 'speech_user')
    let response: Response
    try {
      response = await this.fetcher(`${settings.baseUrl.replace(/\/+$/, '')}/audio/speech`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(settings.apiKey ? { authorization: `Bearer ${settings.apiKey}` } : {}) },
        body: JSON.stringify({ model: settings.model, voice: settings.voice, input, response_format: 'mp3' }),
        signal: AbortSignal.timeout(settings.timeoutMs),
      })
    } catch (error) {
      if (error instanceof DOMException && error.name === 'TimeoutError') throw new VoiceError(`The speech service did not answer within ${Math.round(settings.timeoutMs / 1000)} s; try again.`, 504)
      throw new VoiceError('The speech service could not be reached; try again later.', 502)
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => {})
      throw new VoiceError(`The speech service answered ${response.status}; try again later.`, 502)
    }
    const mediaType = (response.headers.get('content-type') ?? 'audio/mpeg').split(';', 1)[0]!.trim().toLowerCase()
    if (!AUDIO_TYPES.has(mediaType)) {
      await response.body?.cancel().catch(() => {})
      throw new VoiceError('The speech service answered with something that is not audio.', 502)
    }
    const audio = await readBytesUpTo(response, MAX_AUDIO_BYTES)
    if (!audio?.byteLength) throw new VoiceError(audio ? 'The speech service answered without audio.' : 'The speech service answered with more audio than one part can be.', 502)
    return { audio, mediaType: mediaType === 'audio/mp3' ? 'audio/mpeg' : mediaType }
  }
}
