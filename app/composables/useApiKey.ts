import { computed, ref } from 'vue'

const STORAGE_KEY = 'or3:openrouter-key'
const key = ref<string>('')
let loaded = false

function load(): void {
  if (loaded || typeof localStorage === 'undefined') return
  loaded = true
  key.value = localStorage.getItem(STORAGE_KEY) ?? ''
}

/**
 * The user's own OpenRouter key. It stays in this browser (localStorage) and travels with each
 * request in `X-OpenRouter-Key`; it is never shown back in full.
 */
export function useApiKey() {
  load()
  return {
    hasKey: computed(() => key.value !== ''),
    /** `sk-or-v1-…3f9a`: enough to recognise, never the whole key. */
    maskedKey: computed(() => key.value ? `${key.value.slice(0, 8)}…${key.value.slice(-4)}` : ''),
    setKey(value: string) {
      key.value = value.trim()
      if (key.value) localStorage.setItem(STORAGE_KEY, key.value)
      else localStorage.removeItem(STORAGE_KEY)
    },
    clearKey() {
      key.value = ''
      localStorage.removeItem(STORAGE_KEY)
    },
    /** Headers for requests that start answers. */
    headers(): Record<string, string> {
      return key.value ? { 'X-OpenRouter-Key': key.value } : {}
    },
  }
}
