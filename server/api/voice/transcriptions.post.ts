/**
 * Dictation: `{ audio (base64), mediaType, language? }` made into `{ text }` by the operator's
 * speech-to-text endpoint. The recording is passed on and kept nowhere.
 */
export default defineEventHandler(event => voiceFor(event).dictation.transcribe())
