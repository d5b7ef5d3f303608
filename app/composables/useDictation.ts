import { onBeforeUnmount, ref } from 'vue'
import { errorMessage } from '../utils/http-error'

/** The browser's speech recognition, where it has one (Chromium's is prefixed). */
type Recognition = { lang: string, interimResults: boolean, continuous: boolean, start: () => void, stop: () => void, abort: () => void, onresult: ((event: { resultIndex: number, results: ArrayLike<{ isFinal: boolean, 0: { transcript: string } }> }) => void) | null, onend: (() => void) | null, onerror: ((event: { error: string }) => void) | null }
type RecognitionConstructor = new () => Recognition

/** Whether the server transcribes here (asked once per page load). */
let serverTranscribes: Promise<boolean> | undefined

/** The bytes of `blob` as base64 (in slices: a long recording is not one huge argument list). */
async function base64Of(blob: Blob): Promise<string> {
  const bytes = new Uint8Array(await blob.arrayBuffer())
  let binary = ''
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000))
  return btoa(binary)
}

/**
 * Dictation in the composer: speech recorded in the browser and made into text by the server's
 * speech-to-text endpoint (`/api/voice/transcriptions`) when the operator set one up, else by the
 * browser's own recognition where it has one. `start()` listens; `stop()` ends and resolves the
 * text heard. The microphone is released when dictation stops and when the component goes.
 */
export function useDictation() {
  const state = ref<'idle' | 'listening' | 'transcribing'>('idle')
  const problem = ref('')
  /** Seconds listened so far (shown beside "Listening…"). */
  const seconds = ref(0)
  let clock: ReturnType<typeof setInterval> | undefined
  const stopClock = () => {
    clearInterval(clock)
    clock = undefined
  }
  let stream: MediaStream | undefined
  let recorder: MediaRecorder | undefined
  let recognition: Recognition | undefined
  let heard = ''
  let finished: ((text: string) => void) | undefined

  const recognitionClass = (): RecognitionConstructor | undefined => {
    const scope = window as unknown as { SpeechRecognition?: RecognitionConstructor, webkitSpeechRecognition?: RecognitionConstructor }
    return scope.SpeechRecognition ?? scope.webkitSpeechRecognition
  }
  const canRecord = () => typeof MediaRecorder !== 'undefined' && Boolean(navigator.mediaDevices?.getUserMedia)

  /** Whether dictation can be offered here (the server's transcription, or the browser's recognition). */
  async function available(): Promise<boolean> {
    // Any failure (no server, an old one without the route) means no: the browser's recognition, if any.
    serverTranscribes ??= Promise.resolve().then(() => $fetch<{ available: boolean }>('/api/voice/transcriptions')).then(answer => answer.available, () => false)
    return (canRecord() && await serverTranscribes) || recognitionClass() !== undefined
  }

  function release(): void {
    stream?.getTracks().forEach(track => track.stop())
    stream = undefined
  }

  /** Starts listening, in `language` (a BCP 47 tag). */
  async function start(language: string): Promise<void> {
    problem.value = ''
    heard = ''
    try {
      if (canRecord() && await (serverTranscribes ?? Promise.resolve(false))) {
        stream = await navigator.mediaDevices.getUserMedia({ audio: true })
        const chunks: Blob[] = []
        const active = new MediaRecorder(stream)
        recorder = active
        active.ondataavailable = event => event.data.size && chunks.push(event.data)
        active.onstop = async () => {
          release()
          state.value = 'transcribing'
          const audio = new Blob(chunks, { type: active.mimeType || 'audio/webm' })
          try {
            const { text } = await $fetch<{ text: string }>('/api/voice/transcriptions', { method: 'POST', body: { audio: await base64Of(audio), mediaType: audio.type, language } })
            heard = text
          } catch (error) {
            problem.value = errorMessage(error)
          }
          state.value = 'idle'
          finished?.(heard)
        }
        // In slices of a second: what was said is kept as it is recorded.
        active.start(1_000)
      } else {
        const Recognizer = recognitionClass()
        if (!Recognizer) throw new Error('no speech recognition')
        recognition = new Recognizer()
        recognition.lang = language
        recognition.interimResults = false
        recognition.continuous = true
        recognition.onresult = (event) => {
          for (let index = event.resultIndex; index < event.results.length; index++) {
            const result = event.results[index]!
            if (result.isFinal) heard = `${heard} ${result[0].transcript}`.trim()
          }
        }
        recognition.onerror = event => (problem.value = event.error)
        recognition.onend = () => {
          state.value = 'idle'
          finished?.(heard)
        }
        recognition.start()
      }
      state.value = 'listening'
      seconds.value = 0
      clock = setInterval(() => seconds.value++, 1_000)
    } catch (error) {
      release()
      state.value = 'idle'
      problem.value = errorMessage(error)
    }
  }

  /** Stops listening; resolves the text heard ('' when nothing, or when it failed: `problem` says why). */
  function stop(): Promise<string> {
    stopClock()
    const done = new Promise<string>(resolve => (finished = resolve))
    if (recorder?.state === 'recording') recorder.stop()
    else if (recognition) recognition.stop()
    else finished?.('')
    recorder = undefined
    recognition = undefined
    return done
  }

  onBeforeUnmount(() => {
    stopClock()
    recognition?.abort()
    if (recorder?.state === 'recording') {
      recorder.onstop = null
      recorder.stop()
    }
    release()
  })

  return { state, problem, seconds, available, start, stop }
}
