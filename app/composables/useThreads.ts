import { ref } from 'vue'

/** A conversation in the sidebar. */
export interface ThreadSummary {
  id: string
  title: string
  createdAt: number
  updatedAt: number
}

const threads = ref<ThreadSummary[]>([])
const loaded = ref(false)

/** The session's conversations (shared by the sidebar and pages). */
export function useThreads() {
  async function refresh(): Promise<void> {
    const result = await $fetch<{ threads: ThreadSummary[] }>('/api/threads')
    threads.value = result.threads
    loaded.value = true
  }
  async function create(): Promise<ThreadSummary> {
    const thread = await $fetch<ThreadSummary>('/api/threads', { method: 'POST', body: {} })
    threads.value = [thread, ...threads.value]
    return thread
  }
  async function rename(id: string, title: string): Promise<void> {
    const thread = await $fetch<ThreadSummary>(`/api/threads/${id}`, { method: 'PATCH', body: { title } })
    threads.value = threads.value.map(item => item.id === id ? thread : item)
  }
  async function remove(id: string): Promise<void> {
    await $fetch(`/api/threads/${id}`, { method: 'DELETE' })
    threads.value = threads.value.filter(item => item.id !== id)
  }
  return { threads, loaded, refresh, create, rename, remove }
}
