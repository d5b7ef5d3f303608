import { computed, ref } from 'vue'
import { speakableText, speechParts } from '../utils/plain-text'

/** The message being read aloud now (one at a time, in every component). */
const speaking = ref<string>()
/** Whether the server reads aloud here, and how many characters one part may have (asked once per page). */
const serverVoice = ref<{ available: boolean, chars: number }>()
let asked: Promise<void> | undefined
/** Whether this browser has its own speech synthesis (known once mounted). */
const browserVoice = ref(false)
/** The reading now: stops its audio and its requests. */
let current: { stop: () => void } | undefined

function askServer(): void {
  if (asked || typeof window === 'undefined') return
  // Component tests have no $fetch; the server's voice is then simply not offered.
  asked = Promise.resolve()
    .then(() => $fetch<{ available: boolean, chars: number }>('/api/voice/speech'))
    .then((answer) => {
      serverVoice.value = answer
    }, () => {
      // Not known (offline, or no $fetch in a component test): the browser's voice reads; the next page asks again.
      serverVoice.value = { available: false, chars: 0 }
      asked = undefined
    })
}

/**
 * Reads answers aloud, in the app's language; one at a time (starting one stops another). With the
 * operator's speech model (`NUXT_VOICE_SPEECH_MODEL`) the server reads, a part (a few sentences) at
 * a time, the next asked for while one plays; otherwise the browser's own speech synthesis does,
 * and nothing leaves the device. If the server fails mid-answer, the browser's voice reads the rest
 * where it has one. `available` is false where neither can (the button is not offered).
 */
export function useReadAloud() {
  const synthesis = () => (typeof window !== 'undefined' && 'speechSynthesis' in window ? window.speechSynthesis : undefined)
  browserVoice.value = synthesis() !== undefined
  askServer()

  function stop(): void {
    current?.stop()
    current = undefined
    synthesis()?.cancel()
    speaking.value = undefined
  }

  const done = (id: string) => () => {
    if (speaking.value === id) speaking.value = undefined
  }

  function readInBrowser(id: string, text: string, language: string): void {
    const speech = synthesis()
    if (!speech) return done(id)()
    const utterance = new SpeechSynthesisUtterance(text)
    utterance.lang = language
    utterance.onend = done(id)
    utterance.onerror = done(id)
    speech.speak(utterance)
  }

  function readOnServer(id: string, text: string, language: string, chars: number): void {
    const parts = speechParts(text, chars)
    const controller = new AbortController()
    const audio = new Audio()
    const urls: string[] = []
    const fetchPart = (index: number) => $fetch<Blob>('/api/voice/speech', { method: 'POST', body: { text: parts[index] }, responseType: 'blob', signal: controller.signal })
    const reading = {
      stop: () => {
        controller.abort()
        audio.pause()
        for (const url of urls) URL.revokeObjectURL(url)
      },
    }
    current = reading
    const play = async (index: number, next: Promise<Blob>): Promise<void> => {
      let blob: Blob
      try {
        blob = await next
      } catch {
        // The server could not read this part: the browser's voice reads the rest, where it has one.
        if (current === reading && !controller.signal.aborted) readInBrowser(id, parts.slice(index).join(' '), language)
        return
      }
      if (current !== reading) return
      const following = index + 1 < parts.length ? fetchPart(index + 1) : undefined
      following?.catch(() => {})
      const url = URL.createObjectURL(blob)
      urls.push(url)
      audio.src = url
      const advance = () => {
        URL.revokeObjectURL(url)
        if (current !== reading) return
        if (following) void play(index + 1, following)
        else done(id)()
      }
      audio.onended = advance
      audio.onerror = advance
      await audio.play().catch(advance)
    }
    void play(0, fetchPart(0))
  }

  function read(id: string, markdown: string, language: string): void {
    stop()
    const text = speakableText(markdown)
    if (!text) return
    speaking.value = id
    const server = serverVoice.value
    if (server?.available) readOnServer(id, text, language, server.chars)
    else readInBrowser(id, text, language)
  }

  /** Reads `markdown` (message `id`), or stops it when it is the one being read. */
  function toggle(id: string, markdown: string, language: string): void {
    if (speaking.value === id) stop()
    else read(id, markdown, language)
  }

  const available = computed(() => browserVoice.value || Boolean(serverVoice.value?.available))
  return { speaking, available, toggle, stop }
}
