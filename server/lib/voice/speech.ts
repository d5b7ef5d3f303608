/**
 * Read aloud by the server: an answer's words made into speech by the operator's OpenAI-compatible
 * `/audio/speech` endpoint (voice settings), one part of at most `chars` characters per request (the
 * app sends a long answer in parts, sentence by sentence). Bounded before anything is sent (the
 * person's rate, the text's length) and after (the audio's size, the time the endpoint may take).
 * The text is sent on and kept nowhere; nor is the audio.
 */
import { readBytesUpTo } from '../bounded-body'
import type { LimiterFactory } from '../stores/rate-limits/limiters'
import { VoiceEndpoint, VoiceError, type VoiceEndpointSettings } from './voice-endpoint'

/** What speech needs of the voice settings. */
export interface SpeechSettings extends VoiceEndpointSettings {
  voice: string
  /** Characters of one request at most. */
  chars: number
}

/** Largest audio one part may come back as (about ten minutes of MP3). */
const MAX_AUDIO_BYTES = 16 * 1024 * 1024
const AUDIO_TYPES = new Set(['audio/mpeg', 'audio/mp3', 'audio/wav', 'audio/x-wav', 'audio/ogg', 'audio/opus', 'audio/aac', 'audio/flac', 'audio/webm'])

/** The server's read aloud (see the module comment). */
export class Speech extends VoiceEndpoint<SpeechSettings> {
  constructor(settings: SpeechSettings, limiterFor: LimiterFactory, fetcher?: typeof fetch) {
    super(settings, limiterFor, { service: 'speech service', refusedBy: 'speech_user', keyPrefix: 'speech-user' }, fetcher)
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
    await this.takeTurn(userId, 'parts read aloud')
    const response = await this.post('audio/speech', JSON.stringify({ model: settings.model, voice: settings.voice, input, response_format: 'mp3' }), { 'content-type': 'application/json' })
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
