import { ref } from 'vue'
import { useApiKey } from './useApiKey'
import { clientToolDeclarations } from '../utils/client-tools'
import { attachmentsBody, type PendingFile } from '../utils/attachments'
import type { ChatThread, SentThreadMessage, ThreadWithMessages } from '../../shared/types/thread'

const threads = ref<ChatThread[]>([])
const loaded = ref(false)
/** The number of the newest list request: an older one that answers after it is not applied. */
let newestRefresh = 0

/** The session's conversations (shared by the sidebar and pages), and sending in one. */
export function useThreads() {
  const apiKey = useApiKey()

  /**
   * Reads the list again. Several reads may overlap (an answer ends, a title arrives, a message is
   * sent) and their answers may come back in any order: only the newest read's answer is applied,
   * so a read started before a rename cannot put the old title back after a later one showed it.
   */
  async function refresh(): Promise<void> {
    const number = ++newestRefresh
    const result = await $fetch<{ threads: ChatThread[] }>('/api/threads')
    if (number !== newestRefresh) return
    threads.value = result.threads
    loaded.value = true
  }
  async function create(): Promise<ChatThread> {
    const thread = await $fetch<ChatThread>('/api/threads', { method: 'POST', body: {} })
    threads.value = [thread, ...threads.value]
    return thread
  }
  /** One conversation with its messages. */
  function open(id: string): Promise<ThreadWithMessages> {
    return $fetch<ThreadWithMessages>(`/api/threads/${id}`)
  }
  /**
   * Sends a message and its files (with the user's own key, if any); the answer runs as a job on
   * the server and may call the tools this browser runs (app/utils/client-tools.ts).
   */
  async function send(id: string, input: { content: string, model: string, files?: readonly PendingFile[] }): Promise<SentThreadMessage> {
    const { files = [], ...fields } = input
    const body = { ...fields, ...(files.length ? { attachments: await attachmentsBody(files) } : {}), clientTools: clientToolDeclarations() }
    return $fetch<SentThreadMessage>(`/api/threads/${id}/messages`, { method: 'POST', body, headers: apiKey.headers() })
  }
  /**
   * A new version of a message: a question sent again with new text (`content`), or the same
   * question answered again (no `content`). The thread then shows the new version.
   */
  function addVersion(id: string, messageId: string, input: { content?: string, model: string }): Promise<SentThreadMessage> {
    return $fetch<SentThreadMessage>(`/api/threads/${id}/messages/${messageId}/versions`, { method: 'POST', body: { ...input, clientTools: clientToolDeclarations() }, headers: apiKey.headers() })
  }
  /** Shows the branch through `messageId` (another version); the conversation as it now reads. */
  function showVersion(id: string, messageId: string): Promise<ThreadWithMessages> {
    return $fetch<ThreadWithMessages>(`/api/threads/${id}/branch`, { method: 'PUT', body: { messageId } })
  }
  async function rename(id: string, title: string): Promise<void> {
    const thread = await $fetch<ChatThread>(`/api/threads/${id}`, { method: 'PATCH', body: { title } })
    threads.value = threads.value.map(item => item.id === id ? thread : item)
  }
  async function remove(id: string): Promise<void> {
    await $fetch<unknown>(`/api/threads/${id}`, { method: 'DELETE' })
    threads.value = threads.value.filter(item => item.id !== id)
  }
  return { threads, loaded, refresh, create, open, send, addVersion, showVersion, rename, remove }
}
