import { ref } from 'vue'
import { speakableText } from '../utils/plain-text'

/** The message being read aloud now (one at a time, in every component). */
const speaking = ref<string>()

/**
 * Reads answers aloud with the browser's own speech synthesis (nothing leaves the device), in the
 * app's language; one at a time: starting one stops another. `available` is false where the
 * browser has no speech synthesis (the button is not offered).
 */
export function useReadAloud() {
  const synthesis = () => (typeof window !== 'undefined' && 'speechSynthesis' in window ? window.speechSynthesis : undefined)
  function stop(): void {
    synthesis()?.cancel()
    speaking.value = undefined
  }
  function read(id: string, markdown: string, language: string): void {
    const speech = synthesis()
    if (!speech) return
    speech.cancel()
    const utterance = new SpeechSynthesisUtterance(speakableText(markdown))
    utterance.lang = language
    const done = () => {
      if (speaking.value === id) speaking.value = undefined
    }
    utterance.onend = done
    utterance.onerror = done
    speaking.value = id
    speech.speak(utterance)
  }
  /** Reads `markdown` (message `id`), or stops it when it is the one being read. */
  function toggle(id: string, markdown: string, language: string): void {
    if (speaking.value === id) stop()
    else read(id, markdown, language)
  }
  return { speaking, available: () => synthesis() !== undefined, toggle, stop }
}
