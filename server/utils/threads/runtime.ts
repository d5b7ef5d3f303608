import type { H3Event } from 'h3'
import type { ChatThread, ThreadStore } from './types'

let store: ThreadStore | undefined

/** Installs the process's thread store (server/plugins/30.background-jobs.ts does this). */
export function setThreadStore(next: ThreadStore | undefined): void {
  store = next
}

/** Where threads and messages are kept (the same backend as jobs). */
export function useThreadStore(): ThreadStore {
  if (!store) throw createError({ statusCode: 503, statusMessage: 'The chat store is starting; try again in a moment.' })
  return store
}

const THREAD_ID = /^[\w-]{1,100}$/

/** The thread if the session user owns it; otherwise the same 404 as an unknown id. */
export async function requireOwnedThread(event: H3Event, threadId: string | undefined): Promise<ChatThread> {
  const user = await requireSessionUser(event)
  const thread = threadId && THREAD_ID.test(threadId) ? await useThreadStore().getThread(threadId) : null
  if (!thread || thread.userId !== user.id) {
    throw createError({ statusCode: 404, statusMessage: 'No such conversation. It may have been deleted, or it belongs to another session.' })
  }
  return thread
}
