/**
 * A conversation's message queue (shared/types/message-queue.ts): what a person sends while an
 * answer runs waits here and starts, on the server, when that answer ends well; "Send now" hands a
 * queued message to the running answer (a steer, read at its next round boundary: jobs/run/chat.ts).
 *
 * Exactly once, across crashes and instances:
 * - a send is claimed first (compare-and-set on the entry, with the ids its question, answer and
 *   job will take); whoever wins sends it. A crash after the claim leaves the entry "sending": the
 *   next start finishes that send with the same ids (what was stored is used again, and a job
 *   already created is not created again: its id is taken), then the entry goes;
 * - a steer is taken into the running answer's conversation and its checkpoint is stored before
 *   the entry goes; a resumed run passes by the entries its checkpoint already has.
 * Nothing leaves the process but the answer's own model requests, which the job layer keeps exactly once.
 */
import { z } from 'zod'
import type { BackgroundJobManager } from '../jobs/manager'
import type { RunSteering } from '../jobs/run/chat'
import type { ServerConfig } from '../config/server-config'
import type { ThreadStore } from '../stores/threads/thread-store'
import type { StoredQueuedMessage } from '../stores/threads/message-queue-store'
import { RefusalError } from '../domain-error'
import { sendWithIds, type AnswerInput } from './send-message'
import { threadPath } from './versions'
import { MAX_QUEUED_MESSAGES, type QueuedMessage } from '../../../shared/types/message-queue'
import type { BackgroundJob } from '../../../shared/types/job'
import type { ChatThread, SentThreadMessage, ThreadMessage } from '../../../shared/types/thread'

/** What the composer queues (`POST /api/threads/:id/queue`). */
export const queueMessageSchema = z.object({
  content: z.string().trim().min(1, 'write a message').max(100_000),
  model: z.string().trim().min(1, 'choose a model').max(200),
  tools: z.array(z.string().max(64)).max(100).optional(),
}).strict()

/** A queued message's new text (`PATCH /api/threads/:id/queue/:item`). */
export const queueEditSchema = z.object({ content: queueMessageSchema.shape.content }).strict()

/** The queue's new order (`PUT /api/threads/:id/queue`): every waiting message's id, once. */
export const queueOrderSchema = z.object({ order: z.array(z.string().max(64)).max(MAX_QUEUED_MESSAGES) }).strict()

/** What a queued send is asked with besides the message: who asks (as admission sees them), and what the thread's answers carry. */
export type QueuedAnswerContext = Omit<AnswerInput, 'model' | 'tools' | 'clientTools' | 'attachments' | 'userApiKey'>

/** What the queue meets the world with. */
export interface MessageQueueOptions {
  threads: ThreadStore
  jobs: BackgroundJobManager
  config: ServerConfig
  /** How the thread's owner asks now (their role, instructions, memories, knowledge); throws when they may not (a disabled account). */
  answering: (thread: ChatThread) => Promise<QueuedAnswerContext>
  /** Seals and opens the person's own API key while their message waits. */
  keys: { seal: (key: string) => string, open: (sealed: string) => string | undefined }
  logger?: { warn: (message: string, error?: unknown) => void }
}

/** A send claimed this long ago and still marked sending was cut short (its sender is gone). */
const STALE_SEND_MS = 30_000
/** Threads picked up after a restart, at most. */
const RECOVERED_THREADS = 1_000

/** Whether the newest answer of the branch on view ended well (a conversation without one counts as well). */
function lastAnswerEndedWell(thread: ChatThread, messages: ThreadMessage[]): boolean {
  const last = threadPath(thread, messages).findLast(message => message.role === 'assistant')
  return !last || last.status === 'complete'
}

/** A queued message as the app sees it (without the sealed key). */
function publicItem({ apiKeyCiphertext: _key, ...item }: StoredQueuedMessage): QueuedMessage {
  return item
}

/** Conversations' queues (see the module comment). */
export class MessageQueue {
  /** Per thread, the start in progress here: starts of one thread never overlap in this process. */
  private readonly starting = new Map<string, Promise<unknown>>()

  constructor(private readonly options: MessageQueueOptions) {}

  /** The thread's queued messages, first to go first. */
  async list(threadId: string): Promise<QueuedMessage[]> {
    return (await this.options.threads.queue.list(threadId)).map(publicItem)
  }

