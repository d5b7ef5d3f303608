import type { H3Event } from 'h3'
import { z } from 'zod'
import { throwHttpError } from '../lib/http/domain-errors'
import { startedServerRuntime } from '../lib/runtime/current'

/** What the composer sends to be transcribed: the recording (base64), its type, and the language spoken. */
const dictationSchema = z.object({
  audio: z.base64('audio: send the recording as base64').min(1, 'audio: the recording is empty'),
  mediaType: z.string().trim().min(1).max(100),
  language: z.string().trim().regex(/^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$/, 'language: a language tag such as en or pt-BR').optional(),
}).strict()

/** What "Read aloud" sends: one part of an answer's words. */
const speechSchema = z.object({
  text: z.string().min(1, 'text: there is nothing to read').max(10_000, 'text: send a long answer in parts'),
}).strict()

/**
 * Voice for the session's person. Dictation: whether the server transcribes (`available`; else the
 * browser's own recognition is used), and `transcribe`, which reads the body's recording (bounded by
 * `voice.audioBytes` while it is read) and answers `{ text }`. Read aloud: whether the server speaks
 * (`available`, with the characters one part may have; else the browser's own voice reads), and
 * `speak`, which answers one part's audio. Refusals are 400 / 413 / 415 / 429 / 502 / 503 / 504,
 * saying what went wrong.
 */
export function voiceFor(event: H3Event) {
  const runtime = () => startedServerRuntime()
  return {
    dictation: {
      available: (): { available: boolean } => ({ available: runtime().transcriptions.available }),
      transcribe: async (): Promise<{ text: string }> => {
        const user = await requireSessionUser(event)
        const { transcriptions } = runtime()
        // Base64 is 4/3 of the bytes, plus the rest of the body.
        const input = await readJsonBody(event, dictationSchema, { maxBytes: Math.ceil(useServerConfig(event).voice.audioBytes * 4 / 3) + 1_024 })
        try {
          return { text: await transcriptions.transcribe(user.id, Buffer.from(input.audio, 'base64'), input.mediaType, input.language) }
        } catch (error) {
          throwHttpError(event, error)
        }
      },
    },
    readAloud: {
      available: (): { available: boolean, chars: number } => ({ available: runtime().speech.available, chars: runtime().speech.chars }),
      speak: async (): Promise<Buffer> => {
        const user = await requireSessionUser(event)
        const { speech } = runtime()
        const input = await readJsonBody(event, speechSchema, { maxBytes: 64 * 1024 })
        try {
          const { audio, mediaType } = await speech.speak(user.id, input.text)
          setResponseHeaders(event, { 'Content-Type': mediaType, 'Content-Length': String(audio.byteLength), 'Cache-Control': 'private, no-store', 'X-Content-Type-Options': 'nosniff' })
          return Buffer.from(audio.buffer, audio.byteOffset, audio.byteLength)
        } catch (error) {
          throwHttpError(event, error)
        }
      },
    },
  }
}
