/** Dictation and read aloud from the voice settings, each endpoint and key falling back as the settings say. */
import type { ServerConfig } from '../config/server-config'
import type { LimiterFactory } from '../stores/rate-limits/limiters'
import { Speech } from './speech'
import { Transcriptions } from './transcriptions'

export function voiceServices(config: ServerConfig, limiterFor: LimiterFactory): { transcriptions: Transcriptions, speech: Speech } {
  const { voice, openrouter } = config
  const transcriptionBaseUrl = voice.transcriptionBaseUrl || openrouter.baseUrl
  const transcriptionApiKey = voice.transcriptionApiKey || openrouter.apiKey
  return {
    transcriptions: new Transcriptions({ model: voice.transcriptionModel, baseUrl: transcriptionBaseUrl, apiKey: transcriptionApiKey, audioBytes: voice.audioBytes, timeoutMs: voice.timeoutMs, perMinute: voice.perMinute }, limiterFor),
    speech: new Speech({ model: voice.speechModel, voice: voice.speechVoice, baseUrl: voice.speechBaseUrl || transcriptionBaseUrl, apiKey: voice.speechApiKey || transcriptionApiKey, chars: voice.speechChars, timeoutMs: voice.timeoutMs, perMinute: voice.speechPerMinute }, limiterFor),
  }
}
