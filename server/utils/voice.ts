import type { H3Event } from 'h3'
import { z } from 'zod'
import { throwHttpError } from '../lib/http/domain-errors'
import { startedServerRuntime } from '../lib/runtime/current'
import type { Transcriptions } from '../lib/voice/transcriptions'

/** What the composer sends to be transcribed: the recording (base64), its type, and the language spoken. */
const dictationSchema = z.object({
  audio: z.base64('audio: send the recording as base64').min(1, 'audio: the recording is empty'),
  mediaType: z.string().trim().min(1).max(100),
  language: z.string().trim().regex(/^[a-z]{2,3}(?:-[A-Za-z0-9]{2,8})?$/, 'language: a language tag such as en or pt-BR').optional(),
}).strict()

function useTranscriptions(): Transcriptions {
  return startedServerRuntime().transcriptions
}

/**
 * Dictation for the session's person: whether the server transcribes (`available`; else the
 * browser's own recognition is used), and `transcribe`, which reads the body's recording (bounded by
 * `voice.audioBytes` while it is read) and answers `{ text }`; 400 / 413 / 415 / 429 / 502 / 503 / 504
 * saying what went wrong.
 */
export function speechToText(event: H3Event) {
  return {
    available: (): { available: boolean } => ({ available: useTranscriptions().available }),
    transcribe: async (): Promise<{ text: string }> => {
      const user = await requireSessionUser(event)
      const transcriptions = useTranscriptions()
      // Base64 is 4/3 of the bytes, plus the rest of the body.
      const input = await readJsonBody(event, dictationSchema, { maxBytes: Math.ceil(useServerConfig(event).voice.audioBytes * 4 / 3) + 1_024 })
      try {
        return { text: await transcriptions.transcribe(user.id, Buffer.from(input.audio, 'base64'), input.mediaType, input.language) }
      } catch (error) {
        throwHttpError(event, error)
      }
    },
  }
}
