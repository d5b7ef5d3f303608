import { ref } from 'vue'
import type { Memory, MemoryView } from '../../shared/types/memory'

/** Settings → Memory: the person's switch and what the assistant remembers about them, each theirs to change or delete. */
export function useMemories() {
  const view = ref<MemoryView>()

  async function refresh(): Promise<void> {
    view.value = await $fetch<MemoryView>('/api/me/memory')
  }

  async function setEnabled(enabled: boolean): Promise<void> {
    view.value = await $fetch<MemoryView>('/api/me/memory', { method: 'PUT', body: { enabled } })
  }

  /** Adds a memory the person wrote. */
  async function add(text: string): Promise<void> {
    await $fetch<Memory>('/api/me/memory', { method: 'POST', body: { text } })
    await refresh()
  }

  async function update(id: string, text: string): Promise<void> {
    await $fetch<Memory>(`/api/me/memory/${encodeURIComponent(id)}`, { method: 'PATCH', body: { text } })
    await refresh()
  }

  async function remove(id: string): Promise<void> {
    await $fetch(`/api/me/memory/${encodeURIComponent(id)}`, { method: 'DELETE' })
    await refresh()
  }

  /** Forgets every memory. */
  async function clear(): Promise<void> {
    await $fetch('/api/me/memory', { method: 'DELETE' })
    await refresh()
  }

  return { view, refresh, setEnabled, add, update, remove, clear }
}
