/**
 * The voice settings (`voice.*` of server-config.ts): dictation transcribed by an OpenAI-compatible
 * `/audio/transcriptions` endpoint the operator names, "Read aloud" by an `/audio/speech` one, and
 * their bounds. Without a model, each uses the browser's own recognition or voice where it has one.
 */
import { z } from 'zod'
import { group, setting } from './setting-types'

/** Every voice setting, with its default and what it means. */
export function voiceSettings() {
  return group({
    transcriptionModel: setting(z.string().max(200), '',
      'Speech-to-text model for dictation in the composer (recorded in the browser, sent to `/audio/transcriptions`), e.g. `whisper-1` on OpenAI or a Whisper server\'s model. Empty: dictation uses the browser\'s own recognition where it has one, else is not offered.'),
    transcriptionBaseUrl: setting(z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be empty or an http(s) URL such as https://api.openai.com/v1' })]), '',
      'OpenAI-compatible endpoint whose `/audio/transcriptions` is asked; empty: `NUXT_OPENROUTER_BASE_URL`.'),
    transcriptionApiKey: setting(z.string(), '',
      'Key for the transcription endpoint; empty: `NUXT_OPENROUTER_API_KEY`. Never logged or stored in plain text.'),
    audioBytes: setting(z.number().int().min(10_000).max(25 * 1024 * 1024), 10 * 1024 * 1024,
      'Largest recording one dictation may send (bytes; about ten minutes of speech at the browser\'s usual rate); a larger one is refused saying so.'),
    timeoutMs: setting(z.number().int().min(1_000).max(600_000), 60_000,
      'Longest wait for one transcription; past it the dictation fails saying so.'),
    perMinute: setting(z.number().int().min(1).max(1_000), 10,
      'Dictations one person may send per minute (shared by every instance on Convex).'),
    speechModel: setting(z.string().max(200), '',
      'Text-to-speech model for "Read aloud" (`/audio/speech`), e.g. `gpt-4o-mini-tts` or `tts-1` on OpenAI, or a local server\'s. Empty: answers are read by the browser\'s own voice.'),
    speechVoice: setting(z.string().trim().min(1).max(100), 'alloy',
      'The voice the speech model reads with (`voice` of `/audio/speech`).'),
    speechBaseUrl: setting(z.union([z.literal(''), z.url({ protocol: /^https?$/, error: 'must be empty or an http(s) URL such as https://api.openai.com/v1' })]), '',
      'OpenAI-compatible endpoint whose `/audio/speech` is asked; empty: the transcription endpoint, else `NUXT_OPENROUTER_BASE_URL`.'),
    speechApiKey: setting(z.string(), '',
      'Key for the speech endpoint; empty: the transcription key, else `NUXT_OPENROUTER_API_KEY`. Never logged or stored in plain text.'),
    speechChars: setting(z.number().int().min(100).max(4_096), 4_000,
      'Characters read in one request at most; the app sends a longer answer in parts, a sentence or paragraph at a time.'),
    speechPerMinute: setting(z.number().int().min(1).max(1_000), 30,
      'Parts one person may have read aloud per minute (shared by every instance on Convex).'),
  })
}
