/**
 * Sending a message in a thread: the user's turn is stored and the answer starts as a background
 * job, recorded as an assistant message that carries the job id (its text is written back when
 * the job ends, by the runtime's `onJobFinished`).
 */
import type { ServerConfig } from '../config/server-config'
import type { BackgroundJobManager, JobPrincipal } from '../jobs/manager'
import { resolveChatEndpoint } from '../models/chat-endpoint'
import { checkMessageQuota } from '../stores/quotas'
import type { ThreadStore } from '../stores/threads/thread-store'
import { threadHistory } from './history'
import { titleFromMessage } from './titles'
import type { ChatThread, SentThreadMessage } from '../../../shared/types/thread'
import { z } from 'zod'
import { assertClientToolsFree, clientToolsSchema } from '../tools/client-tools'

/** What the composer sends (`POST /api/threads/:id/messages`). */
export const threadMessageSchema = z.object({
  content: z.string().trim().min(1, 'write a message').max(100_000),
  model: z.string().trim().min(1, 'choose a model').max(200),
  /** Server tools to offer; default every enabled one. */
  tools: z.array(z.string().max(64)).max(100).optional(),
  /** Tools this browser runs for the answer (get_user_location, read_clipboard…). */
  clientTools: clientToolsSchema.optional(),
}).strict()

/** What the composer sends. */
export type SendThreadMessageInput = z.output<typeof threadMessageSchema>


/**
 * Sends `input` in `thread` for `input.principal`. Refuses before anything is stored when
 * admission does (its model, caps, rate or budget), the model needs a key nobody gave, or the
 * thread is full (`MissingApiKeyError`, `StorageQuotaError`); a job that then fails to start marks
 * its assistant message as failed and rethrows.
 */
export async function sendThreadMessage(
  dependencies: { jobs: BackgroundJobManager, threads: ThreadStore, config: ServerConfig },
  thread: ChatThread,
  input: SendThreadMessageInput & { principal: JobPrincipal, userApiKey?: string },
): Promise<SentThreadMessage> {
  const { jobs, threads, config } = dependencies
  const earlier = await threads.listMessages(thread.id)
  checkMessageQuota(earlier.length, 2, config.limits)
  assertClientToolsFree(input.clientTools)
  const admission = await jobs.admit(input.principal, { models: [input.model] })
  resolveChatEndpoint(input.model, config, input.userApiKey)
  const messages = threadHistory(earlier, input.content)
  const now = Date.now()
  const userMessage = await threads.appendMessage({ threadId: thread.id, role: 'user', content: input.content, now })
  if (earlier.length === 0 && thread.title === 'New chat') await threads.renameThread(thread.id, titleFromMessage(input.content), now)
  const assistantId = crypto.randomUUID()
  const assistantMessage = await threads.appendMessage({ id: assistantId, threadId: thread.id, role: 'assistant', content: '', model: input.model, status: 'streaming', now: now + 1 })

  try {
    const job = await jobs.startChatJob({
      principal: input.principal,
      threadId: thread.id,
      messageId: assistantId,
      userApiKey: input.userApiKey,
      request: { model: input.model, messages, fields: {}, toolNames: input.tools, ...(input.clientTools?.length ? { clientTools: input.clientTools } : {}) },
    }, admission)
    await threads.updateMessage(assistantId, { jobId: job.id })
    return { userMessage, assistantMessage: { ...assistantMessage, jobId: job.id }, jobId: job.id }
  } catch (error) {
    await threads.updateMessage(assistantId, { status: 'error', error: { message: error instanceof Error ? error.message : 'The answer could not start.' } })
    throw error
  }
}