  /**
   * Adds a message to the end of the queue (409 past `MAX_QUEUED_MESSAGES`). When no answer runs and
   * the last one ended well (it ended as this arrived), it starts at once.
   */
  async add(thread: ChatThread, input: z.output<typeof queueMessageSchema>, userApiKey?: string): Promise<QueuedMessage[]> {
    const { queue } = this.options.threads
    const items = await queue.list(thread.id)
    if (items.length >= MAX_QUEUED_MESSAGES) throw new RefusalError(`This conversation already has ${MAX_QUEUED_MESSAGES} messages waiting; send or remove one first.`, 409)
    const now = Date.now()
    await queue.add({
      id: crypto.randomUUID(), threadId: thread.id, userId: thread.userId, content: input.content, model: input.model,
      ...(input.tools ? { tools: input.tools } : {}), ...(userApiKey ? { apiKeyCiphertext: this.options.keys.seal(userApiKey) } : {}),
      position: (items.at(-1)?.position ?? 0) + 1, createdAt: now, updatedAt: now,
    })
    await this.startNext(thread)
    return this.list(thread.id)
  }

  /** New text for a waiting message (404 gone, 409 already being sent or handed to the answer). */
  async edit(thread: ChatThread, id: string, content: string): Promise<QueuedMessage[]> {
    const item = await this.itemOf(thread, id)
    if (item.steerJobId) throw new RefusalError('This message was handed to the running answer; it can no longer be changed.', 409)
    if (!await this.options.threads.queue.update(id, { content })) throw this.alreadySending()
    return this.list(thread.id)
  }

  /** Puts the waiting messages in `order` (each of them once; 400 otherwise). */
  async reorder(thread: ChatThread, order: readonly string[]): Promise<QueuedMessage[]> {
    const { queue } = this.options.threads
    const waiting = (await queue.list(thread.id)).filter(item => !item.sending)
    const ids = new Set(waiting.map(item => item.id))
    if (order.length !== ids.size || new Set(order).size !== order.length || order.some(id => !ids.has(id))) {
      throw new RefusalError('order: list every waiting message of this conversation once (the queue changed meanwhile? read it again).', 400)
    }
    for (const [index, id] of order.entries()) await queue.update(id, { position: index + 1 })
    return this.list(thread.id)
  }

  /** Takes a waiting message out (404 gone, 409 being sent). */
  async remove(thread: ChatThread, id: string): Promise<QueuedMessage[]> {
    const item = await this.itemOf(thread, id)
    if (item.sending) throw this.alreadySending()
    await this.options.threads.queue.remove(id)
    return this.list(thread.id)
  }

  /**
   * "Send now": while an answer runs, the message is handed to it (the model reads it at its next
   * round boundary; if the answer ends first, the message is the next to start); otherwise it is
   * sent at once, even when the queue is paused.
   */
  async sendNow(thread: ChatThread, id: string): Promise<{ steered: true } | { sent: SentThreadMessage }> {
    const item = await this.itemOf(thread, id)
    if (item.sending) throw this.alreadySending()
    const running = await this.runningAnswer(await this.options.threads.listMessages(thread.id))
    if (running) {
      if (!await this.options.threads.queue.update(id, { steerJobId: running, blocked: null })) throw this.alreadySending()
      return { steered: true }
    }
    const sent = await this.startNext(thread, id)
    if (!sent) throw new RefusalError('This message could not start now; see why beside it in the queue.', 409)
    return { sent }
  }

  /** A job ended: a thread's answer that ended well starts the next waiting message; one that did not pauses the queue. */
  async afterAnswer(job: BackgroundJob): Promise<void> {
    if (job.type !== 'chat' || job.request?.subagent) return
    const thread = await this.options.threads.getThread(job.threadId)
    if (!thread || thread.userId !== job.userId) return
    const { queue } = this.options.threads
    // Handed to this answer but not read by it (it ended first): they go next, in their order.
    const items = await queue.list(thread.id)
    const unread = items.filter(item => item.steerJobId === job.id)
    const first = items[0]?.position ?? 0
    for (const [index, item] of unread.entries()) await queue.update(item.id, { steerJobId: null, position: first - unread.length + index })
    if (job.status === 'complete') await this.startNext(thread)
  }

  /** After a restart: sends cut short are finished, and queues whose answer ended well meanwhile go on. */
  async recover(): Promise<number> {
    let started = 0
    for (const threadId of await this.options.threads.queue.threadsWithItems(RECOVERED_THREADS)) {
      const thread = await this.options.threads.getThread(threadId)
      if (!thread) continue
      if (await this.startNext(thread).catch((error) => {
        this.options.logger?.warn(`The queue of conversation ${threadId} could not go on`, error)
        return undefined
      })) started++
    }
    return started
  }

