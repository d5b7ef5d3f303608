/**
 * Read aloud: `{ text }` (one part of an answer, at most `voice.speechChars` characters) answered as
 * audio by the operator's text-to-speech endpoint. Neither the text nor the audio is kept.
 */
export default defineEventHandler(event => voiceFor(event).readAloud.speak())
