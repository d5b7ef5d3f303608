import type { H3Event } from 'h3'
import { throwHttpError } from '../lib/http/domain-errors'
import { userApiKeyOf } from '../lib/http/user-api-key'
import { queueEditSchema, queueMessageSchema, queueOrderSchema, type MessageQueue } from '../lib/threads/message-queue'
import { currentServerRuntime } from '../lib/runtime/current'
import type { QueuedMessage } from '../../shared/types/message-queue'
import type { ChatThread, SentThreadMessage } from '../../shared/types/thread'

/** This process's message queues (503 while the server starts). */
function useMessageQueue(): MessageQueue {
  const runtime = currentServerRuntime()
  if (!runtime) throw createError({ statusCode: 503, statusMessage: 'The server is starting; try again in a moment.' })
  return runtime.messageQueue
}

/** Runs `work` on the queue, with the app's refusals as HTTP answers (404 gone, 409 being sent or full, 400 what to fix). */
async function onQueue<T>(event: H3Event, work: (queue: MessageQueue) => Promise<T>): Promise<T> {
  try {
    return await work(useMessageQueue())
  } catch (error) {
    throwHttpError(event, error)
  }
}

/** The conversation's queued messages, first to go first. */
export function listQueue(event: H3Event, thread: ChatThread): Promise<{ items: QueuedMessage[] }> {
  return onQueue(event, async queue => ({ items: await queue.list(thread.id) }))
}

/**
 * Lines up the body's message (`content`, `model`, `tools`) to start when the running answer ends
 * well; the person's own key (`X-OpenRouter-Key`) is kept sealed until it is sent.
 */
export async function queueMessage(event: H3Event, thread: ChatThread): Promise<{ items: QueuedMessage[] }> {
  const input = await readJsonBody(event, queueMessageSchema)
  return onQueue(event, async queue => ({ items: await queue.add(thread, input, userApiKeyOf(event)) }))
}

/** Puts the waiting messages in the body's `order`. */
export async function reorderQueue(event: H3Event, thread: ChatThread): Promise<{ items: QueuedMessage[] }> {
  const { order } = await readJsonBody(event, queueOrderSchema)
  return onQueue(event, async queue => ({ items: await queue.reorder(thread, order) }))
}

/** New text (`content`) for a waiting message. */
export async function editQueued(event: H3Event, thread: ChatThread, id: string): Promise<{ items: QueuedMessage[] }> {
  const { content } = await readJsonBody(event, queueEditSchema)
  return onQueue(event, async queue => ({ items: await queue.edit(thread, id, content) }))
}

/** Takes a waiting message out. */
export function removeQueued(event: H3Event, thread: ChatThread, id: string): Promise<{ items: QueuedMessage[] }> {
  return onQueue(event, async queue => ({ items: await queue.remove(thread, id) }))
}

/** "Send now": handed to the running answer (`steered`), or sent at once when none runs (`sent`). */
export function sendQueuedNow(event: H3Event, thread: ChatThread, id: string): Promise<{ steered: true } | { sent: SentThreadMessage }> {
  return onQueue(event, queue => queue.sendNow(thread, id))
}

/** The queue beside a conversation's view (absent when empty). */
export async function queueOf(threadId: string): Promise<QueuedMessage[] | undefined> {
  const items = await currentServerRuntime()?.messageQueue.list(threadId)
  return items?.length ? items : undefined
}
