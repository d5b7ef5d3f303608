import { useApiKey } from './useApiKey'
import type { QueuedMessage } from '../../shared/types/message-queue'
import type { SentThreadMessage } from '../../shared/types/thread'

type Items = { items: QueuedMessage[] }

/**
 * A conversation's message queue on the server (`/api/threads/:id/queue`): messages lined up while
 * an answer runs start after it, on the server, even with the tab closed; "Send now" hands one to
 * the running answer. Every call answers the queue as it now stands.
 */
export function useMessageQueue() {
  const apiKey = useApiKey()
  const base = (threadId: string) => `/api/threads/${encodeURIComponent(threadId)}/queue`
  const item = (threadId: string, id: string) => `${base(threadId)}/${encodeURIComponent(id)}`

  /** Lines up `content` to be asked of `model` (with the person's own key, if any, kept sealed until then). */
  async function add(threadId: string, input: { content: string, model: string }): Promise<QueuedMessage[]> {
    return (await $fetch<Items>(base(threadId), { method: 'POST', body: input, headers: apiKey.headers() })).items
  }
  async function edit(threadId: string, id: string, content: string): Promise<QueuedMessage[]> {
    return (await $fetch<Items>(item(threadId, id), { method: 'PATCH', body: { content } })).items
  }
  async function reorder(threadId: string, order: string[]): Promise<QueuedMessage[]> {
    return (await $fetch<Items>(base(threadId), { method: 'PUT', body: { order } })).items
  }
  async function remove(threadId: string, id: string): Promise<QueuedMessage[]> {
    return (await $fetch<Items>(item(threadId, id), { method: 'DELETE' })).items
  }
  /** Handed to the running answer (`steered`), or sent at once when none runs (`sent`). */
  async function sendNow(threadId: string, id: string): Promise<{ steered: true } | { sent: SentThreadMessage }> {
    const path: string = `${item(threadId, id)}/send`
    return await $fetch<{ steered: true } | { sent: SentThreadMessage }>(path, { method: 'POST', body: {} })
  }
  return { add, edit, reorder, remove, sendNow }
}
