import { describe, expect, it } from 'vitest'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Transcriptions, VoiceError, type TranscriptionSettings } from '../../../server/lib/voice/transcriptions'
import { memoryLimiters } from '../../../server/lib/stores/rate-limits/limiters'
import { silentWav, useFakeOpenRouter } from '../../support/fake-openrouter'
import { Speech, type SpeechSettings } from '../../../server/lib/voice/speech'

const fake = useFakeOpenRouter()
const settings = (overrides: Partial<TranscriptionSettings> = {}): TranscriptionSettings => ({ model: 'whisper-1', baseUrl: fake.url, apiKey: 'sk-voice-test', audioBytes: 1_000, timeoutMs: 5_000, perMinute: 3, ...overrides })
const audio = new Uint8Array(120).fill(7)

/** The refusal `promise` ends with: its status and message. */
async function refusal(promise: Promise<unknown>): Promise<{ status: number, message: string }> {
  const error = await promise.then(() => undefined, (caught: unknown) => caught)
  expect(error).toBeInstanceOf(VoiceError)
  const answer = (error as VoiceError).httpAnswer()
  return { status: answer.statusCode, message: answer.message }
}

describe('Transcriptions', () => {
  it('sends the recording to /audio/transcriptions with the model, its type and the language, and answers the text', async () => {
    const voice = new Transcriptions(settings(), memoryLimiters)
    expect(voice.available).toBe(true)
    expect(await voice.transcribe('u1', audio, 'audio/webm;codecs=opus', 'pt-BR')).toBe('Heard 120 bytes of audio/webm.')
    expect(fake.transcriptionRequests.at(-1)).toEqual({ authorization: 'Bearer sk-voice-test', model: 'whisper-1', language: 'pt', fileType: 'audio/webm', bytes: 120 })
  })

  it('refuses before sending: off, an unknown type, an empty or too large recording, past the rate (per person)', async () => {
    const sent = fake.transcriptionRequests.length
    expect(new Transcriptions(settings({ model: '' }), memoryLimiters).available).toBe(false)
    expect(await refusal(new Transcriptions(settings({ model: '' }), memoryLimiters).transcribe('u', audio, 'audio/webm'))).toMatchObject({ status: 503, message: expect.stringContaining('NUXT_VOICE_TRANSCRIPTION_MODEL') })
    const voice = new Transcriptions(settings(), memoryLimiters)
    expect(await refusal(voice.transcribe('u', audio, 'text/html'))).toMatchObject({ status: 415, message: expect.stringContaining('audio/webm') })
    expect(await refusal(voice.transcribe('u', new Uint8Array(0), 'audio/webm'))).toMatchObject({ status: 400 })
    expect(await refusal(voice.transcribe('u', new Uint8Array(1_001), 'audio/webm'))).toMatchObject({ status: 413 })
    expect(fake.transcriptionRequests.length).toBe(sent)
    for (let index = 0; index < 3; index++) await voice.transcribe('busy', audio, 'audio/ogg')
    const limited = await refusal(voice.transcribe('busy', audio, 'audio/ogg'))
    expect(limited).toMatchObject({ status: 429, message: expect.stringContaining('At most 3 dictations a minute') })
    // Another person is not held back.
    expect(await voice.transcribe('other', audio, 'audio/ogg')).toContain('Heard 120 bytes')
  })

  it('says so when the endpoint fails, answers nonsense, cannot be reached or takes too long', async () => {
    const answers: Array<(response: import('node:http').ServerResponse) => void> = [
      response => response.writeHead(500).end('boom'),
      response => response.writeHead(200, { 'content-type': 'application/json' }).end('{"not":"text"}'),
      () => {},
    ]
    const server = createServer((request, response) => {
      request.resume()
      answers.shift()?.(response)
    })
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    try {
      const voice = new Transcriptions(settings({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, timeoutMs: 1_000, perMinute: 100 }), memoryLimiters)
      expect(await refusal(voice.transcribe('u', audio, 'audio/wav'))).toMatchObject({ status: 502, message: expect.stringContaining('answered 500') })
      expect(await refusal(voice.transcribe('u', audio, 'audio/wav'))).toMatchObject({ status: 502, message: expect.stringContaining('without text') })
      expect(await refusal(voice.transcribe('u', audio, 'audio/wav'))).toMatchObject({ status: 504, message: expect.stringContaining('within 1 s') })
      const closed = new Transcriptions(settings({ baseUrl: 'http://127.0.0.1:9/v1', perMinute: 100 }), memoryLimiters)
      expect(await refusal(closed.transcribe('u', audio, 'audio/wav'))).toMatchObject({ status: 502, message: expect.stringContaining('could not be reached') })
    } finally {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    }
  })
})

describe('Speech', () => {
  const speechSettings = (overrides: Partial<SpeechSettings> = {}): SpeechSettings => ({ model: 'tts-1', voice: 'nova', baseUrl: fake.url, apiKey: 'sk-speech-test', chars: 200, timeoutMs: 5_000, perMinute: 2, ...overrides })

  it('sends one part to /audio/speech with the model and voice, and answers its audio', async () => {
    const speech = new Speech(speechSettings(), memoryLimiters)
    expect(speech.available).toBe(true)
    const { audio, mediaType } = await speech.speak('u1', '  Hello there.  ')
    expect(mediaType).toBe('audio/wav')
    expect(Buffer.from(audio).equals(silentWav())).toBe(true)
    expect(fake.speechRequests.at(-1)).toEqual({ authorization: 'Bearer sk-speech-test', model: 'tts-1', voice: 'nova', input: 'Hello there.' })
  })

  it('refuses before sending: off, nothing to read, a part too long, past the rate (per person); and says so when the service fails', async () => {
    const sent = fake.speechRequests.length
    expect(await refusal(new Speech(speechSettings({ model: '' }), memoryLimiters).speak('u', 'hi'))).toMatchObject({ status: 503, message: expect.stringContaining('NUXT_VOICE_SPEECH_MODEL') })
    const speech = new Speech(speechSettings(), memoryLimiters)
    expect(await refusal(speech.speak('u', '   '))).toMatchObject({ status: 400 })
    expect(await refusal(speech.speak('u', 'x'.repeat(201)))).toMatchObject({ status: 413, message: expect.stringContaining('at most 200 characters') })
    expect(fake.speechRequests.length).toBe(sent)
    await speech.speak('busy', 'one')
    await speech.speak('busy', 'two')
    const limited = await new Promise<VoiceError>(resolve => speech.speak('busy', 'three').catch(resolve))
    expect(limited.httpAnswer()).toMatchObject({ statusCode: 429, refusedBy: 'speech_user' })
    expect((await speech.speak('other', 'four')).audio.byteLength).toBeGreaterThan(0)
    const html = new Speech(speechSettings(), memoryLimiters, async () => new Response('<html>', { headers: { 'content-type': 'text/html' } }))
    expect(await refusal(html.speak('u', 'hi'))).toMatchObject({ status: 502, message: expect.stringContaining('not audio') })
    const failing = new Speech(speechSettings(), memoryLimiters, async () => new Response('no', { status: 500 }))
    expect(await refusal(failing.speak('u', 'hi'))).toMatchObject({ status: 502, message: expect.stringContaining('500') })
  })
})
