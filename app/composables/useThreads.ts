import { ref } from 'vue'
import { useApiKey } from './useApiKey'
import { clientToolDeclarations } from '../utils/client-tools'
import { attachmentsBody, type PendingFile } from '../utils/attachments'
import type { ChatThread, SentThreadMessage, ThreadMessage, ThreadWithMessages } from '../../shared/types/thread'
import type { ChatFolder, ChatSettings, MessageFeedback } from '../../shared/types/personal'

const threads = ref<ChatThread[]>([])
const folders = ref<ChatFolder[]>([])
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
  /** Sends a message; with `compareWith`, those models answer it too, side by side with `model`. */
  async function send(id: string, input: { content: string, model: string, files?: readonly PendingFile[], compareWith?: readonly string[] }): Promise<SentThreadMessage> {
    const { files = [], compareWith = [], ...fields } = input
    const body = { ...fields, ...(files.length ? { attachments: await attachmentsBody(files) } : {}), ...(compareWith.length ? { compareWith } : {}), clientTools: clientToolDeclarations() }
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
  /** Pins, files into a folder (null: none) or sets how the conversation asks the model (null: the defaults). */
  async function update(id: string, patch: { pinned?: boolean, folderId?: string | null, settings?: ChatSettings | null }): Promise<ChatThread> {
    const thread = await $fetch<ChatThread>(`/api/threads/${id}`, { method: 'PATCH', body: patch })
    threads.value = threads.value.map(item => item.id === id ? thread : item)
    // A pin moves it in the list: read the list again, which also makes any read still under way
    // (started before the pin, which would put the old order back) be ignored (see refresh).
    if (patch.pinned !== undefined) void refresh().catch(() => undefined)
    return thread
  }
  async function refreshFolders(): Promise<void> {
    folders.value = (await $fetch<{ folders: ChatFolder[] }>('/api/folders')).folders
  }
  async function createFolder(name: string): Promise<ChatFolder> {
    const folder = await $fetch<ChatFolder>('/api/folders', { method: 'POST', body: { name } })
    folders.value = [...folders.value, folder]
    return folder
  }
  async function renameFolder(id: string, name: string): Promise<void> {
    const folder = await $fetch<ChatFolder>(`/api/folders/${encodeURIComponent(id)}`, { method: 'PATCH', body: { name } })
    folders.value = folders.value.map(item => item.id === id ? folder : item)
  }
  /** Deletes a folder; its conversations stay, in none. */
  async function deleteFolder(id: string): Promise<void> {
    await $fetch(`/api/folders/${encodeURIComponent(id)}`, { method: 'DELETE' })
    folders.value = folders.value.filter(item => item.id !== id)
    threads.value = threads.value.map(({ folderId, ...item }) => folderId === id ? item : { ...item, ...(folderId ? { folderId } : {}) })
  }
  /** Rates an answer (null takes the rating back); the message as it now is. */
  function rate(threadId: string, messageId: string, rating: Omit<MessageFeedback, 'at'> | null): Promise<ThreadMessage> {
    const path = `/api/threads/${encodeURIComponent(threadId)}/messages/${encodeURIComponent(messageId)}/feedback`
    return rating ? $fetch<ThreadMessage>(path, { method: 'PUT', body: rating }) : $fetch<ThreadMessage>(path, { method: 'DELETE' })
  }
  return { threads, folders, loaded, refresh, create, open, send, addVersion, showVersion, rename, remove, update, refreshFolders, createFolder, renameFolder, deleteFolder, rate }
}
