/**
 * Dictation: a recording from the composer made into text by the operator's OpenAI-compatible
 * `/audio/transcriptions` endpoint (voice settings). Bounded before anything is sent: the person's
 * rate, the recording's size and type, and the time the endpoint may take. The recording is sent on
 * and kept nowhere.
 */
import type { LimiterFactory } from '../stores/rate-limits/limiters'
import { VoiceEndpoint, VoiceError, type VoiceEndpointSettings } from './voice-endpoint'

export { VoiceError } from './voice-endpoint'

/** The recordings browsers make (MediaRecorder) and Whisper-style endpoints take. */
export const AUDIO_TYPES = ['audio/webm', 'audio/ogg', 'audio/wav', 'audio/x-wav', 'audio/mpeg', 'audio/mp4', 'audio/m4a', 'audio/x-m4a', 'audio/flac'] as const

/** What a transcription needs of the voice settings. */
export interface TranscriptionSettings extends VoiceEndpointSettings {
  audioBytes: number
}

/** The server's dictation (see the module comment). */
export class Transcriptions extends VoiceEndpoint<TranscriptionSettings> {
  constructor(settings: TranscriptionSettings, limiterFor: LimiterFactory, fetcher?: typeof fetch) {
    super(settings, limiterFor, { service: 'transcription service', refusedBy: 'dictations_user', keyPrefix: 'dictation-user' }, fetcher)
  }

  /** `audio` (of `mediaType`) as text, for `userId`; `language` (a BCP 47 tag) helps the model. */
  async transcribe(userId: string, audio: Uint8Array, mediaType: string, language?: string): Promise<string> {
    const { settings } = this
    if (!this.available) throw new VoiceError('Dictation by the server is not set up here (NUXT_VOICE_TRANSCRIPTION_MODEL); the browser\'s own recognition is used where it has one.', 503)
    const type = mediaType.split(';', 1)[0]!.trim().toLowerCase()
    if (!(AUDIO_TYPES as readonly string[]).includes(type)) throw new VoiceError(`mediaType: send one of ${AUDIO_TYPES.join(', ')}.`, 415)
    if (audio.byteLength === 0) throw new VoiceError('audio: the recording is empty; speak, then stop.', 400)
    if (audio.byteLength > settings.audioBytes) throw new VoiceError(`The recording is larger than ${Math.round(settings.audioBytes / 1024 / 1024)} MiB; dictate in shorter parts.`, 413)
    await this.takeTurn(userId, 'dictations')
    const form = new FormData()
    form.set('model', settings.model)
    form.set('file', new Blob([new Uint8Array(audio)], { type }), `dictation.${type.split('/')[1]!.replace('x-', '')}`)
    if (language) form.set('language', language.split('-', 1)[0]!)
    const response = await this.post('audio/transcriptions', form)
    const body = await response.text().catch(() => '')
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
