import type { H3Event } from 'h3'
import { throwHttpError } from '../lib/http/domain-errors'
import { userApiKeyOf } from '../lib/http/user-api-key'
import { queueEditSchema, queueMessageSchema, queueOrderSchema, type MessageQueue } from '../lib/threads/message-queue'
import { startedServerRuntime } from '../lib/runtime/current'
import type { QueuedMessage } from '../../shared/types/message-queue'
import type { ChatThread, SentThreadMessage } from '../../shared/types/thread'

type Items = Promise<{ items: QueuedMessage[] }>

/** This process's message queues (503 while the server starts). */
function useMessageQueue(): MessageQueue {
  return startedServerRuntime().messageQueue
}

/**
 * The owned `thread`'s message queue, for this request: every change answers the queue as it now
 * stands (`{ items }`), and the app's refusals come back as HTTP answers (404 gone, 409 being sent
 * or 20 waiting, 400 naming what to fix).
 */
export function threadQueue(event: H3Event, thread: ChatThread) {
  async function onQueue<T>(work: (queue: MessageQueue) => Promise<T>): Promise<T> {
    try {
      return await work(useMessageQueue())
    } catch (error) {
      throwHttpError(event, error)
    }
  }
  return {
    /** The queued messages, first to go first. */
    list: (): Items => onQueue(async queue => ({ items: await queue.list(thread.id) })),
    /** Lines up the body's message (`content`, `model`, `tools`); the person's own key (`X-OpenRouter-Key`) is kept sealed until it is sent. */
    add: async (): Items => {
      const input = await readJsonBody(event, queueMessageSchema)
      return onQueue(async queue => ({ items: await queue.add(thread, input, userApiKeyOf(event)) }))
    },
    /** Puts the waiting messages in the body's `order`. */
    reorder: async (): Items => {
      const { order } = await readJsonBody(event, queueOrderSchema)
      return onQueue(async queue => ({ items: await queue.reorder(thread, order) }))
    },
    /** New text (`content`) for a waiting message. */
    edit: async (id: string): Items => {
      const { content } = await readJsonBody(event, queueEditSchema)
      return onQueue(async queue => ({ items: await queue.edit(thread, id, content) }))
    },
    /** Takes a waiting message out. */
    remove: (id: string): Items => onQueue(async queue => ({ items: await queue.remove(thread, id) })),
    /** "Send now": handed to the running answer (`steered`), or sent at once when none runs (`sent`). */
    sendNow: (id: string): Promise<{ steered: true } | { sent: SentThreadMessage }> => onQueue(queue => queue.sendNow(thread, id)),
  }
}