  /** Where `job` (a chat answer of a thread) reads the messages handed to it. */
  steeringFor(job: BackgroundJob): RunSteering | undefined {
    if (job.type !== 'chat' || job.request?.subagent) return undefined
    const { queue } = this.options.threads
    return {
      take: async (given) => {
        const handed = (await queue.list(job.threadId)).filter(item => item.steerJobId === job.id && !item.sending)
        // Already in the run's conversation (a crash came before their entries went): they go now.
        for (const item of handed.filter(item => given.has(item.id))) await queue.remove(item.id)
        return handed.filter(item => !given.has(item.id)).map(item => ({ id: item.id, content: item.content }))
      },
      delivered: async (ids) => {
        for (const id of ids) await queue.remove(id)
      },
    }
  }

  /**
   * Starts the first waiting message (or `id`, when the person says so) unless an answer runs; on
   * its own only after an answer that ended well. Returns what was sent, if anything was.
   */
  private startNext(thread: ChatThread, id?: string): Promise<SentThreadMessage | undefined> {
    const before = this.starting.get(thread.id) ?? Promise.resolve()
    const next = before.catch(() => {}).then(() => this.startNow(thread, id))
    this.starting.set(thread.id, next)
    void next.finally(() => {
      if (this.starting.get(thread.id) === next) this.starting.delete(thread.id)
    }).catch(() => {})
    return next
  }

  private async startNow(thread: ChatThread, id?: string): Promise<SentThreadMessage | undefined> {
    const { queue } = this.options.threads
    const items = await queue.list(thread.id)
    // A send cut short goes first (its sender is gone); one in progress elsewhere is left to it.
    const cutShort = items.find(item => item.sending)
    if (cutShort) {
      if (Date.now() - cutShort.updatedAt < STALE_SEND_MS) return undefined
      return this.send(thread, cutShort)
    }
    const messages = await this.options.threads.listMessages(thread.id)
    if (await this.runningAnswer(messages)) return undefined
    // No answer runs: a message handed to one that ended is an ordinary waiting one now.
    const item = id ? items.find(candidate => candidate.id === id) : items[0]
    if (!item) return undefined
    if (!id && !lastAnswerEndedWell(thread, messages)) return undefined
    const sending = { answerId: crypto.randomUUID(), jobId: crypto.randomUUID() }
    if (!await queue.claim(item.id, sending)) return undefined
    return this.send(thread, { ...item, sending })
  }

  /** Sends a claimed entry with its ids, then takes it out; a refusal before anything was stored lets it wait again, saying why. */
  private async send(thread: ChatThread, item: StoredQueuedMessage): Promise<SentThreadMessage | undefined> {
    const { threads, jobs, config } = this.options
    const { queue } = threads
    const ids = { questionId: item.id, ...item.sending! }
    try {
      const context = await this.options.answering(thread)
      const userApiKey = item.apiKeyCiphertext ? this.options.keys.open(item.apiKeyCiphertext) : undefined
      const sent = await sendWithIds({ jobs, threads, config }, thread, { ...context, content: item.content, model: item.model, ...(item.tools ? { tools: item.tools } : {}), ...(userApiKey ? { userApiKey } : {}) }, ids)
      await queue.remove(item.id)
      return 'alreadyStarted' in sent ? undefined : sent
    } catch (error) {
      const stored = await threads.getMessage(item.id).catch(() => null)
      if (stored) {
        // The question is in the conversation: its answer says why it did not start, and the entry is done.
        await queue.remove(item.id)
      } else {
        await queue.release(item.id, error instanceof Error ? error.message.slice(0, 500) : 'It could not start.')
      }
      this.options.logger?.warn(`A queued message of conversation ${thread.id} did not start`, error)
      return undefined
    }
  }

  /** The job of the answer running among a thread's `messages` now, if one runs. */
  private async runningAnswer(messages: readonly ThreadMessage[]): Promise<string | undefined> {
    for (const message of messages) {
      if (message.role !== 'assistant' || message.status !== 'streaming' || !message.jobId) continue
      const job = await this.options.jobs.store.getJob(message.jobId)
      if (job?.status === 'streaming') return job.id
    }
    return undefined
  }

  private async itemOf(thread: ChatThread, id: string): Promise<StoredQueuedMessage> {
    const item = await this.options.threads.queue.get(id)
    if (!item || item.threadId !== thread.id) throw new RefusalError('This conversation has no such queued message (it may have been sent already).', 404)
    return item
  }

  private alreadySending(): RefusalError {
    return new RefusalError('This message is being sent already.', 409)
  }
}
